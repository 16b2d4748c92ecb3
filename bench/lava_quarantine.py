#!/usr/bin/env python3
"""A board that drifts, quarantined through a live LAVA server: LAVA's own health checks,
their figures read off each job's log and judged against the board's own history by the
arbiter (lab.arbiter.Arbiter.kept_check: lava.health.figures_of_log, judge.boardhealth),
the drifting board set Maintenance with its reason, then its new level accepted.

`lava server up` (a private server: its own run directory and port, the vlab lab host's
worker and arbiter), then WELL health checks of the board as it is, then the board made
sick at its power switch (`--load`, from its next power-on: steady:10 is a process on the
board busy 10 ms of every 100 ms of its own time) and health checks until LAVA has the
board in Maintenance or SICK checks have run. Each check is started the way LAVA starts one
(the device set Unknown) and waited for; its line: job, LAVA's health, host seconds, the
judged figures, the history's verdict. Then the level accepted (boardhealth.accept and
LAVA told, as `boardlab lab accept` does), the load taken off, the server let down. The
board's history file is put back as it was at the end, also on an error or a stop.

Figures: lmbench's latencies and guest_login on the guest-deterministic clock, free's on
none, the check's seconds on the host clock (this host).

    .venv/bin/python bench/lava_quarantine.py [--board qemu-arm] [--well 7] [--sick 2]
        [--load steady:10]"""
import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lava_up_health import _epoch, checks_since  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.judge import boardhealth  # noqa: E402
from boardlab.lab import healthlog  # noqa: E402
from boardlab.lava import server as lava  # noqa: E402
from boardlab.lava.localserver import LocalLavaServer  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.net import free_port  # noqa: E402
from boardlab.vlab import boardload  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

KEPT_S = 120   # after a check ends: the arbiter's next rounds read its log and keep it


def device(srv, board: str) -> dict:
    return json.loads(lava.lavacli(srv.identity, "devices", "show", board, "--json") or "{}")


def checks_kept(board: str) -> int:
    return sum(1 for e in boardhealth.load(board) if "figures" in e)


def one_check(srv, board: str, timeout: float) -> tuple[dict | None, dict | None]:
    """LAVA's health check started as LAVA starts one, waited for, and the arbiter's record
    of it -> (the job, the history entry it kept; None: not kept within KEPT_S)."""
    kept, t0 = checks_kept(board), time.time()
    lava.lavacli(srv.identity, "devices", "update", board, "--health", "UNKNOWN")
    job, deadline = None, t0 + timeout
    while time.time() < deadline:
        job = checks_since(srv.url, [board], t0).get(board)
        if job and job["state"] == "Finished":
            break
        time.sleep(5)
    if not job or job["state"] != "Finished" or job["health"] != "Complete":
        return job, None
    deadline = time.time() + KEPT_S
    while time.time() < deadline and checks_kept(board) == kept:
        time.sleep(3)
    entries = [e for e in boardhealth.load(board) if "figures" in e]
    return job, entries[-1] if len(entries) > kept else None


def run(srv, board: str, args) -> bool:
    """The checks, well then sick -> whether LAVA had the board in Maintenance in time."""
    for i in range(args.well + args.sick):
        sick = i >= args.well
        if i == args.well:
            print(f"-- the board made sick at its power switch: {boardload.at_switch(load_board(board), args.load)}",
                  flush=True)
        job, entry = one_check(srv, board, args.timeout)
        took = (f"{_epoch(job['end_time']) - _epoch(job['start_time']):.0f} s"
                if job and job.get("start_time") and job.get("end_time") else "-")
        health = boardhealth.health_of(board)
        figures = ", ".join(f"{k.split('.', 1)[1]} {v:g}" for k, v in sorted((entry or {}).get("figures", {}).items()))
        print(f"check {i + 1} ({'sick' if sick else 'well'}): job {job['id'] if job else '-'} "
              f"{job['health'] if job else 'none'} ({took}): {figures or 'not kept'}; "
              f"history: {health.line() if health else '-'}", flush=True)
        if entry is None:
            print("   its figures were not kept: the arbiter's log says why", flush=True)
        dev = device(srv, board)
        if dev.get("health") == "Maintenance":
            print(f"-> LAVA: {board} Maintenance after {i + 1 - args.well} sick check(s): "
                  f"{dev.get('description') or '(no description)'}", flush=True)
            return sick
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--well", type=int, default=boardhealth.REFERENCE_MIN + boardhealth.RECENT)
    ap.add_argument("--sick", type=int, default=boardhealth.RECENT)
    ap.add_argument("--load", default="steady:10")
    ap.add_argument("--timeout", type=float, default=900, help="s for one health check to finish")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # the server, the load and the history put back
    board = args.board
    history = boardhealth.path_of(board)
    work = Path(tempfile.mkdtemp(prefix="bench-lava-quarantine-"))
    saved = work / "history.jsonl"
    if history.exists():
        shutil.move(history, saved)
    print(f"host {this_host()['id']}, {time.strftime('%F %T')}; board {board}: {args.well} well health checks, "
          f"then up to {args.sick} with load {args.load}; a private LAVA server in {work}", flush=True)
    quarantined = False
    try:
        with kept_up("vlab", boards=[board]), LocalLavaServer(work / "server", port=free_port(),
                                                              identity="boardlab-bench", labs=["vlab"]) as srv:
            srv.up([board])
            try:
                quarantined = run(srv, board, args)
                if quarantined:
                    boardhealth.accept(board, "the bench's load taken off")
                    healthlog.tell_lab(board, "", "UNKNOWN", srv.identity, None)
                    print(f"-- accepted: history {boardhealth.health_of(board).line()}; "
                          f"LAVA: {device(srv, board).get('health')}", flush=True)
            finally:
                print(f"-- load: {boardload.at_switch(load_board(board), 'none')}", flush=True)
                srv.down()
    finally:
        history.unlink(missing_ok=True)
        if saved.exists():
            shutil.move(saved, history)
    print(f"\n{board}: {'quarantined' if quarantined else 'NOT quarantined'} through LAVA within "
          f"{args.sick} sick health checks ({time.strftime('%F %T')})")
    return 0 if quarantined else 1


if __name__ == "__main__":
    sys.exit(main())
