"""The arbiter beside the local LAVA server (boardlab.lab.arbiter): its command, under a
supervisor (an arbiter that crashed comes back; its state file says where it was), and
when its last round ended, from that state file: `lava server up` starts the scheduler
only after the first round, once LAVA holds its boards' places (a job left queued would
otherwise start on a board a person holds)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from boardlab.services.supervisor import supervised

FIRST_ROUND_S = 60   # a round is three listings and a call per board to change: seconds


def command(identity: str, state_file: Path, boards: list[str]) -> list[str]:
    return supervised("arbiter", [sys.executable, "-m", "boardlab.lab.arbiterd", "--identity", identity,
                                  "--state", str(state_file), *boards])


def last_round_at(state_file: Path) -> float:
    """When the arbiter's last round ended (time.time()), 0 before any."""
    try:
        return float(json.loads(Path(state_file).read_text())["round"]["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
