#!/usr/bin/env python3
"""Two boards against one: the throughput of the virtual lab when its two boards
(qemu-arm, qemu-ppc) work at the same time, against one board at a time, side by side in
one run. A job is what a developer runs: `pytest --lg-env lab/<board>.yaml` of the
boot-time and memory suites (--quick): power-on, U-Boot, TFTP, boot, measure, power-off.

Each round runs the same two jobs twice: one after the other (one board busy at a time),
then both at once; the order of the two modes alternates between rounds so host noise
hits both alike. Prints each round's wall times, the medians, jobs per hour both ways and
their ratio (the issue's goal: >= 1.6 x on a 2-core host).

    .venv/bin/python bench/parallel.py [--rounds 3]

Brings the virtual lab up if it is not (and down again at the end)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab import clocks  # noqa: E402
from boardlab.vlab.host import VirtualLab  # noqa: E402

BOARDS = ("qemu-arm", "qemu-ppc")
SUITES = ("testsuites/test_boot_time.py", "testsuites/test_mem_eat.py")


def job(board, run_dir):
    return subprocess.Popen([sys.executable, "-m", "pytest", "--lg-env", f"lab/{board}.yaml",
                             *SUITES, "--quick", "-q", "-p", "no:cacheprovider",
                             "--run-dir", str(run_dir)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(board, proc):
    out, _ = proc.communicate(timeout=1200)
    if proc.returncode != 0:
        raise SystemExit(f"{board}: the job failed ({proc.returncode}):\n{out[-3000:]}")


def one_at_a_time(work):
    t0 = time.monotonic()
    for board in BOARDS:
        finish(board, job(board, work / f"seq-{board}"))
    return time.monotonic() - t0


def both_at_once(work):
    t0 = time.monotonic()
    procs = {board: job(board, work / f"par-{board}") for board in BOARDS}
    for board, proc in procs.items():
        finish(board, proc)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    host = clocks.this_host()
    vlab = VirtualLab("vlab")
    was_up = vlab.is_up()
    if not was_up:
        vlab.up()
    seq, par = [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.rounds):
                work = Path(tmp) / f"round{i}"
                modes = [("one", one_at_a_time, seq), ("both", both_at_once, par)]
                for name, run, into in (modes if i % 2 == 0 else modes[::-1]):
                    into.append(run(work / name))
                print(f"round {i + 1}: one board at a time {seq[-1]:6.1f} s, both at once "
                      f"{par[-1]:6.1f} s, ratio {seq[-1] / par[-1]:.2f}", flush=True)
    finally:
        if not was_up:
            vlab.down()
    s, p = statistics.median(seq), statistics.median(par)
    jobs = len(BOARDS)
    print(f"\nhost {host['id']} ({os.cpu_count()} cores), clock: host (wall time of whole jobs), "
          f"{args.rounds} rounds, {jobs} jobs a mode a round ({', '.join(SUITES)} --quick)")
    print(f"{'mode':<24}{'median wall s':>14}{'jobs/hour':>12}")
    print(f"{'one board at a time':<24}{s:>14.1f}{jobs * 3600 / s:>12.0f}")
    print(f"{'both boards at once':<24}{p:>14.1f}{jobs * 3600 / p:>12.0f}")
    print(f"throughput, two boards / one: {s / p:.2f} x (goal >= 1.6 x)")


if __name__ == "__main__":
    main()
