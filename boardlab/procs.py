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


def group_alive(pgid: int) -> bool:
    """True while a process of the group is alive and not a zombie (kill(-pgid, 0) counts
    zombies, which init here reaps seconds late: each stop would wait for that)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, _ppid, pgrp = text[text.rindex(")") + 2:].split(" ", 3)[:3]
        if int(pgrp) == pgid and state != "Z":
            return True
    return False
