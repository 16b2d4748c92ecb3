#!/usr/bin/env python3
"""Power-off -> shell -> power-off on the virtual board, two ways side by side: the
labgrid BoardStrategy (what the pytest suites use), and a boot-only LAVA job run by
lava-run (deploy to TFTP, u-boot boot, auto-login, finalize). Runs alternate
(A B A B ...) so host noise hits both alike; prints each run's wall time and boot
milestones, the medians and the ratio LAVA / strategy.

    .venv/bin/python bench/lava_vs_strategy.py [--runs 3]

Brings the virtual lab up if it is not (and down again at the end)."""
import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab import lava
from boardlab.facts.board import env_path, load_board
from boardlab.measure.clocks import this_host
from boardlab.vlab.lab import kept_up


def strategy_run(log_dir):
    """A fresh labgrid environment each run: ser2net (kickolduser) hands the console to
    the newest client, and LAVA's telnet took it in between."""
    from labgrid import Environment
    env = Environment(str(env_path("qemu-arm")))
    try:
        strategy = env.get_target("main").get_driver("Strategy")
        strategy.log_dir = str(log_dir)
        t0 = time.monotonic()
        strategy.transition("shell")
        strategy.transition("off")
        return time.monotonic() - t0, strategy.last_boot.milestones
    finally:
        env.cleanup()


def lava_run(board, lab, work, job_id):
    job = lava.render_job(board, suites=["boot_time"], testdefs_url="file:///unused")
    files = lava.prepare_run(board, job, work, lab)
    t0 = time.monotonic()
    rc, log = lava.lava_run(files, work, job_id, echo=lambda *_: None)
    wall = time.monotonic() - t0
    if rc != 0:
        raise SystemExit(f"lava-run failed ({rc}): {log}")
    return wall, lava.boot_milestones(lava.read_log(log.read_text()), board)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    board = load_board("qemu-arm")
    lab_stack = contextlib.ExitStack()   # through the lab and its leases: every host up
    vlab = lab_stack.enter_context(kept_up("vlab", boards=("qemu-arm",)))
    walls = {"strategy": [], "lava": []}
    shells = {"strategy": [], "lava": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.runs):
                for how in ("strategy", "lava"):
                    if how == "strategy":
                        wall, ms = strategy_run(Path(tmp))
                    else:
                        wall, ms = lava_run(board, vlab.lab, Path(tmp) / f"lava-{i}", 7000 + i)
                    walls[how].append(wall)
                    shells[how].append(ms.get("shell", float("nan")))
                    print(f"run {i + 1} {how:8s}: wall {wall:6.2f} s  "
                          + "  ".join(f"{k} {v:.3f}" for k, v in ms.items()), flush=True)
    finally:
        lab_stack.close()
    med = {k: statistics.median(v) for k, v in walls.items()}
    print(f"median wall, power-off -> shell -> off: strategy {med['strategy']:.2f} s, "
          f"lava-run {med['lava']:.2f} s, ratio lava/strategy {med['lava'] / med['strategy']:.2f}")
    print(f"median shell milestone: strategy {statistics.median(shells['strategy']):.3f} s, "
          f"lava {statistics.median(shells['lava']):.3f} s")
    print(f"host {this_host()['id']}, {time.strftime('%F')}, host clock")


if __name__ == "__main__":
    main()
