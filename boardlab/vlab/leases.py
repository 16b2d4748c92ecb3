"""Who is using the virtual lab: a lease per process inside `kept_up` (a test session, a
bench, a sweep, a bisect), so that the last one out takes the lab down, not the first one
that brought it up while another still measures on it. A lease is a file named by the
process's PID and start time (a PID the kernel reuses is no holder); one that outlived
its process is dropped when read. The decision to go down is taken under a lock, so two
users leaving at once neither both stay nor both go."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from pathlib import Path

LEASES = Path("/run/boardlab/vlab-leases")
DOWN_DUE = "down-when-done"     # left by a user that brought the lab up and left it in use


def _start_time(pid: int) -> str | None:
    try:   # field 22 of /proc/PID/stat, after the parenthesised command name
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def take(what: str = "") -> Path:
    """This process's lease: held until release()."""
    LEASES.mkdir(parents=True, exist_ok=True)
    path = LEASES / f"{os.getpid()}-{_start_time(os.getpid())}.json"
    path.write_text(json.dumps({"pid": os.getpid(), "what": what or " ".join(sys.argv)[:200]}) + "\n")
    return path


def release(path: Path):
    path.unlink(missing_ok=True)


def holders() -> list[dict]:
    """The live leases: {pid, what}; stale ones are removed."""
    out = []
    for path in sorted(LEASES.glob("*-*.json")) if LEASES.is_dir() else []:
        pid, start = path.stem.split("-", 1)
        if _start_time(int(pid)) == start:
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(path.read_text()))
        else:
            path.unlink(missing_ok=True)
    return out


def describe(held: list[dict]) -> str:
    return "; ".join(f"pid {h['pid']} ({h['what'][:80]})" for h in held)


@contextlib.contextmanager
def deciding():
    """The lock under which a user leaves: reads the leases and goes down or not."""
    LEASES.mkdir(parents=True, exist_ok=True)
    with open(LEASES / "lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def down_due() -> bool:
    return (LEASES / DOWN_DUE).exists()


def set_down_due(due: bool):
    if due:
        (LEASES / DOWN_DUE).write_text("the lab goes down when its last user leaves\n")
    else:
        (LEASES / DOWN_DUE).unlink(missing_ok=True)
