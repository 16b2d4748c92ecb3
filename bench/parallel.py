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

TFTP stalls (a board's `tftpboot` ending in "Retry count exceeded" beside the other
board) are counted in every round; `--stall-rounds N` runs N two-board rounds only (both
jobs started at once), for each tftpd retransmit setting of `--retransmit` (ms, or
`client`: tftpd-hpa's default, the board's own timeout option), the settings alternating
in blocks of `--block` rounds so host drift hits all. Printed per setting: rounds, jobs,
stalls, other failures, and U-Boot's TFTP timeouts ('T' in its progress line) per
transfer: the near misses a stall is made of.

    .venv/bin/python bench/parallel.py --stall-rounds 20 --retransmit client,100

Brings the virtual lab up if it is not (and down again at the end)."""
import argparse
import contextlib
import dataclasses
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.measure import clocks
from boardlab.vlab.lab import VirtualLab, kept_up

BOARDS = ("qemu-arm", "qemu-ppc")
SUITES = ("testsuites/test_boot_time.py", "testsuites/test_memory.py")
# the same work in every job: no further boots for an 'unknown' verdict (qemu-ppc's mem_eat)
JOB_OPTIONS = ("--quick", "--max-repeats", "1")


def job(board, run_dir):
    return subprocess.Popen([sys.executable, "-m", "pytest", "--lg-env", f"lab/{board}.yaml",
                             *SUITES, *JOB_OPTIONS, "-q", "-p", "no:cacheprovider",
                             "--run-dir", str(run_dir)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


STALL = re.compile(r"Retry count exceeded|no answer from the TFTP server")
STALLS = []   # (board, the job's last words) of every stalled job


def finish(board, proc, stop_on_failure=True) -> str:
    """Wait for a job: 'ok', 'stall' (a TFTP transfer gave up) or 'failed'. A failed
    verdict is printed, not fatal: the job ran its course and its time counts. A stall is
    counted; any other failure stops the bench unless stop_on_failure is off."""
    out, _ = proc.communicate(timeout=1200)
    if proc.returncode == 1 and "regressed against the baseline" in out:
        print(f"  ({board}: a verdict failed: "
              + next(ln.strip() for ln in out.splitlines() if " regressed; " in ln) + ")", flush=True)
    elif proc.returncode != 0 and STALL.search(out):
        STALLS.append((board, next(ln.strip() for ln in out.splitlines() if STALL.search(ln))))
        print(f"  ({board}: TFTP stall: {STALLS[-1][1][:160]})", flush=True)
        return "stall"
    elif proc.returncode != 0:
        if stop_on_failure:
            raise SystemExit(f"{board}: the job failed ({proc.returncode}):\n{out[-3000:]}")
        print(f"  ({board}: the job failed ({proc.returncode}): {out.strip().splitlines()[-1][:160]})")
        return "failed"
    return "ok"


def tftp_timeouts(run_dir: Path) -> tuple[int, int]:
    """(transfers, U-Boot TFTP timeouts) in a job's console logs: each 'T' in the
    progress lines U-Boot prints between 'Loading:' and the transfer's end."""
    transfers = timeouts = 0
    for log in Path(run_dir).rglob("console/*.log"):
        loading = False
        for line in log.read_text(errors="replace").splitlines():
            text = line.split("| ", 1)[1] if "| " in line else ""
            if text.startswith("Loading:"):
                transfers, loading = transfers + 1, True
            elif loading and not re.fullmatch(r"[\s#T]*", text):
                loading = False
            if loading:
                timeouts += len(re.findall(r"(?<![A-Za-z])T(?![A-Za-z])", text))
    return transfers, timeouts


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


def set_retransmit(hosts, setting: str):
    """Restart every lab host's tftpd with a retransmit setting: 'client' (tftpd-hpa's
    default: the board's timeout option) or milliseconds; None: each host's own facts."""
    for host in hosts:
        ms = host.lab.tftp_retransmit_ms if setting is None else None if setting == "client" else int(setting)
        host.lab = dataclasses.replace(host.lab, tftp_retransmit_ms=ms)
        host.stop_service("tftpd")
        host.start_service("tftpd")


