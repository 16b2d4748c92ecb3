#!/usr/bin/env python3
"""`lava server up`, then every board's health check, then `lava server down`, N times:
does every health check of a working board pass on this host? (Issue "The shared lab,
round two", goal: 10 times, every check passes; the lab host's `boots_at_once` fact caps
LAVA's concurrent boots on it: its worker's job_limit.)

Each round: `up`, every board set Unknown at once (LAVA checks each before any job: the
most checks a restart can start), waits for one health check per board submitted after
`up` to finish, and `down`. Prints each round's checks (job, health, host seconds) and the tally. Host clock,
this host. Brings the virtual lab up if it is not; its LAVA server is one of its own (a
private run directory, a free port), its workers only the given lab hosts' (default vlab:
a board of another lab host in LAVA's database gets no job from it).

    .venv/bin/python bench/lava_up_health.py [--rounds 10] [--lab vlab] [--boards qemu-arm,qemu-arm-noisy]"""
import argparse
import json
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.labhosts import load_lab_host  # noqa: E402
from boardlab.lava import server as lava  # noqa: E402
from boardlab.lava.localserver import LocalLavaServer  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.net import free_port  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402


def rest(url: str, path: str) -> dict:
    with urllib.request.urlopen(f"{url}api/v0.2/{path}", timeout=10) as r:
        return json.load(r)


def _epoch(stamp: str | None) -> float:
    from datetime import datetime
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if stamp else 0.0


def checks_since(url: str, boards, since: float) -> dict:
    """{board: its first health-check job submitted at or after `since` (epoch s)}."""
    jobs = rest(url, "jobs/?health_check=true&ordering=-id&limit=100")["results"]
    out = {}
    for j in sorted(jobs, key=lambda j: j["id"]):
        b = j.get("actual_device")
        if b in boards and b not in out and _epoch(j.get("submit_time")) >= since - 1:
            out[b] = j
    return out


def one_round(srv, boards, timeout: float) -> tuple[dict, float]:
    """up, each board's first health check after it (waited for), down -> ({board: job}, up's s)."""
    t0 = time.time()
    srv.up(boards)
    up_s = time.time() - t0
    for b in boards:   # every board checked at once, as after a restart with each one due (Bad, or its frequency)
        lava.lavacli(srv.identity, "devices", "update", b, "--health", "UNKNOWN")
    deadline, seen = time.time() + timeout, {}
    while time.time() < deadline:
        seen = checks_since(srv.url, boards, t0)
        if len(seen) == len(boards) and all(j["state"] == "Finished" for j in seen.values()):
            break
        time.sleep(5)
    srv.down()
    return seen, up_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--lab", default="vlab", help="the lab host whose worker runs (comma separated)")
    ap.add_argument("--boards", default="qemu-arm,qemu-arm-noisy")
    ap.add_argument("--timeout", type=float, default=900, help="s for a round's checks to finish")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # the server and the lab let down on a stop
    labs, boards = args.lab.split(","), args.boards.split(",")
    for b in boards:
        if not any(b in load_lab_host(lab).boards for lab in labs):
            sys.exit(f"board {b} is on none of the lab hosts {', '.join(labs)}")
    work = Path(tempfile.mkdtemp(prefix="bench-lava-up-health-"))
    print(f"host {this_host()['id']}, host clock; {args.rounds} rounds of lava server up, one health check a "
          f"board ({', '.join(boards)}), down; workers of {', '.join(labs)}; {work}", flush=True)
    tally = {"Complete": 0}
    with kept_up("vlab", boards=boards), LocalLavaServer(work / "server", port=free_port(), identity="boardlab-bench",
                                                        labs=labs) as srv:
        for i in range(args.rounds):
            t0 = time.time()
            seen, up_s = one_round(srv, boards, args.timeout)
            for b in boards:
                j = seen.get(b)
                health = j["health"] if j and j["state"] == "Finished" else ("not finished" if j else "no check")
                tally[health] = tally.get(health, 0) + 1
                took = (f"{_epoch(j['end_time']) - _epoch(j['start_time']):.0f} s"
                        if j and j.get("start_time") and j.get("end_time") else "-")
                print(f"round {i + 1}: {b}: job {j['id'] if j else '-'}: {health} ({took})", flush=True)
            print(f"round {i + 1}: up in {up_s:.0f} s, whole round {time.time() - t0:.0f} s", flush=True)
    total = args.rounds * len(boards)
    print(f"\n{tally.get('Complete', 0)} of {total} health checks Complete; "
          + ", ".join(f"{h} {n}" for h, n in sorted(tally.items()) if h != "Complete"))
    return 0 if tally.get("Complete", 0) == total else 1


if __name__ == "__main__":
    sys.exit(main())
