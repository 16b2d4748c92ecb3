#!/usr/bin/env python3
"""A lab of fifty boards, for the arbiter's round and `boardlab lab status`: fifty places
and fifty LAVA devices faked at the subprocess boundary (tests/fakelab.py: labgrid-client
and lavacli answer in their own formats, places printed by labgrid's own Place.show; LAVA's
REST API for the status). No QEMU, no coordinator, no LAVA.

The lab as a busy day has it: 20 boards running LAVA jobs, 8 held by people (one of them
for 30 h), 3 reservations waiting, one overlap (a person on a board LAVA runs a job on),
one Bad and one Maintenance board. Printed, host clock, CPU-s of this process
(time.process_time) for:

- the arbiter's first round (it acquires every free place, ends the overlap) and a
  steady round (nothing to do: the third), each the median of --rounds;
- the status gathering (glance.lab_rows), the median of --rounds;
- the client calls each makes: each is a Python process of its own in a real lab, its
  start-up measured here (`labgrid-client --help`, `lavacli --help`), so a real round's
  CPU is about this process's plus calls x start-up; and what the per-board reading
  (one `show` and one `devices show` a board, before) would cost.

    .venv/bin/python bench/fifty_boards.py [--boards 50] [--rounds 5]"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from boardlab.lab import arbiter as arbiter_module, glance  # noqa: E402
from boardlab.lab.arbiter import Arbiter  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from fakelab import REAL_RUN, FakeLab  # noqa: E402


def busy_lab(n: int) -> FakeLab:
    boards = [f"board{i:02d}" for i in range(n)]
    lab = FakeLab(boards)
    for i, b in enumerate(boards[:20]):
        lab.start_job(b, 1000 + i)
    for b in boards[20:28]:
        lab.person_acquires(b, f"dev{b[-2:]}/person")
    lab.places[boards[20]]["changed"] -= 30 * 3600
    lab.person_acquires(boards[0], "vm/late")          # the overlap: LAVA runs job 1000 there
    for i, b in enumerate(boards[28:31]):
        lab.reserve(b, owner=f"vm/wait{i}", token=f"WAIT{i:06d}")
    lab.devices[boards[31]]["health"] = "Bad"
    lab.devices[boards[32]]["health"] = "Maintenance"
    return lab


def cpu(fn) -> tuple[float, object]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def startup(cmd) -> float:
    """CPU-s of one client process that starts, parses its arguments and exits."""
    before = os.times()
    REAL_RUN(cmd, capture_output=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    firsts, steadies, statuses, calls = [], [], [], {}
    for _ in range(args.rounds):
        lab = busy_lab(args.boards)
        subprocess.run = lab.run
        arbiter_module.device_transitions = lab.device_transitions
        try:
            with tempfile.TemporaryDirectory() as tmp:
                arbiter = Arbiter("127.0.0.1:1", None, {b: p["tags"] for b, p in lab.places.items()},
                                  Path(tmp) / "arbiter.json", echo=lambda m: None)
                took, done = cpu(arbiter.round)
                firsts.append(took)
                arbiter.round()   # the overlap's cancelled job asked about once
                lab.calls.clear()
                took, steady = cpu(arbiter.round)
                steadies.append(took)
                calls["round"] = [" ".join(c[:3]) for c in lab.calls]
                glance._lava_get = lab.rest
                host = SimpleNamespace(name="vlab", kind="real", exporter_name=None, boards=tuple(lab.places))
                lab.calls.clear()
                took, rows = cpu(lambda: glance.lab_rows([host], "127.0.0.1:1", "http://lava/", Path(tmp),
                                                         Path(tmp) / "arbiter.json", 24, time.time()))
                statuses.append(took)
                calls["status"] = sum(1 for c in lab.calls if c[0] != "GET")
                calls["status requests"] = sum(1 for c in lab.calls if c[0] == "GET")
        finally:
            subprocess.run = REAL_RUN
    lg = statistics.median(startup([str(ROOT / ".venv" / "bin" / "labgrid-client"), "--help"]) for _ in range(3))
    lc = statistics.median(startup(["lavacli", "--help"]) for _ in range(3))
    med = statistics.median
    problems = sum(1 for r in rows if r.problem)
    print(f"host {this_host()['id']}, {time.strftime('%F')}, host clock; {args.boards} boards, "
          f"median of {args.rounds}")
    print(f"arbiter first round: {med(firsts):.3f} CPU-s ({len(done)} steps: "
          f"{sorted({s for _, s in done})})")
    print(f"arbiter steady round: {med(steadies):.3f} CPU-s, {len(calls['round'])} client calls "
          f"({', '.join(calls['round'])}; steps {steady})")
    print(f"lab status gathering: {med(statuses):.3f} CPU-s, {calls['status']} labgrid-client calls, "
          f"{calls['status requests']} LAVA requests; {problems} of {len(rows)} rows not ready")
    print(f"client start-up: labgrid-client {lg:.2f} CPU-s, lavacli {lc:.2f} CPU-s (--help)")
    print(f"a real steady round: about {med(steadies) + 2 * lg + lc:.2f} CPU-s; reading per board as before "
          f"(1 + {args.boards} labgrid-client, {args.boards} lavacli): about "
          f"{(1 + args.boards) * lg + args.boards * lc:.1f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
