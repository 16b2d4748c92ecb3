#!/usr/bin/env python3
"""LAVA's own health check of a board (jobs/health-checks/, as the server runs it), run
--checks times with lava-run on this host; after each, its figures are read off the job's
log as the arbiter reads them (lava.health.figures_of_log: the banded answers and the
families' tagged raw output, read by their own readers) and kept in a private
board-health history, judged against the board's own level (judge.boardhealth), as the
arbiter keeps and judges a passed check. With --sick-from K the board runs --load
(steady:10: the sick board on demand) from check K on.

    .venv/bin/python bench/lava_health.py --board qemu-arm --checks 10 --sick-from 7

Goal (issue "The board, not the kernel"): LAVA's check measures the health figures, and a
board slowed by its load is found drifting within 2 checks of the slowdown. Host clock for
the times; the figures carry their own clock (guest-deterministic on the virtual boards)."""
import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab import lava  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.judge import boardhealth  # noqa: E402
from boardlab.lava.health import figures_of_log, health_check_job, stage_check_files  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.sharing.placehold import UNSHARED, place_held  # noqa: E402
from boardlab.vlab.boardload import at_switch  # noqa: E402
from boardlab.vlab.host import prepare_if_virtual  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402


def one_check(board, work: Path) -> tuple[int, dict, float]:
    """LAVA's health check once -> (lava-run's status, the figures off its log, host seconds)."""
    files = lava.prepare_run(board, health_check_job(board), work, lava.lab_of(board))
    t0 = time.monotonic()
    with place_held(board, "lava-run") as hold:
        rc, log = lava.lava_run(files, work, int(time.time()) % 1_000_000, echo=lambda *_: None,
                                owner=hold.holder if hold else UNSHARED)
    return rc, figures_of_log(Path(log).read_text(), board.isa), time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--checks", type=int, default=10)
    ap.add_argument("--sick-from", type=int, default=None, metavar="K", help="the load from check K on (0-based)")
    ap.add_argument("--load", default="steady:10")
    args = ap.parse_args()
    board = load_board(args.board)
    history = Path(tempfile.mkdtemp(prefix="boardlab-lava-health-"))
    print(f"host {clocks.this_host()['id']}, board {board.name}, {args.checks} checks, history {history}")
    states = []
    with kept_up(board.lab_host, boards=[board.name]):
        prepare_if_virtual(board)
        stage_check_files(board)
        try:
            for n in range(args.checks):
                if n == args.sick_from:
                    at_switch(board, args.load)
                    print(f"check {n}: the board's load from now on: {args.load}")
                rc, figures, took = one_check(board, history / f"check-{n:02d}")
                h = boardhealth.record(board, board.images.default_kernel, figures, directory=history)
                states.append(h.state)
                print(f"check {n}: lava-run {'complete' if rc == 0 else f'status {rc}'} in {took:.0f} s; "
                      + ", ".join(f"{k} {v:g}" for k, v in figures.items()) + f"; board: {h.line()}", flush=True)
        finally:
            if args.sick_from is not None:
                at_switch(board, "none")
    if args.sick_from is not None:
        first = next((n for n, s in enumerate(states) if s == boardhealth.DRIFTING), None)
        well = states[:args.sick_from]
        print(f"drifting first at check {first} (the load from {args.sick_from}): "
              + ("within 2 checks" if first is not None and first - args.sick_from < 2 else "NOT within 2 checks")
              + f"; drifting before the load: {well.count(boardhealth.DRIFTING)} of {len(well)}")


if __name__ == "__main__":
    main()
