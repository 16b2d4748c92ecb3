"""History: what the lab measured, remembered. A results database (Linaro's SQUAD, run by
the project itself on 127.0.0.1, by PID) with a group and a project per lab, the runs
submitted to it, and the change points found in its series."""
