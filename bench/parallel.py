#!/usr/bin/env python3
"""Two boards against one: the throughput of the virtual lab when its two boards
(qemu-arm, qemu-ppc) work at the same time, against one board at a time, side by side in
one run. A job is what a developer runs: `pytest --lg-env lab/<board>.yaml` of the
boot-time and memory suites (--quick): power-on, U-Boot, TFTP, boot, measure, power-off.

Each round times each board's job alone (one board busy), then both boards kept busy at
once: the board whose job is shorter starts its job again while the other's runs, so every
timed job ran beside the other board's. Modes alternate between rounds. Throughput of two
boards against one, for the same mix of jobs, is the sum over the boards of (job time
alone / job time beside the other board): 2.0 if they did not slow each other down, 1.0 if
running both at once gained nothing. The issue's goal: >= 1.6 x on a 2-core host. (The
makespan of one job each, also printed, is capped by the jobs' lengths: the longer job
alone bounds it.)

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
# the same work in every job: no further boots for an 'unknown' verdict (qemu-ppc's mem_eat)
JOB_OPTIONS = ("--quick", "--max-repeats", "1")


def job(board, run_dir):
    return subprocess.Popen([sys.executable, "-m", "pytest", "--lg-env", f"lab/{board}.yaml",
                             *SUITES, *JOB_OPTIONS, "-q", "-p", "no:cacheprovider",
                             "--run-dir", str(run_dir)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(board, proc):
    """Wait for a job. A failed verdict is printed, not fatal: the job ran its course and
    its time counts (a job that could not boot stops the bench)."""
    out, _ = proc.communicate(timeout=1200)
    if proc.returncode == 1 and "regressed against the baseline" in out:
        print(f"  ({board}: a verdict failed: "
              + next(ln.strip() for ln in out.splitlines() if " regressed; " in ln) + ")", flush=True)
    elif proc.returncode != 0:
        raise SystemExit(f"{board}: the job failed ({proc.returncode}):\n{out[-3000:]}")


def alone(work) -> dict:
    """Each board's job with the other board off: {board: s}."""
    times = {}
    for board in BOARDS:
        t0 = time.monotonic()
        finish(board, job(board, work / f"alone-{board}"))
        times[board] = time.monotonic() - t0
    return times


def beside(work) -> tuple[dict, float]:
    """Both boards busy: ({board: mean s of its jobs that ran beside the other's}, the
    makespan of the first job of each)."""
    t0 = time.monotonic()
    running = {b: (job(b, work / f"beside-{b}-0"), t0) for b in BOARDS}
    done = {b: [] for b in BOARDS}
    first_done = {}
    n = 0
    while running:
        for board, (proc, started) in list(running.items()):
            if proc.poll() is None:
                continue
            finish(board, proc)
            now = time.monotonic()
            others_busy = any(o != board for o in running)   # the other still running
            if others_busy or not done[board]:
                done[board].append(now - started)
            first_done.setdefault(board, now - t0)
            del running[board]
            if others_busy and not first_done.keys() >= set(BOARDS):   # keep the load on
                n += 1
                running[board] = (job(board, work / f"beside-{board}-{n}"), time.monotonic())
        time.sleep(0.05)
    return {b: statistics.mean(ts) for b, ts in done.items()}, max(first_done.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    host = clocks.this_host()
    vlab = VirtualLab("vlab")
    was_up = vlab.is_up()
    if not was_up:
        vlab.up()
    rounds = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.rounds):
                work = Path(tmp) / f"round{i}"
                if i % 2 == 0:
                    a = alone(work)
                    b, makespan = beside(work)
                else:
                    b, makespan = beside(work)
                    a = alone(work)
                gain = sum(a[x] / b[x] for x in BOARDS)
                rounds.append((a, b, makespan, gain))
                print(f"round {i + 1}: " + ", ".join(f"{x} {a[x]:.1f} s alone, {b[x]:.1f} s beside"
                                                     for x in BOARDS)
                      + f"; throughput {gain:.2f} x", flush=True)
    finally:
        if not was_up:
            vlab.down()
    print(f"\nhost {host['id']} ({os.cpu_count()} cores), clock: host (wall time of whole jobs), "
          f"{args.rounds} rounds; a job: {' '.join(SUITES + JOB_OPTIONS)}")
    print(f"{'board':<10}{'alone s':>10}{'beside s':>10}{'speed kept':>12}")
    for x in BOARDS:
        al = statistics.median(r[0][x] for r in rounds)
        be = statistics.median(r[1][x] for r in rounds)
        print(f"{x:<10}{al:>10.1f}{be:>10.1f}{al / be:>12.2f}")
    seq = statistics.median(sum(r[0].values()) for r in rounds)
    span = statistics.median(r[2] for r in rounds)
    print(f"one job each: one board at a time {seq:.1f} s, both at once {span:.1f} s "
          f"({seq / span:.2f} x; capped at {seq / max(statistics.median(r[0][x] for r in rounds) for x in BOARDS):.2f} x by the longer job)")
    print(f"throughput, two boards / one (median of rounds): "
          f"{statistics.median(r[3] for r in rounds):.2f} x (goal >= 1.6 x)")


if __name__ == "__main__":
    main()
