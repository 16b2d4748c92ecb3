#!/usr/bin/env python3
"""The sweep's wall time against the sum of its clean builds, on this host: builds of the
next version overlap the measurement of the previous one, so a sweep should cost little
more than its builds. Runs `boardlab kernel sweep` on the given versions from clean (their
build directories removed first; the sources stay cached) into a directory of its own,
and prints per kernel the build and measurement times and the ratio (host clock).

    .venv/bin/python bench/sweep_time.py [VERSION ...]   (default: 6.1.176-1 6.1.187-1 6.12.107-1~deb12u1)

Goal (issue "The study redone on real kernels"): wall <= 1.3 x the sum of its clean builds."""
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.build.buildenv import CACHE_DIR  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.kernel import sweep  # noqa: E402
from boardlab.kernel.frombuild import default_name  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402


def main():
    versions = sys.argv[1:] or ["6.1.176-1", "6.1.187-1", "6.12.107-1~deb12u1"]
    board = load_board("qemu-arm")
    fragment = ROOT / "kernels" / "virt-nfs" / "qemu-arm.config"
    for v in versions:   # from clean: a sweep's builds are first builds of their versions
        shutil.rmtree(CACHE_DIR / "kbuild" / f"{board.name}-{default_name('virt-nfs', v)}", ignore_errors=True)
    out = Path(tempfile.mkdtemp(prefix="boardlab-sweep-"))
    with kept_up("vlab", boards=(board.name,)):
        t0 = time.monotonic()
        state = sweep.sweep(board, versions, out, fragment, lab=None)
        wall = time.monotonic() - t0
    print(sweep.summary(state), end="")
    builds = sum(e.build_s or 0 for e in state.values())
    measures = sum(e.measure_s or 0 for e in state.values())
    print(f"host {clocks.this_host()['id']} (host clock): {len(versions)} kernels, wall {wall:.0f} s; clean builds "
          f"{builds:.0f} s, measurements {measures:.0f} s (serial would be {builds + measures:.0f} s); "
          f"wall / builds = {wall / builds:.2f} (goal <= 1.3)")
    shutil.rmtree(out, ignore_errors=True)
    return 0 if all(e.status == "measured" for e in state.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
