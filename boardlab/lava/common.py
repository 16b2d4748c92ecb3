"""What every part of boardlab.lava shares: where the LAVA files are, the suites and
their test definitions, LAVA's own limits that shape the jobs."""
from __future__ import annotations

from pathlib import Path

from boardlab.errors import BoardlabError, InputError
from boardlab.facts.board import PROJECT_ROOT, Board

JOBS_DIR = PROJECT_ROOT / "jobs"
DEVICE_TYPES_DIR = JOBS_DIR / "device-types"
DEVICES_DIR = JOBS_DIR / "devices"
TESTDEFS_DIR = JOBS_DIR / "testdefs"
SCHEDULE = JOBS_DIR / "schedule.yaml"
LAVA_DEVICE_TYPES = Path("/usr/share/lava-server/device-types")
SYSTEM_PYTHON = "/usr/bin/python3"    # LAVA's own modules live in Debian's python3
GENERATED = "{{# Generated from boards/{name}.yaml by `boardlab gen`: edit the facts, not this file. #}}\n"

# a suite is one family of metrics, by the catalogue's name (boardlab.measure.catalogue.
# FAMILIES), as testsuites/test_<family>.py is on the pytest side: suite -> its test
# definition (what the board runs); boot_time has none: it is timed from the log, on the host
SUITES = {
    "boot_time": None,
    "memory": "memory/memory.yaml",
    "lmbench": "lmbench/lmbench.yaml",
    "jitter": "jitter/jitter.yaml",
}
DEFAULT_SUITES = ("boot_time", "memory", "lmbench", "jitter")
# LAVA's ShellCommand searches the last 4000 characters it read (lava_dispatcher/shell.py),
# and a single read of that many or more replaces what came before: base.jinja2's default
# read size of 4092 loses a prompt split between a short read and a long one (a kernel's
# log burst while LAVA is busy). Reads of 2000 (pexpect's default) keep 2000 before them.
LAVA_SEARCH_WINDOW = 4000
SPAWN_MAXREAD = 2000
BOOT_ATTEMPTS = 2       # LAVA's failure_retry on the boot: see render_job
RETRY_SLACK_S = 10      # per attempt: power cycle, connection, LAVA's pause between tries
# LAVA's own baselines where its figures differ (memory: its overlay is in the ramdisk)
HARNESS = "lava"



class LavaError(BoardlabError):
    """A LAVA job that cannot be rendered, run or read: names the cause."""


class LavaInputError(LavaError, InputError):
    """A LAVA request the board cannot take, or a file that is not there (exit 2)."""


def device_type_name(board: Board) -> str:
    return f"boardlab-{board.name}"

