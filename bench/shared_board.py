#!/usr/bin/env python3
"""One board, two schedulers: N interleavings of a developer's labgrid hold and LAVA jobs
on qemu-arm, with the local LAVA server and its arbiter (boardlab.lab.arbiter), the
coordinator of the two-host virtual lab. Rounds alternate two orders:

- hold first: the developer reserves and acquires the board, power-cycles it through
  labgrid, a LAVA job is submitted while they hold it, they release it: the job must wait
  and then run;
- job first: a LAVA job runs, the developer reserves during it (`reserve --wait`): the
  reservation must be granted when the job ends, then they power-cycle and release.

A collision is a power action by one side during the other's hold, read from the power
switch's own request log (each request with its source: the developer's labgrid client on
the management host 10.231.0.1, LAVA's worker inside the lab host 10.231.0.11). Printed:
rounds, collisions, failed or lost jobs, reservations granted, how long each side waited.
Host clock (this host, named in the output).

    .venv/bin/python bench/shared_board.py [--rounds 20]"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab import lava  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.facts.labfacts import load_lab  # noqa: E402
from boardlab.lava.health import health_check_job  # noqa: E402
from boardlab.lava.localserver import LocalLavaServer  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

BOARD = "qemu-arm"
SWITCH_LOG = Path("/run/boardlab/vlab/logs/power-switch.log")
PERSON, LAVA_SIDE = "10.231.0.1", "10.231.0.11"


def labgrid(*args):
    env = {"LG_USERNAME": "dev", "LG_HOSTNAME": "bench", "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(ROOT / ".venv/bin/labgrid-client"), "-x", load_lab().coordinator, *args],
                          capture_output=True, text=True, env=env, timeout=1800)


def hold(note):
    """Reserve (waiting as long as it takes), acquire, power-cycle, release -> (start, end, waited)."""
    t0 = time.time()
    token = re.search(r"LG_TOKEN=(\S+)", labgrid("reserve", "--wait", "--shell", f"board={BOARD}").stdout).group(1)
    r = labgrid("-p", f"+{token}", "acquire")
    start = time.time()
    ok = r.returncode == 0 and labgrid("-p", BOARD, "power", "cycle").returncode == 0
    note(start - t0)
    return token, start, ok


def release(token):
    labgrid("-p", f"+{token}", "release")
    labgrid("cancel-reservation", token)
    return time.time()


def job_info(srv, job):
    return yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))


def submit(srv, job_file):
    return lava.lavacli(srv.identity, "jobs", "submit", str(job_file)).split()[0]


def one_round(srv, job_file, hold_first: bool, waits: dict) -> dict:
    if hold_first:
        token, start, ok = hold(lambda w: waits["reserve"].append(w))
        job = submit(srv, job_file)
        time.sleep(15)
        waiting = job_info(srv, job)["state"] == "Submitted"
        end = release(token)
    else:
        job = submit(srv, job_file)
        while job_info(srv, job)["state"] not in ("Running", "Finished"):
            time.sleep(1)
        token, start, ok = hold(lambda w: waits["reserve"].append(w))
        end = release(token)
        waiting = True
    health = lava.wait_for_job(srv.identity, job, 1200, echo=lambda *_: None)
    info = job_info(srv, job)
    return {"job": job, "health": health, "waited": waiting, "granted": ok, "hold": (start, end),
            "run": (str(info["start_time"]), str(info["end_time"]))}


def power_requests(since: float) -> list[tuple[float, str]]:
    """(time, source) of each PUT the switch logged since `since` (its lines: HH:MM:SS src ...)."""
    day = time.strftime("%Y-%m-%d", time.localtime(since))
    out = []
    for line in SWITCH_LOG.read_text().splitlines():
        m = re.match(r"(\d\d:\d\d:\d\d) (\S+) \"PUT /outlet/\d+/value", line)
        if m:
            t = time.mktime(time.strptime(f"{day} {m.group(1)}", "%Y-%m-%d %H:%M:%S"))
            if t >= since - 1:
                out.append((t, m.group(2)))
    return out


def collisions(rounds, requests) -> int:
    def stamp(s):   # LAVA's XML-RPC time: 20261126T10:31:34 (or ISO with dashes)
        m = re.match(r"(\d{4})-?(\d\d)-?(\d\d)[T ](\d\d):(\d\d):(\d\d)", s or "")
        return time.mktime(time.strptime(" ".join(m.groups()), "%Y %m %d %H %M %S")) - time.timezone if m else None
    n = 0
    for r in rounds:
        hs, he = r["hold"]
        js, je = (stamp(x) for x in r["run"])
        n += sum(1 for t, src in requests if src == LAVA_SIDE and hs + 1 < t < he - 1)
        if js and je:
            n += sum(1 for t, src in requests if src == PERSON and js + 1 < t < je - 1)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-shared-"))
    job_file = work / "job.yaml"
    job = health_check_job(load_board(BOARD))
    job["job_name"] = "bench shared board: boot and free"
    job_file.write_text(lava.dump_job(job))
    t0 = time.time()
    waits, rounds = {"reserve": []}, []
    with kept_up("vlab", boards=(BOARD,)), LocalLavaServer(work / "server", identity="boardlab-bench") as srv:
        srv.up([BOARD])
        while "acquired: lava-arbiter/lava" not in labgrid("-p", BOARD, "show").stdout:
            time.sleep(1)
        for i in range(args.rounds):
            r = one_round(srv, job_file, i % 2 == 0, waits)
            rounds.append(r)
            print(f"round {i + 1} ({'hold first' if i % 2 == 0 else 'job first'}): job {r['job']} {r['health']}, "
                  f"{'waited' if r['waited'] else 'DID NOT WAIT'}, reservation {'granted' if r['granted'] else 'REFUSED'}",
                  flush=True)
    n = collisions(rounds, power_requests(t0))
    print(f"\nhost {this_host()}, {time.strftime('%F')}, host clock; {args.rounds} rounds in {time.time() - t0:.0f} s")
    print(f"collisions (a power action by one side during the other's hold): {n}")
    print(f"jobs failed or lost: {sum(r['health'] != 'Complete' for r in rounds)} of {len(rounds)}; "
          f"jobs that waited for the hold: {sum(r['waited'] for r in rounds[::2])} of {len(rounds[::2])}")
    print(f"reservations granted: {sum(r['granted'] for r in rounds)} of {len(rounds)}; "
          f"reservation waits (s): median {sorted(waits['reserve'])[len(waits['reserve']) // 2]:.0f}, "
          f"max {max(waits['reserve']):.0f}")


if __name__ == "__main__":
    main()
