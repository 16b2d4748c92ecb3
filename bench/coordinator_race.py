#!/usr/bin/env python3
"""A person racing a coordinator restart, N tries: while a LAVA job runs on qemu-arm (its
health check job, submitted by the local LAVA server's own identity), the lab's
coordinator is stopped and started again, and dev/alice tries `labgrid-client -p qemu-arm
acquire` in a tight loop from the moment it answers, for --race-s seconds. Counted: the
acquisitions that succeeded while the job ran (LAVA's own start and end times of the
job), each try's first refused attempt after the restart and what labgrid said. Before
boardlab.lab.coordinator a person got the board 1.6 s after a restart; the goal is 0.
Host clock (this host, named in the output). It brings the lab and a LAVA server up and
down itself, refuses a lab already up, and ends only what it started, by PID.

    .venv/bin/python bench/coordinator_race.py [--tries 20] [--race-s 15]"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import shared_board as sb  # noqa: E402   its submit
from boardlab import cli, lava  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.facts.labfacts import load_lab  # noqa: E402
from boardlab.lava.health import health_check_job  # noqa: E402
from boardlab.lava.jobs import dump_job  # noqa: E402
from boardlab.lava.localserver import LocalLavaServer  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.net import tcp_open  # noqa: E402
from boardlab.vlab import leases  # noqa: E402
from boardlab.vlab.lab import VirtualLab, kept_up  # noqa: E402
from boardlab.vlab.mgmt import daemons  # noqa: E402

BOARD = "qemu-arm"
LG = str(ROOT / ".venv/bin/labgrid-client")


def lg(*args) -> subprocess.CompletedProcess:
    return subprocess.run([LG, "-x", load_lab().coordinator, *args], capture_output=True, text=True, timeout=60,
                          env={"LG_USERNAME": "alice", "LG_HOSTNAME": "dev", "PATH": "/usr/bin:/bin"})


def job(srv, job_id) -> dict:
    import yaml
    return yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", str(job_id), "--yaml"))


def epoch(s) -> float | None:
    return datetime.fromisoformat(str(s).replace("Z", "+00:00")).timestamp() if s else None


def one_try(srv, job_file: Path, race_s: float) -> dict:
    """A job running, the coordinator restarted under it, alice acquiring in a loop."""
    job_id = sb.submit(srv, job_file)
    t0 = time.time()
    while job(srv, job_id)["state"] != "Running" and time.time() - t0 < 600:
        time.sleep(1)
    time.sleep(3)
    lab, where = VirtualLab(), load_lab()
    lab.stop_service("coordinator")
    lab.start_service("coordinator")
    answered = time.time()
    while not tcp_open(where.coordinator_port, where.management_ip) and time.time() - answered < 30:
        time.sleep(0.05)
    tries, got, said = 0, [], ""
    while time.time() - answered < race_s:
        r = lg("-p", BOARD, "acquire")
        tries += 1
        if r.returncode == 0:
            got.append(time.time())
            lg("-p", BOARD, "release")
        else:
            text = (r.stderr or r.stdout).strip()
            said = said or (text.splitlines()[-1] if text else "")
    while job(srv, job_id)["state"] != "Finished" and time.time() - t0 < 900:
        time.sleep(2)
    info = job(srv, job_id)
    start, end = epoch(info.get("start_time")), epoch(info.get("end_time")) or time.time()
    during = [t for t in got if start and start <= t <= end]
    return {"job": job_id, "health": info.get("health"), "attempts": tries, "acquired": len(got),
            "during_job": len(during), "said": re.sub(r"\s+", " ", said)[:90]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=20)
    ap.add_argument("--race-s", type=float, default=15.0, help="how long alice acquires after each restart")
    args = ap.parse_args(argv)
    if leases.holders() or daemons().pid("coordinator"):
        sys.exit("the virtual lab is up or in use: this bench restarts its coordinator, it needs the lab to itself")
    t0, work = time.time(), Path(tempfile.mkdtemp(prefix="bench-coordinator-race-"))
    rows = []
    with kept_up("vlab", boards=(BOARD,)), LocalLavaServer(work / "server", identity="boardlab-race") as srv:
        cli.main(["places", "sync"])
        srv.up([BOARD])
        job_file = work / "job.yaml"
        job_file.write_text(dump_job({**health_check_job(load_board(BOARD)), "job_name": "race: a job under a restart"}))
        for n in range(1, args.tries + 1):
            r = one_try(srv, job_file, args.race_s)
            rows.append(r)
            print(time.strftime("%T"), f"try {n}: {r}", flush=True)
    host = this_host()
    print(f"\nhost {host['id']} ({host['cpus']} CPUs), host clock, {time.strftime('%F %T', time.localtime(t0))} "
          f"to {time.strftime('%T')}; {len(rows)} tries, alice acquiring for {args.race_s:g} s after each restart")
    print("| try | job | its end | acquire attempts | acquired | while the job ran | labgrid said |\n" + "|---" * 7 + "|")
    for n, r in enumerate(rows, 1):
        print(f"| {n} | {r['job']} | {r['health']} | {r['attempts']} | {r['acquired']} | {r['during_job']} | {r['said']} |")
    print(f"acquisitions while a LAVA job ran: {sum(r['during_job'] for r in rows)} of "
          f"{sum(r['attempts'] for r in rows)} attempts in {len(rows)} tries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
