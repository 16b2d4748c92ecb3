"""What the image builds share (the virtual board's images, kernels built here, the
bisect's builds): where they are cached, and the mkimage call that wraps a kernel or a
ramdisk for U-Boot with the board's header facts."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from boardlab.errors import LabFault
from boardlab.facts.board import Board

CACHE_DIR = Path(os.environ.get("BOARDLAB_CACHE", "/var/cache/boardlab"))


class ImageBuildError(LabFault):
    part = "images"


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    except FileNotFoundError:
        raise ImageBuildError(f"{cmd[0]}: not installed (run scripts/setup-host.sh)") from None
    except subprocess.CalledProcessError as e:
        raise ImageBuildError(f"{' '.join(map(str, cmd))} failed ({e.returncode}):\n"
                              f"{(e.stderr or e.stdout).strip()}") from None


def mkimage(kind, src: Path, dst: Path, board: Board, name):
    m = board.mkimage
    cmd = ["mkimage", "-A", m.arch, "-O", "linux", "-T", kind, "-C", "none", "-n", name]
    if kind == "kernel":
        cmd += ["-a", m.load_addr, "-e", m.entry]
    # the header's time is the payload's, not the build's: an image made again of the same
    # kernel is the same file (its digest is part of the kernel's identity, measure.kernelid)
    run(cmd + ["-d", str(src), str(dst)], env={**os.environ, "SOURCE_DATE_EPOCH": str(int(src.stat().st_mtime))})
