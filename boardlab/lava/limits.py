"""LAVA's own limits that shape a job and a device type."""
from __future__ import annotations

# LAVA's ShellCommand searches the last 4000 characters it read (lava_dispatcher/shell.py),
# and a single read of that many or more replaces what came before: base.jinja2's default
# read size of 4092 loses a prompt split between a short read and a long one (a kernel's
# log burst while LAVA is busy). Reads of 2000 (pexpect's default) keep 2000 before them.
LAVA_SEARCH_WINDOW = 4000
SPAWN_MAXREAD = 2000
BOOT_ATTEMPTS = 2       # LAVA's failure_retry on the boot: see render_job
RETRY_SLACK_S = 10      # per attempt: power cycle, connection, LAVA's pause between tries
