"""What the image builds share (the virtual board's images, kernels built here, the
bisect's builds): where they are cached, and the mkimage call that wraps a kernel or a
ramdisk for U-Boot with the board's header facts."""
from __future__ import annotations

import os
from pathlib import Path

from ..facts import Board
from .debs import run

CACHE_DIR = Path(os.environ.get("BOARDLAB_CACHE", "/var/cache/boardlab"))


def mkimage(kind, src: Path, dst: Path, board: Board, name):
    m = board.mkimage
    cmd = ["mkimage", "-A", m.arch, "-O", "linux", "-T", kind, "-C", "none", "-n", name]
    if kind == "kernel":
        cmd += ["-a", m.load_addr, "-e", m.entry]
    run(cmd + ["-d", str(src), str(dst)])
