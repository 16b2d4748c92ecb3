"""Host services this project runs: started once, ready, stopped by their PID (daemons), and the host's PostgreSQL cluster (postgres)."""
