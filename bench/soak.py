#!/usr/bin/env python3
"""Soak: N consecutive power-on -> shell -> off cycles on the virtual board, the real
path each time (power switch, U-Boot, TFTP, ser2net, the strategy, login). Prints each
failure with its reason and log, the failure count (goal 0 in 50), and the spread of
the shell milestone: host arrival (this host's clock) and the board's own login stamp
(guest clock, deterministic unless `boardlab vlab clock realtime`).

    .venv/bin/python bench/soak.py [--cycles 50] [--kernel armmp] [--root ramdisk]

Brings the virtual lab up if it is not (and down again at the end). A failed cycle is
counted and the soak goes on: the board is off after every failure."""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session
from boardlab.errors import BoardlabError
from boardlab.measure import clocks
from boardlab.vlab.lab import kept_up


def spread(name: str, unit: str, values: list) -> str:
    if not values:
        return f"{name}: no samples"
    q = statistics.quantiles(values, n=20) if len(values) > 1 else [values[0]] * 19
    return (f"{name}: n={len(values)} median {statistics.median(values):.4f} {unit}, "
            f"min {min(values):.4f}, p95 {q[18]:.4f}, max {max(values):.4f}, "
            f"stdev {statistics.pstdev(values):.4f} ({statistics.pstdev(values) / statistics.mean(values) * 100:.3f} %)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--kernel", default="")
    ap.add_argument("--root", default="")
    args = ap.parse_args()
    shell_s, guest_s, cycle_s, failures = [], [], [], []
    clock = None
    with kept_up("vlab"), board_session(
                ROOT / "lab/qemu-arm.yaml", ROOT / "results/bench-soak") as (strategy, shell):
        strategy.select(kernel=args.kernel, root=args.root)
        for i in range(1, args.cycles + 1):
            t0 = time.monotonic()
            try:
                rec = strategy.reboot()
                shell().run_check("true")
                strategy.transition("off")
            except BoardlabError as e:
                failures.append((i, str(e)))
                print(f"cycle {i}: FAILED: {str(e).splitlines()[0]}", flush=True)
                continue
            cycle_s.append(time.monotonic() - t0)
            shell_s.append(rec.milestones["shell"])
            if "login" in rec.guest_milestones:
                guest_s.append(rec.guest_milestones["login"])
            clock = rec.qemu_clock
            print(f"cycle {i}/{args.cycles}: {cycle_s[-1]:.1f} s, shell {shell_s[-1]:.4f} s"
                  + (f", guest login {guest_s[-1]:.4f} s" if guest_s else ""), flush=True)
    host = clocks.this_host()["id"]
    print(f"\nsoak of {args.cycles} cycles on qemu-arm ({strategy.kernel_under_test.name}), "
          f"host {host}, QEMU clock {clock}")
    print(f"failures: {len(failures)} of {args.cycles} (goal 0)")
    for i, why in failures:
        print(f"  cycle {i}: {why}")
    print("  " + spread("shell milestone (host arrival, host clock)", "s", shell_s))
    print("  " + spread(f"login stamp (guest clock, {clock})", "s", guest_s))
    print("  " + spread("cycle power-on -> shell -> off (host clock)", "s", cycle_s))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
