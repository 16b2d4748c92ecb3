#!/usr/bin/env python3
"""The sweep's wall time against the sum of its clean builds, on this host: builds of the
next version overlap the measurement of the previous one, so a sweep should cost little
more than its builds. Runs `boardlab kernel sweep` on the given versions from clean (their
build directories removed first; the sources stay cached) into a directory of its own,
and prints per kernel the build and measurement times and the ratio (host clock).

    .venv/bin/python bench/sweep_time.py [VERSION ...]   (default: 6.1.176-1 6.1.187-1 6.12.107-1~deb12u1)

Goal (issue "The study redone on real kernels"): wall <= 1.3 x the sum of its clean builds."""
import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.kernelbuilds.buildenv import CACHE_DIR  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.kernel import sweep  # noqa: E402
from boardlab.kernel.frombuild import default_name  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

VERSIONS = ["6.1.176-1", "6.1.187-1", "6.12.107-1~deb12u1"]
GOAL = 1.3


def figures(state: dict, wall: float) -> str:
    """The line of figures of a finished sweep ({version: sweep.Entry}, its wall seconds):
    the ratio of wall to clean builds only when some build took time (none: every one
    failed before its make, and the line says so)."""
    builds = sum(e.build_s or 0 for e in state.values())
    measures = sum(e.measure_s or 0 for e in state.values())
    ratio = (f"wall / builds = {wall / builds:.2f} (goal <= {GOAL})" if builds
             else f"wall / builds: no build took time (goal <= {GOAL})")
    return (f"{len(state)} kernels, wall {wall:.0f} s; clean builds {builds:.0f} s, measurements "
            f"{measures:.0f} s (serial would be {builds + measures:.0f} s); {ratio}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="*", default=VERSIONS, metavar="VERSION",
                    help=f"Debian linux-source versions (default: {' '.join(VERSIONS)})")
    versions = ap.parse_args().versions
    board = load_board("qemu-arm")
    fragment = ROOT / "kernels" / "virt-nfs" / "qemu-arm.config"
    for v in versions:   # from clean: a sweep's builds are first builds of their versions
        shutil.rmtree(CACHE_DIR / "kbuild" / f"{board.name}-{default_name('virt-nfs', v)}", ignore_errors=True)
    out = Path(tempfile.mkdtemp(prefix="boardlab-sweep-"))
    try:
        with kept_up("vlab", boards=(board.name,)):
            t0 = time.monotonic()
            state = sweep.sweep(board, versions, out, fragment, lab=None)
            wall = time.monotonic() - t0
        print(sweep.summary(state), end="")   # (it reads each kernel's run under out)
        print(f"host {clocks.this_host()['id']} (host clock): {figures(state, wall)}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if all(e.status == "measured" for e in state.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