def stall_rounds(hosts, work: Path, rounds: int, settings: list[str], block: int) -> dict:
    """Two-board rounds (both jobs started at once), the tftpd settings alternating in
    blocks: {setting: counts}."""
    counts = {s: {"rounds": 0, "jobs": 0, "stall": 0, "failed": 0, "transfers": 0, "T": 0}
              for s in settings}
    # settings alternate in blocks: client x5, 100 x5, client x5, ... until each has its rounds
    schedule = [s for k in range(0, rounds, block) for s in settings
                for _ in range(min(block, rounds - k))]
    current = None
    for i, setting in enumerate(schedule):
        if setting != current:
            set_retransmit(hosts, setting)
            current = setting
        c = counts[setting]
        c["rounds"] += 1
        t0 = time.monotonic()
        procs = {b: job(b, work / f"{i:03d}-{setting}-{b}") for b in BOARDS}
        outcome = {b: finish(b, p, stop_on_failure=False) for b, p in procs.items()}
        for b in BOARDS:
            n, t = tftp_timeouts(work / f"{i:03d}-{setting}-{b}")
            c["jobs"] += 1
            c[outcome[b]] = c.get(outcome[b], 0) + 1
            c["transfers"] += n
            c["T"] += t
        print(f"round {i + 1} (retransmit {setting}): "
              + ", ".join(f"{b} {outcome[b]}" for b in BOARDS)
              + f"; {time.monotonic() - t0:.0f} s; so far {c['stall']} stalls, {c['T']} timeouts "
                f"in {c['transfers']} transfers; {c['failed']} jobs FAILED otherwise (their stalls are not counted)",
              flush=True)
    return counts


def print_stalls(counts: dict, host: dict):
    print(f"\nhost {host['id']} ({os.cpu_count()} cores); TFTP timeouts are U-Boot's, counted on "
          f"the board's clock (guest-deterministic); a round: both boards' jobs at once "
          f"({' '.join(SUITES + JOB_OPTIONS)})")
    print(f"{'tftpd retransmit':<18}{'rounds':>7}{'jobs':>6}{'stalls':>8}{'failed':>8}"
          f"{'transfers':>11}{'timeouts':>10}{'per transfer':>14}")
    for s, c in counts.items():
        per = c["T"] / c["transfers"] if c["transfers"] else 0.0
        label = "client (5 s)" if s == "client" else f"{s} ms"
        print(f"{label:<18}{c['rounds']:>7}{c['jobs']:>6}{c['stall']:>8}{c['failed']:>8}"
              f"{c['transfers']:>11}{c['T']:>10}{per:>14.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stall-rounds", type=int, default=0,
                    help="two-board rounds per tftpd setting, counting TFTP stalls only")
    ap.add_argument("--retransmit", default="client,100",
                    help="tftpd settings for --stall-rounds: 'client' and/or ms (default client,100)")
    ap.add_argument("--block", type=int, default=5, help="rounds of one setting in a row")
    args = ap.parse_args()
    if args.stall_rounds:
        return main_stalls(args)
    host = clocks.this_host()
    lab_stack = contextlib.ExitStack()   # through the lab and its leases: every host up
    lab_stack.enter_context(kept_up("vlab", boards=("qemu-arm", "qemu-ppc")))
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
        lab_stack.close()
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
    print(f"TFTP stalls: {len(STALLS)}" + "".join(f"\n  {b}: {why}" for b, why in STALLS))


def main_stalls(args):
    host = clocks.this_host()
    lab_stack = contextlib.ExitStack()   # through the lab and its leases: every host up
    lab_stack.enter_context(kept_up("vlab", boards=("qemu-arm", "qemu-ppc")))
    hosts = list(VirtualLab().hosts.values())   # each board's own host: qemu-ppc is on vlab2
    settings = [s.strip() for s in args.retransmit.split(",")]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            counts = stall_rounds(hosts, Path(tmp), args.stall_rounds, settings, args.block)
    finally:
        set_retransmit(hosts, None)
        lab_stack.close()
    print_stalls(counts, host)


if __name__ == "__main__":
    main()
