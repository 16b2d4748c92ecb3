#!/usr/bin/env python3
"""Noise of the virtual board per clock: the coefficient of variation (stdev / mean) of
each metric over N boots, on QEMU's deterministic clock (icount) and on the realtime
clock, without and with a CPU hog on the other core. Conditions interleave boot by boot
(det, real, det+hog, real+hog, det, ...) so host drift hits all of them alike.

Each boot goes the real path (power switch, U-Boot, TFTP, ser2net, the strategy) and
measures one figure set per family: boot (host-arrival and guest-time milestones),
memory (free, mem_eat), lmbench (the quick suite's latencies and bandwidths), jitter
(a short cyclictest under the suite's load). Prints a table and, per family, the median
CV of each condition and the ratio realtime / deterministic.

    .venv/bin/python bench/noise.py [--board qemu-arm] [--boots 5] [--no-hog] [--jitter-s 5]
    .venv/bin/python bench/noise.py --loads none,bursts:0.5,bursts:1,bursts:2 [--boots 5]
        # the known-noise stand-in: the deterministic clock with a board load per condition
        # (boardlab vlab load; a seed per power-on), no hog: the spread each level gives

A family whose programs the board's image lacks (qemu-ppc: lmbench, rt-tests; see
/etc/boardlab-userland) is left out, and the bench says so.

Goals (issue #9): guest-time boot milestones CV <= 0.1 %, lmbench <= 1 %, memory
identical on every boot; the same with the hog. Brings the virtual lab up if it is not
(and down again at the end)."""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import default_board
from boardlab.measure import parsers, sample
from boardlab.measure.families import boot_time, jitter, lmbench, memory
from boardlab.vlab.host import VirtualLabHost
from boardlab.vlab.boardload import at_switch
from boardlab.vlab.lab import kept_up

def _keyed(figures: dict) -> dict:
    """boardlab.measure.sample's 'suite.name' keys as (family, name); boot_time reads 'boot'."""
    out = {}
    for key, v in figures.items():
        suite, name = key.split(".", 1)
        out[("boot" if suite == "boot_time" else suite, name)] = v
    return out


def one_boot(strategy, shell_driver, jitter_s, families) -> dict:
    rec = strategy.reboot()
    sh = shell_driver()
    figures = {**boot_time.milestones(rec), **memory.after_boot(sh, rec)}
    out, _, _ = sh.run("dmesg -n 1; mem_eat > /tmp/m.log 2>&1; tail -n 3 /tmp/m.log", timeout=300)
    figures["memory.mem_eat_kb"] = parsers.parse_mem_eat("\n".join(out))["kb"]
    if "lmbench" in families or "jitter" in families:
        strategy.transition("off")   # mem_eat leaves the board without caches: a fresh boot
        strategy.transition("shell")
        sh = shell_driver()
    if "lmbench" in families:
        figures.update(lmbench.measure_groups(sh))
    if "jitter" in families:
        figures.update(jitter.run(sh, jitter_s)[0])
    return _keyed(figures)


def _boot_with(hog: bool, boot):
    """boot() with one busy loop on the host beside it (QEMU has one core, the hog the other)."""
    proc = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if hog else None
    try:
        return boot()
    finally:
        if proc:
            proc.kill()
            proc.wait()


