#!/usr/bin/env python3
"""The history's change-point detection (boardlab.history.changes: Apache Otava, p < 0.001,
the smallest step by clock) on simulated nightly series with the noise this lab measures:
how many change points an unchanged kernel's series shows (false alarms), and how often a
step is found at the right build (within 3 builds of where it begins).

Noise per build: a build's figure is the mean of its samples (3 boots, as the suites
take: --samples), each sample drawn with the relative sd of the stored baseline samples of
the virtual board (kernels/armmp/qemu-arm.yaml): boot_time.guest_login for the
deterministic clock, boot_time.login for the host clock. Series of 20 builds; steps at
build 10.

    .venv/bin/python bench/history_detection.py [--series 20]

Goals (issue "A lab that remembers"): 20 unchanged series: 0 change points; a 0.5 % step
on the deterministic clock and a 5 % step on the host clock found at the right build
(within 3) in >= 19 of 20 series. No host figure: the detector's own numbers only."""
import argparse
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.history import changes  # noqa: E402
from boardlab.measure import baselines  # noqa: E402

BUILDS, STEP_AT = 20, 10


def relative_sd(key: str) -> float:
    b = baselines.load("armmp", "qemu-arm")[key]
    values = b.values()
    return statistics.stdev(values) / statistics.mean(values)


def series(rng, sd, step, samples):
    """One nightly series: each build the mean of its samples."""
    return [statistics.mean(100.0 * (1 + (step if i >= STEP_AT else 0.0)) * (1 + rng.gauss(0, sd))
                            for _ in range(samples)) for i in range(BUILDS)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--series", type=int, default=20)
    ap.add_argument("--samples", type=int, default=3, help="samples (boots) per build (default 3)")
    args = ap.parse_args()
    rng = random.Random(1)
    cases = [("guest-deterministic", "boot_time.guest_login", 0.005),
             ("host", "boot_time.login", 0.05)]
    print(f"{args.samples} samples a build, {BUILDS} builds a series\n")
    print("| clock | noise a sample (rel. sd, from) | series | unchanged: change points | step | "
          "found at the right build (+-3) |\n|---|---|---:|---:|---:|---:|")
    for clock, key, step in cases:
        sd = relative_sd(key)
        env = f"qemu-arm.{clock}"
        flat = {f"flat{i}": series(rng, sd, 0.0, args.samples) for i in range(args.series)}
        stepped = {f"step{i}": series(rng, sd, step, args.samples) for i in range(args.series)}
        steps = {k: changes.min_step(env) for k in list(flat) + list(stepped)}
        found = changes.detect({**flat, **stepped}, steps)
        false = sum(len(found[k]) for k in flat)
        hits = sum(any(abs(c["index"] - STEP_AT) <= 3 for c in found[k]) for k in stepped)
        print(f"| {clock} | {100 * sd:.3f} % ({key}) | {args.series} | {false} | "
              f"{100 * step:g} % | {hits} of {args.series} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
