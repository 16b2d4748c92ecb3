"""One run per board at a time: a lock per board on this host that names its holder.

Without it, two runs on one board interleave power cycles, and ser2net's kickolduser
hands the console to whichever connected last, silently. The lock is an flock(2) on
<lock dir>/<board>.lock, so it dies with its process (no stale locks after a crash or
kill -9); the file says who holds it. Boards reserved through the coordinator
(labgrid-client reserve/acquire) are locked there across hosts; this lock covers the
runs on one host, where a local environment file needs no coordinator."""
from __future__ import annotations

import errno
import fcntl
import getpass
import os
import socket
import stat
import sys
import time
from pathlib import Path

from boardlab.errors import LabFault


class BoardBusy(LabFault):
    """Another run holds the board."""
    part = "board"


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

    def _open(self) -> int:
        """The lock file, never through a symlink or into a file that is not a plain lock
        file (the lock must not become a write elsewhere: runs are often root). Another
        user's lock file is opened read-only: flock works on it all the same."""
        d = self.path.parent
        if not d.exists():
            d.mkdir(parents=True, exist_ok=True)
            os.chmod(d, 0o1777)   # every user's runs lock here; sticky, as /tmp
        flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | flags, 0o644)
            except PermissionError:
                fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            why = "it is a symbolic link" if e.errno == errno.ELOOP else e.strerror
            raise BoardBusy(f"board {self.board}: cannot use the lock file {self.path}: {why}. "
                            f"Remove it if no run holds the board") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(fd)
            raise BoardBusy(f"board {self.board}: the lock file {self.path} is not a plain file "
                            f"(a link or device); refusing to use it. Remove it if no run holds "
                            f"the board")
        return fd

    def acquire(self):
        """Take the board, or BoardBusy naming who has it. Idempotent."""
        if self.fd is not None:
            return
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise BoardBusy(f"board {self.board} is in use by {self.holder()} (lock {self.path}). "
                            f"Wait for that run to end, or stop it; the lock goes with its "
                            f"process.") from None
        try:   # who holds it: on a file of another user's, that cannot be said
            os.ftruncate(fd, 0)
            os.write(fd, (f"pid {os.getpid()} ({' '.join(sys.argv)[:200]}), user {getpass.getuser()} "
                          f"on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n").encode())
        except OSError:
            pass
        self.fd = fd

    def release(self):
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
