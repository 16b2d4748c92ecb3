"""One run per board at a time: a lock per board on this host that names its holder.

Without it, two runs on one board interleave power cycles, and ser2net's kickolduser
hands the console to whichever connected last, silently. The lock is an flock(2) on
<lock dir>/<board>.lock, so it dies with its process (no stale locks after a crash or
kill -9); the file says who holds it. Boards reserved through the coordinator
(labgrid-client reserve/acquire) are locked there across hosts; this lock covers the
runs on one host, where a local environment file needs no coordinator."""
from __future__ import annotations

import fcntl
import getpass
import os
import socket
import sys
import time
from pathlib import Path

from .errors import BoardlabError


class BoardBusy(BoardlabError):
    """Another run holds the board."""


def lock_dir() -> Path:
    return Path(os.environ.get("BOARDLAB_LOCK_DIR") or "/run/lock/boardlab")


class BoardLock:
    def __init__(self, board: str, directory: Path | None = None):
        self.board = board
        self.path = (directory or lock_dir()) / f"{board}.lock"
        self.fd = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def holder(self) -> str:
        try:
            return self.path.read_text().strip() or "an unnamed process"
        except OSError:
            return "an unknown process"

    def acquire(self):
        """Take the board, or BoardBusy naming who has it. Idempotent."""
        if self.fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise BoardBusy(f"board {self.board} is in use by {self.holder()} (lock {self.path}). "
                            f"Wait for that run to end, or stop it; the lock goes with its "
                            f"process.") from None
        os.ftruncate(fd, 0)
        os.write(fd, (f"pid {os.getpid()} ({' '.join(sys.argv)[:200]}), user {getpass.getuser()} "
                      f"on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n").encode())
        self.fd = fd

    def release(self):
        if self.fd is None:
            return
        os.ftruncate(self.fd, 0)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