def cv_pct(values):
    m = statistics.mean(values)
    return 0.0 if len(values) < 2 or m == 0 else statistics.stdev(values) / abs(m) * 100


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boots", type=int, default=5, help="boots per condition (default 5)")
    ap.add_argument("--no-hog", action="store_true", help="skip the conditions with a CPU hog")
    ap.add_argument("--jitter-s", type=int, default=5, help="cyclictest seconds per boot")
    ap.add_argument("--board", default=default_board(), help="the virtual board (lab/<board>.yaml; default: the lab's default board)")
    ap.add_argument("--loads", default=None, help="comma-separated board loads (none, bursts:L, perboot:L, steady:P): "
                    "one condition each, on the deterministic clock without a hog")
    args = ap.parse_args()

    if args.loads:
        conditions = [("deterministic", False, load) for load in args.loads.split(",")]
    else:
        conditions = [(c, h, "none") for h in ((False,) if args.no_hog else (False, True))
                      for c in ("deterministic", "realtime")]
    samples = {cond: {} for cond in conditions}
    host_s = {cond: [] for cond in conditions}
    lab = VirtualLabHost("vlab")
    board = load_board(args.board)
    with kept_up("vlab"), board_session(
                ROOT / f"lab/{args.board}.yaml",
                ROOT / f"results/bench-noise-{args.board}") as (strategy, shell):
        strategy.select(kernel="", root="", ramdisk="")
        strategy.transition("shell")
        families, lacking = sample.measurable(shell(), sample.FAMILIES)
        for fam, why in lacking.items():
            print(f"{args.board}: no {fam} figures: {why}", flush=True)
        try:
            for i in range(args.boots):
                for cond in conditions:
                    clock, with_hog, load = cond
                    lab.clock(clock)
                    at_switch(board, load)
                    t0 = time.monotonic()
                    figures = _boot_with(with_hog, lambda: one_boot(strategy, shell, args.jitter_s,
                                                                     families))
                    host_s[cond].append(time.monotonic() - t0)
                    for key, v in figures.items():
                        samples[cond].setdefault(key, []).append(float(v))
                    print(f"boot {i + 1}/{args.boots} {_label(cond)}: "
                          f"{time.monotonic() - t0:.0f} s, login {figures.get(('boot', 'login'), 0):.2f} s, "
                          f"guest login {figures.get(('boot', 'guest_login'), 0):.4f} s, "
                          f"mem_eat {figures[('memory', 'mem_eat_kb')]:.0f} kB", flush=True)
        finally:
            lab.clock("deterministic")
            at_switch(board, "none")

    print_tables(conditions, samples, host_s, args.boots)


def _label(c) -> str:
    return ("det" if c[0] == "deterministic" else "real") + ("+hog" if c[1] else "") + \
        (f"+{c[2]}" if c[2] != "none" else "")


def print_tables(conditions, samples, host_s, boots):
    """The CV table per metric, the median CV per family, host seconds per boot."""
    head = " | ".join(f"{_label(c)} mean, CV" for c in conditions)
    print(f"\nCV over {boots} boots per condition (stdev / mean); det = icount, real = realtime\n")
    print(f"| family | metric | {head} |")
    print("|---|---|" + "---|" * len(conditions))
    keys = sorted({k for s in samples.values() for k in s})
    for fam, name in keys:
        cells = []
        for c in conditions:
            v = samples[c].get((fam, name), [])
            cells.append(f"{statistics.mean(v):.5g}, {cv_pct(v):.3f} %" if v else "-")
        print(f"| {fam} | {name} | " + " | ".join(cells) + " |")
    if any(c[2] != "none" for c in conditions):   # the loads: each condition's median CV per family
        print("\nper family: median CV of its metrics per condition (boot: the guest-time milestones)\n")
        for fam in sorted({f for s in samples.values() for f, _ in s}, key=("boot", "memory",
                                                                           "lmbench", "jitter").index):
            cells = []
            for c in conditions:
                cvs = [cv_pct(v) for (f, n), v in samples[c].items()
                       if f == fam and not (fam == "boot" and not n.startswith("guest_"))]
                cells.append(f"{_label(c)} {statistics.median(cvs) if cvs else float('nan'):.3f} %")
            print(f"  {fam:8s} " + "; ".join(cells))
    else:
        _clock_ratios(conditions, samples)
    print("  (boot on det: the guest-time milestones; host-arrival times are another clock)")
    print("\nhost seconds per boot (all families): " + ", ".join(
        f"{_label(c)} {statistics.median(v):.0f} s" for c, v in host_s.items()))


def _clock_ratios(conditions, samples):
    print("\nper family: median CV of its metrics; ratio realtime / deterministic\n")
    for fam in sorted({f for s in samples.values() for f, _ in s}, key=("boot", "memory",
                                                                       "lmbench", "jitter").index):
        row = []
        for hog_on in sorted({c[1] for c in conditions}):
            med = {}
            for clock in ("deterministic", "realtime"):
                cvs = [cv_pct(v) for (f, n), v in samples[(clock, hog_on, "none")].items()
                       if f == fam and not (fam == "boot" and clock == "deterministic"
                                            and not n.startswith("guest_"))]
                med[clock] = statistics.median(cvs) if cvs else float("nan")
            ratio = med["realtime"] / med["deterministic"] if med["deterministic"] else float("inf")
            row.append(f"{'hog' if hog_on else 'quiet'}: det {med['deterministic']:.3f} %, "
                       f"real {med['realtime']:.3f} %, ratio {ratio:.3g}")
        print(f"  {fam:8s} " + "; ".join(row))


if __name__ == "__main__":
    main()
