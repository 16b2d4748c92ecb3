"""Where LAVA's files are (this project's generated ones under jobs/, LAVA's own), and
the names boardlab gives what it generates."""
from __future__ import annotations

from pathlib import Path

from boardlab.facts.board import PROJECT_ROOT, Board

JOBS_DIR = PROJECT_ROOT / "jobs"
DEVICE_TYPES_DIR = JOBS_DIR / "device-types"
DEVICES_DIR = JOBS_DIR / "devices"
TESTDEFS_DIR = JOBS_DIR / "testdefs"
SCHEDULE = JOBS_DIR / "schedule.yaml"
LAVA_DEVICE_TYPES = Path("/usr/share/lava-server/device-types")
JOB_OUTPUT = Path("/var/lib/lava-server/default/media/job-output")   # LAVA's job logs
SYSTEM_PYTHON = "/usr/bin/python3"    # LAVA's own modules live in Debian's python3
GENERATED = "{{# Generated from boards/{name}.yaml by `boardlab gen`: edit the facts, not this file. #}}\n"


def device_type_name(board: Board) -> str:
    return f"boardlab-{board.name}"
