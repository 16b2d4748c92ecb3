"""A virtual board's images on its lab host, made ready at the board's first use (not
at `vlab up`): built, or found up to date, under a lock (two runs starting on one board
build once), and the board's NFS root kept in step with them."""
from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.facts.board import Board
from boardlab.log import progress
from boardlab.images.images import build_images, sync_tree


@contextlib.contextmanager
def build_lock(board: Board):
    """Held while a board's images are built or checked: a second run waits for the first."""
    locks = CACHE_DIR / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"images-{board.name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def build_locked(board: Board, force: bool = False) -> Path:
    """The board's images built, or found up to date, under its lock (`vlab build`): a
    board's first use meanwhile waits, then finds them built."""
    with build_lock(board):
        return build_images(board, force=force)


def sync_nfs_root(board: Board, images: Path, powered_on: bool) -> bool:
    """Refresh the board's NFS root from its images when they changed, unless the
    board is running (it may have that root mounted); True when refreshed."""
    export = Path(board.nfs.export)
    want = (images / ".inputs").read_text()
    stamp = export / ".boardlab-inputs"
    if stamp.exists() and stamp.read_text() == want:
        return False
    if powered_on:
        progress(f"  NFS root {export}: out of date, but {board.name} is powered on: "
                 f"left as it is (power the board off and run up again)")
        return False
    progress(f"  NFS root {export}: refreshing from {images / 'nfsroot'}")
    sync_tree(images / "nfsroot", export)
    stamp.write_text(want)
    return True


def ready(board: Board, powered_on: bool) -> bool:
    """The board's images built (when their inputs changed), its TFTP directory there
    and its NFS root in step; True when the NFS root was refreshed (the NFS server's
    cache then holds the old tree's handles)."""
    with build_lock(board):
        images = build_images(board)
        Path(board.tftp.dir).mkdir(parents=True, exist_ok=True)
        return sync_nfs_root(board, images, powered_on)
