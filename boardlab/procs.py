"""Processes this project started, known by PID."""
from __future__ import annotations

from pathlib import Path


def running(pid: int) -> bool:
    """Alive and not a zombie. A daemon started by an earlier command is init's child
    once it exits, and init may take seconds to reap it; a zombie has stopped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"   # the state follows "(comm) ", spaces and all
