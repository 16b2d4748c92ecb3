"""Processes this project started, known by PID."""
from __future__ import annotations

from pathlib import Path


def state_and_group(pid: int | str) -> tuple[str, int] | None:
    """(state letter, process group) from /proc/<pid>/stat, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, _ppid, pgrp = stat[stat.rindex(")") + 2:].split(" ", 3)[:3]   # after "(comm) ", spaces and all
    return state, int(pgrp)


def running(pid: int) -> bool:
    """Alive and not a zombie. A daemon started by an earlier command is init's child
    once it exits, and init may take seconds to reap it; a zombie has stopped."""
    got = state_and_group(pid)
    return got is not None and got[0] != "Z"


def group_members(pgid: int) -> list[int]:
    """The PIDs of the group (its leader included) that are alive and not zombies
    (kill(-pgid, 0) counts zombies, which init here reaps seconds late)."""
    return [int(entry.name) for entry in Path("/proc").glob("[0-9]*")
            if (got := state_and_group(entry.name)) and got[1] == pgid and got[0] != "Z"]


def group_alive(pgid: int) -> bool:
    return bool(group_members(pgid))
