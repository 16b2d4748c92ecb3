"""The arbiter as a daemon (`python -m boardlab.lab.arbiterd`): its start, its signals and
its stop.

Two stops, told apart by their signal:
- SIGTERM, the arbiter alone stops (systemd's stop or restart, an admin): LAVA's jobs go
  on. A place whose board runs a LAVA job stays LAVA's, or a person could power-cycle
  the board mid-job (a normal stop freed qemu-arm-noisy's place for 3 s during its health
  check); each is said, with who frees it: this stop waits for the job, polling LAVA
  every round's interval up to --stop-wait seconds, and releases the place as the job
  ends; past that, the next arbiter (it keeps a place while a job runs, as always).
  Every other place is released at once. A board released so is set aside first
  (Maintenance): LAVA powers only boards whose place it holds (lab.powerguard), so
  its jobs wait for the next arbiter instead of failing on a freed board.
- SIGINT, the LAVA server itself goes down (`boardlab lava server down`): its jobs end
  with it, so every place is released at once.
On SIGINT what the arbiter set aside is given back on boards no person holds or is
allocated (their entries stay for the next start; on SIGTERM all stay, for the next
arbiter to give back once it holds the places again), and the state file says which places
LAVA still holds (a coordinator restart gives it those, and only those)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from boardlab.lab import rules
from boardlab.lab.arbiter import POLL_S, Arbiter
from boardlab.lab.listings import parse_devices, parse_places
from boardlab.lava.errors import LavaError
from boardlab.lava.server import lavacli

STOP_WAIT_S = 1800.0   # a LAVA job's own timeouts end it well within this


def devices_of(a: Arbiter) -> dict:
    """LAVA's devices ({} when LAVA does not answer: then nothing is known to run, and
    nothing is kept from people)."""
    try:
        return parse_devices(lavacli(a.identity, "devices", "list", "--all", "--json"))
    except (LavaError, subprocess.SubprocessError, OSError, ValueError) as e:
        a.echo(f"arbiter: LAVA does not answer ({str(e).splitlines()[0] if str(e) else e}): "
               f"no job known to run")
        return {}


def running_jobs(a: Arbiter, devices: dict | None = None) -> dict:
    """{board: its running LAVA job} of the arbiter's boards."""
    devices = devices_of(a) if devices is None else devices
    return {b: d["current_job"] for b, d in devices.items() if b in a.boards and d.get("current_job")}


def _aside_while_stopped(a: Arbiter, board: str, place: dict, devices: dict) -> None:
    """A place the arbiter alone stopping gives up: the board set aside first (Maintenance,
    as for a person's hold), for LAVA powers only a board whose place it holds
    (boardlab.lab.powerguard): a job it started on a freed board would fail, not wait. The
    next arbiter takes the place back and gives the health back (or an admin's stands)."""
    health = (devices.get(board) or {}).get("health", "")
    if place.get("acquired") == a.ours and board not in a.aside and health in rules.USABLE:
        try:
            a._set_aside(board, rules.aside_entry(health))
            a.echo(f"{board}: Maintenance while LAVA's arbiter is stopped: LAVA starts nothing on a "
                   f"board it does not hold (the next arbiter gives it back)")
        except (LavaError, subprocess.SubprocessError, OSError) as e:
            a.echo(f"{board}: not set aside ({str(e).splitlines()[0] if str(e) else e}): released as it is")


def _give_back_one(a: Arbiter, board: str, place: dict, why: str, restore: bool = True) -> None:
    if place.get("acquired") == a.ours:
        a._client("release", place=board)
        a.echo(f"{board}: released: {why}")
    if not restore:
        return
    if board in a.aside and place.get("acquired") in (None, a.ours) and not place.get("reservation"):
        try:
            a.restore(board)
        except (LavaError, OSError, ValueError) as e:   # who changed it last is not known: nothing undone
            a.echo(f"{board}: LAVA's device log not read ({str(e).splitlines()[0] if str(e) else e}): "
                   f"left in Maintenance, its entry kept for the next start")
    elif board in a.aside:
        a.echo(f"{board}: {place.get('acquired') or 'a reservation'} has it: left in Maintenance")


