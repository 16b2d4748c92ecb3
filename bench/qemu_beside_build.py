#!/usr/bin/env python3
"""The board's QEMU beside the suites' kernel build: how much a guest-bound run on the
board slows while the build runs, with the build on every core (as before 2026-12-02)
and as `--build-alongside` starts it now (off the first core, which QEMU keeps:
boardlab.kernelbuilds.alongside.build_cores, until the build suite waits for it), the two interleaved run by run in one
build so the host's drift hits both alike; the board alone before and after the build.

    .venv/bin/python bench/qemu_beside_build.py [--board qemu-arm] [--seconds 200]

The guest run is a shell loop and 150 forks (`LOOP`), its host seconds timed from the
console; the build is the build suite's (clean, nice 19, SCHED_IDLE), stopped after
--seconds. Prints every run and, per condition, the median and the ratio to the other
condition round by round. Host clock; brings the virtual lab up if it is not (and down
again at the end). Run it with nothing else busy on the host."""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.facts.labfacts import default_board  # noqa: E402
from boardlab.kernelbuilds import alongside  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

LOOP = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done; for j in $(seq 150); do /bin/true; done"
EVERY_CORE, OFF_FIRST = "build on every core", "build off the first core (--build-alongside)"


def summary(runs: dict[str, list[float]]) -> list[str]:
    """Per condition its median; for the two build conditions, run by run (they alternate),
    the ratio every-core / off-first-core and how many rounds the second was faster."""
    lines = [f"{c}: median {statistics.median(v):.2f} s over {len(v)} ({', '.join(f'{x:.2f}' for x in v)})"
             for c, v in runs.items() if v]
    pairs = list(zip(runs.get(EVERY_CORE, []), runs.get(OFF_FIRST, [])))
    if pairs:
        ratios = [a / b for a, b in pairs]
        lines.append(f"{EVERY_CORE} / {OFF_FIRST}, round by round: median {statistics.median(ratios):.3f} "
                     f"({min(ratios):.3f}-{max(ratios):.3f}); off the first core faster in "
                     f"{sum(r > 1 for r in ratios)} of {len(ratios)} rounds")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default=default_board(), help="the virtual board (lab/<board>.yaml)")
    ap.add_argument("--seconds", type=int, default=200, help="how long the build runs beside the board")
    ap.add_argument("--alone", type=int, default=3, help="runs alone, before and after the build")
    args = ap.parse_args()
    board, every = load_board(args.board), os.sched_getaffinity(0)
    runs = {"alone": [], EVERY_CORE: [], OFF_FIRST: []}
    print(f"host {clocks.this_host()['id']} ({len(every)} cores), board {board.name}, host clock", flush=True)

    with kept_up("vlab", boards=[board.name]), board_session(
            ROOT / f"lab/{board.name}.yaml", ROOT / f"results/bench-beside-build-{board.name}") as (strategy, shell):
        strategy.select(kernel="", root="", ramdisk="")
        strategy.transition("shell")
        sh = shell()

        def timed(cond):
            t0 = time.monotonic()
            sh.run_check(LOOP, timeout=600)
            runs[cond].append(time.monotonic() - t0)
            print(f"  {cond}: {runs[cond][-1]:.2f} s", flush=True)

        for _ in range(args.alone):
            timed("alone")
        log = ROOT / f"results/bench-beside-build-{board.name}/kernel-build.log"
        build = alongside.BuildAlongside(board, alongside.configs_of(board.name), log)
        try:
            time.sleep(20)   # past the configure step, into the compilers
            end = time.monotonic() + args.seconds
            while time.monotonic() < end and build.running():
                for cond, cores in ((EVERY_CORE, every), (OFF_FIRST, alongside.build_cores(every))):
                    build.place(cores)
                    time.sleep(1)
                    build.place(cores)   # the compilers started meanwhile
                    timed(cond)
        finally:
            build.stop()
        for _ in range(args.alone):
            timed("alone")
    print("\n" + "\n".join(summary(runs)))


if __name__ == "__main__":
    main()
