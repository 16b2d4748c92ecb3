"""Boot time, as the study measured it: from the start of loading the kernel (the
U-Boot load command) to `Linux version`, `Freeing unused kernel memory`, the login
prompt and the shell. Each timed by the arrival of the line's first character on the
host (clock: host); repeated --boot-repeats times, the median gated, the spread kept.

Where the kernel stamps its log (printk times), the same milestones are also taken in
the board's own time, `guest_*`: on a virtual board with the deterministic clock those
count instructions and do not depend on the host (boardlab.clocks)."""
import statistics

import pytest

MILESTONES = ("linux_version", "freeing_init", "login", "shell")


def test_boot_milestones(board, gate, request):
    repeats = request.config.getoption("--boot-repeats")
    samples = {m: [] for m in MILESTONES}
    guest = {}
    for _ in range(repeats):
        rec = board.reboot()
        for m in MILESTONES:
            if m not in rec.milestones:
                pytest.fail(f"milestone {m} not reached; console log {rec.log_path}")
            samples[m].append(rec.milestones[m])
        for m, t in rec.guest_milestones.items():
            guest.setdefault(m, []).append(t)
    for m in MILESTONES:
        gate.record("boot_time", m, statistics.median(samples[m]), "s", "lower", samples[m])
    for m, values in guest.items():
        if len(values) == repeats:   # in every boot's log, or not at all
            gate.record("boot_time", f"guest_{m}", statistics.median(values), "s", "lower", values)
    gate.check()