def give_back(a: Arbiter, wait_s: float = 0.0, now=lambda: True, poll: float = POLL_S,
              clock=time.monotonic, sleep=time.sleep) -> dict:
    """The arbiter's stop; now(): the LAVA server goes down (every place released at once),
    else a place whose job runs is kept until its job ends or wait_s passes. Returns
    {board: job} of the places still kept for LAVA."""
    places = parse_places(a._client("-v", "places").stdout)
    alone = not now()   # the arbiter alone stops: LAVA's jobs go on, its free boards set aside
    devices = devices_of(a) if alone else {}
    jobs = running_jobs(a, devices) if alone else {}
    kept = {b: j for b, j in jobs.items() if (places.get(b) or {}).get("acquired") == a.ours}
    for board, job in kept.items():
        a.echo(f"{board}: kept for LAVA job {job}, which runs on it: this stop releases it when the "
               f"job ends (it waits up to {wait_s:g} s; past that, the next arbiter does)")
        if not a._job(job).get("health_check"):   # a check's result is not lost (rules.decide)
            _aside_while_stopped(a, board, places.get(board) or {}, devices)   # nothing new after it
    for board in a.boards:
        if board not in kept:
            if alone:
                _aside_while_stopped(a, board, places.get(board) or {}, devices)
            _give_back_one(a, board, places.get(board) or {}, "LAVA's arbiter stops", restore=not alone)
    deadline = clock() + wait_s
    while kept and not now() and clock() < deadline:
        sleep(poll)
        devices = devices_of(a)
        jobs = running_jobs(a, devices)
        for board in [b for b, job in kept.items() if jobs.get(b) != job]:
            places = parse_places(a._client("-v", "places").stdout)
            _aside_while_stopped(a, board, places.get(board) or {}, devices)
            _give_back_one(a, board, places.get(board) or {}, f"LAVA job {kept.pop(board)} ended; "
                                                               f"LAVA's arbiter stops", restore=False)
    if now() and kept:
        places = parse_places(a._client("-v", "places").stdout)
        for board in list(kept):
            _give_back_one(a, board, places.get(board) or {}, f"the LAVA server stops: job {kept.pop(board)} "
                                                               f"ends with it")
    for board, job in kept.items():
        a.echo(f"{board}: still LAVA's after {wait_s:g} s: job {job} runs; the next arbiter releases it")
    a._save({**a.state.get("round", {}), "held": sorted(kept)})   # what a coordinator restart keeps
    return kept


def place_tags(board: str) -> dict:
    """The place's tags, as the coordinator has them (places/<host>/places.yaml)."""
    from boardlab import yamltext
    from boardlab.facts.board import PLACES_DIR, load_board
    places = yamltext.load((PLACES_DIR / load_board(board).lab_host / "places.yaml").read_text()) or {}
    return places[board]["tags"]


def stamped(line: str) -> None:
    """A log line with its local date and time: a lab's log is read against the power switch's."""
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", flush=True)


def main(argv=None) -> int:
    import argparse
    import signal
    from boardlab.facts.labfacts import load_lab
    ap = argparse.ArgumentParser(description="LAVA's boards held at the labgrid coordinator; people reserve them")
    ap.add_argument("boards", nargs="+")
    ap.add_argument("--identity", default=None, help="lavacli identity (an admin's: it sets device health)")
    ap.add_argument("--state", required=True, help="where what it set aside is kept")
    ap.add_argument("--poll", type=float, default=POLL_S, help=f"seconds between rounds (default {POLL_S:g})")
    ap.add_argument("--stop-wait", type=float, default=STOP_WAIT_S,
                    help=f"on SIGTERM, how long the stop waits for running LAVA jobs (default {STOP_WAIT_S:g} s)")
    args = ap.parse_args(argv)
    arbiter = Arbiter(load_lab().coordinator, args.identity, {b: place_tags(b) for b in args.boards},
                      Path(args.state), echo=stamped)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append("arbiter"))
    signal.signal(signal.SIGINT, lambda *_: stopping.append("server"))   # LAVA goes down with its jobs
    arbiter.echo(f"arbiter: boards {', '.join(args.boards)} at {arbiter.coordinator}, as {arbiter.ours}, "
                 f"pid {os.getpid()}")
    arbiter.run(stop=lambda: bool(stopping), poll=args.poll)
    give_back(arbiter, args.stop_wait, now=lambda: "server" in stopping, poll=args.poll)
    return 0


if __name__ == "__main__":
    sys.exit(main())
