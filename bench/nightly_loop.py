#!/usr/bin/env python3
"""The loop with no person in it, timed: nightly runs -> history -> change point ->
bisect -> the commit, on a boot metric of the virtual board.

Nightly builds of the test kernel tree (tests/kerneltree.py: Debian's linux-source-6.1
with 18 commits, one of them a 300 ms sleep in virtio-net's initcall) are measured one
after another as the bisect measures a revision (built, booted, the metric sampled) and
land in a private history (SQUAD on a free port, its data in a temporary directory):
three nights without the regression, then a night 16 commits later with it. From the
moment that night's run has landed, `history watch` runs unattended: Otava finds the
change point, the bisect runs between the two nightly builds, the first bad commit is
noted on the build. Prints each night's time and the time from the regressed night to
the named commit (all on the host clock of this host).

    .venv/bin/python bench/nightly_loop.py [--metric boot_time.guest_login]

Goal (issue "A lab that remembers"): <= 30 min on this host for a 16-commit range."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(tempfile.mkdtemp(prefix="boardlab-nightly-"))
os.environ["BOARDLAB_HISTORY_DIR"] = str(DATA)   # every run lands here, not in the lab's history
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from boardlab.bisect import Bisect, git, tree_lock  # noqa: E402
from boardlab.bisect.run import default_config  # noqa: E402
from boardlab.bisect.step import run_revision  # noqa: E402
from boardlab.bisect.watch import watch  # noqa: E402
from boardlab.history.server import HistoryServer  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.net import free_port  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402
from kerneltree import make_tree  # noqa: E402


def nightly(tree, rev: str, metric: str, night: int) -> float:
    """One night: the revision built, booted, measured; its run lands in the history."""
    t0 = time.monotonic()
    with tree_lock(tree.path):
        origin = git(tree.path, "rev-parse", "--abbrev-ref", "HEAD")
        git(tree.path, "checkout", "-q", "--detach", rev)
        try:
            run_dir = DATA / f"night-{night:02d}"
            b = Bisect(str(tree.path), rev, rev, metric, "qemu-arm", str(ROOT / "lab" / "qemu-arm.yaml"),
                       str(default_config("qemu-arm")), str(run_dir))
            run_dir.mkdir(parents=True)
            step = run_revision(b, rev, "good")    # as measured alone: no verdict, samples kept
        finally:
            git(tree.path, "checkout", "-q", origin if origin != "HEAD" else tree.head)
    assert step.samples, f"night {night}: {rev[:12]} not measured: {step.why}"
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metric", default="boot_time.guest_login")
    args = ap.parse_args()
    tree = make_tree()
    revs = git(tree.path, "rev-list", "--reverse", f"{tree.base}..{tree.head}").split()
    nights = [tree.base, revs[0], revs[1], tree.head]          # the last range: 16 commits
    span = len(revs) - 2
    server = HistoryServer("vlab", port=free_port(), data=DATA / "vlab")
    print(f"host {clocks.this_host()['id']}, metric {args.metric}, nights at "
          f"{', '.join(r[:12] for r in nights)}; the last range {span} commits; history {DATA}")
    try:
        server.up()
        with kept_up("vlab", boards=("qemu-arm",)):
            took = [nightly(tree, rev, args.metric, n) for n, rev in enumerate(nights)]
            t_landed = time.monotonic()
            done = watch(server, tree.path, board="qemu-arm", metric=args.metric)
            loop = time.monotonic() - t_landed
    finally:
        server.down()
    for n, (rev, s) in enumerate(zip(nights, took)):
        print(f"night {n}: {rev[:12]}: built, booted, measured, landed in {s:.0f} s")
    found = [d for d in done if d.get("first_bad")]
    named = found[0]["first_bad"]["rev"] if found else None
    right = named == tree.culprits["boot"]
    print(f"change points handled: {len(done)}; first bad commit {named[:12] if named else 'none'} "
          f"({'the culprit' if right else 'NOT the culprit'} {tree.culprits['boot'][:12]})")
    print(f"from the regressed night's landing to the named commit: {loop:.0f} s ({loop / 60:.1f} min), "
          f"host clock, host {clocks.this_host()['id']}; goal <= 30 min for {span} commits: "
          f"{'met' if right and loop <= 1800 else 'missed'}")
    subprocess.run(["git", "-C", str(tree.path), "status", "--short", "--branch"], check=False)
    shutil.rmtree(DATA, ignore_errors=True)
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
