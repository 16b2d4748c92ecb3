"""Kernels a virtual board boots that Debian does not package (powerpc's): built here
from Debian's linux-source with the fragment the board's facts name
(`images.kernels.<name>.config`), incrementally in a build directory of its own (no
ccache: a cold cache made the first build a quarter slower, and this one tree is all it
would serve), and rebuilt only when the fragment or the source changes."""
from __future__ import annotations

import hashlib
import shutil
import threading
import time
from pathlib import Path

from boardlab.kernelbuilds import kbuild, sources
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.facts.board import PROJECT_ROOT, Board
from boardlab.log import progress

PROGRESS_EVERY_S = 30


# v2: built reproducibly (KBUILD_BUILD_TIMESTAMP from the source) with an identity beside it
BUILDER = "configkernels v2"


def kernel_inputs(fragment: Path, src: sources.Source) -> str:
    h = hashlib.sha256(BUILDER.encode() + fragment.read_bytes())
    st = src.tarball.stat()
    h.update(f"{src.label} {st.st_size} {st.st_mtime}".encode())
    return h.hexdigest()


def _compiled(log: Path) -> int:
    try:
        return sum(1 for ln in log.read_text(errors="replace").splitlines()
                   if ln.startswith("  CC "))
    except FileNotFoundError:
        return 0


def report_progress(log: Path, what: str, done: threading.Event):
    t0 = time.monotonic()
    while not done.wait(PROGRESS_EVERY_S):
        progress(f"  {what}: {time.monotonic() - t0:.0f} s, {_compiled(log)} files compiled")


def build_config_kernels(board: Board, out: Path):
    """Build each of the board's kernels that has a config, unless up to date in out."""
    for name, k in board.images.kernels.items():
        if not k.config:
            continue
        fragment = PROJECT_ROOT / k.config
        uimage = out / k.uimage
        stamp = out / f".{k.uimage}.inputs"
        src = sources.of_kernel(name)   # its pin's linux-source version, or the installed one
        want = kernel_inputs(fragment, src)
        if uimage.exists() and stamp.exists() and stamp.read_text() == want:
            continue
        work = CACHE_DIR / "kbuild" / f"{board.name}-{name}-image"
        if (work / ".boardlab-source").exists() and (work / ".boardlab-source").read_text() != src.label:
            shutil.rmtree(work)   # another source: nothing of the last build is reused
        work.mkdir(parents=True, exist_ok=True)
        (work / ".boardlab-source").write_text(src.label)
        what = f"kernel {name} for {board.name}"
        progress(f"building {what} from {k.config} ({src.label}; log {work / 'build.log'})")
        done = threading.Event()
        ticker = threading.Thread(target=report_progress, args=(work / "build.log", what, done),
                                  daemon=True)
        ticker.start()
        try:
            result = kbuild.build_tree(board, kbuild.source_tree(src), work, fragment, uimage,
                                       ccache=False, flavour=name)
        finally:
            done.set()
        stamp.write_text(want)
        progress(f"  {uimage.name}: {result.release}, {uimage.stat().st_size} bytes, "
                 f"{result.real_s:.0f} s")
