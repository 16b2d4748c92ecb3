#!/usr/bin/env python3
"""Time of a bisect, step by step: build, boots, measurement, and what is left (git,
the sessions, staging). Runs `boardlab bisect` over the test kernel tree of
tests/kerneltree.py (Debian's linux-source-6.1 with 18 commits, three of them
regressions) on the virtual board and prints where the time went.

    .venv/bin/python bench/bisect_time.py [--metric boot_time.guest_login] [--cold]

--cold empties the bisect's build directory and ccache first (a first bisect on a fresh
machine); by default they are kept from earlier runs, as a developer's would be.
Goal (issue #11): a 16-commit bisect on a boot metric in <= 15 minutes on this 2-core host."""
import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from boardlab.bisect import Bisect
from boardlab.bisect import run as bisect_run
from boardlab.errors import BoardlabError
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.measure import clocks
from kerneltree import make_tree  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metric", default="boot_time.guest_login")
    ap.add_argument("--cold", action="store_true", help="no build directory and no ccache to start with")
    args = ap.parse_args()
    t0 = time.monotonic()
    tree = make_tree()
    t_tree = time.monotonic() - t0
    probe = Bisect(str(tree.path), "", "", args.metric, "qemu-arm", "", str(
        (ROOT / "kernels/virt-nfs/qemu-arm.config").resolve()), "")
    if args.cold:
        shutil.rmtree(probe.build_dir(), ignore_errors=True)
        shutil.rmtree(CACHE_DIR / "ccache", ignore_errors=True)
    t1 = time.monotonic()
    try:
        b = bisect_run.start(tree.path, tree.base, tree.head, args.metric,
                             out=ROOT / "results" / time.strftime("bench-bisect-%Y%m%d-%H%M%S"))
    except BoardlabError as e:   # e.g. a metric the test tree does not regress: one line
        print(f"bisect_time: {e}", file=sys.stderr)
        return 2
    total = time.monotonic() - t1
    print(bisect_run.summary(b))
    found = b.first_bad and b.first_bad["rev"] in tree.culprits.values()
    print(f"host {clocks.this_host()['id']}, metric {args.metric}, {tree.commits} commits, "
          f"{'cold' if args.cold else 'warm'} build directory and ccache")
    print("| revision | role | build s | boots s | measure s |")
    print("|---|---|---:|---:|---:|")
    for s in b.steps:
        print(f"| {s.rev[:12]} | {s.role} | {s.build_s or 0:.1f} | {sum(s.boot_s):.1f} | {sum(s.measure_s):.1f} |")
    build = sum(s.build_s or 0 for s in b.steps)
    boots = sum(sum(s.boot_s) for s in b.steps)
    meas = sum(sum(s.measure_s) for s in b.steps)
    steps = [s for s in b.steps if s.role == "step"]
    print(f"\ntree made or found: {t_tree:.0f} s")
    print(f"bisect: {total:.0f} s ({total / 60:.1f} min) for {len(b.steps)} revisions "
          f"({len(steps)} git bisect steps): build {build:.0f} s ({build / total * 100:.0f} %), "
          f"boots {boots:.0f} s ({boots / total * 100:.0f} %), measurement {meas:.0f} s, "
          f"the rest (sessions, staging, git, power) {total - build - boots - meas:.0f} s")
    if steps:
        print(f"a step: build median {statistics.median(s.build_s or 0 for s in steps):.0f} s, "
              f"boot median {statistics.median(sum(s.boot_s) for s in steps):.0f} s")
    print(f"first bad commit {'is' if found else 'is NOT'} the culprit "
          f"({b.first_bad['rev'][:12] if b.first_bad else 'none'}); goal <= 15 min: "
          f"{'met' if total <= 900 else 'missed'}")
    subprocess.run(["git", "-C", str(tree.path), "status", "--short", "--branch"], check=False)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
