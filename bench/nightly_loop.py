#!/usr/bin/env python3
"""The loop with no person in it, timed: nightly builds -> history -> change points ->
bisect of the regression -> the commit, the improvement left alone.

The test kernel tree (tests/kerneltree.py: Debian's linux-source-6.1 with 18 commits, one
of them a 300 ms sleep in virtio-net's initcall) gets a branch of its own here,
`nightly-week`, from its head: three comments, the sleep reverted (an improvement), three
more comments (a level of one or two nights is too short for Otava to call a change). Each night `boardlab nightly` builds the branch's head as it stood that night,
boots it and lands it in a private history (SQUAD on a free port, its data in a temporary
directory), named by its revision: three nights before the regression, the night 16
commits later with it, three nights after it, the night of the revert, three nights after. Then
`history watch` runs unattended: Otava finds the two change points, the regression is
bisected between its two nights, the improvement is noted and not bisected. Prints each
night's time, the watch's decisions, the KCIDB statuses, and the time from the watch's
start to the named commit (host clock of this host).

    .venv/bin/python bench/nightly_loop.py [--metric boot_time.guest_login] [--board qemu-arm]
    .venv/bin/python bench/nightly_loop.py --board qemu-ppc --metric lmbench.lat_syscall_null_us \
        --families boot_time,memory,lmbench      # the syscall commit, on the PowerPC board

    .venv/bin/python bench/nightly_loop.py --metric lmbench.lat_pipe_us --families boot_time,memory,lmbench \
        --sick-from 6      # the board slowed mid-series (a steady load from night 6): no culprit

Goal (issue "Answers a kernel maintainer can act on"): the culprit named, the improvement
not bisected, nothing crashed; night to named commit <= 30 min for the 16-commit range.

With --sick-from N the board is slowed from night N on (--load, steady:10 by default: the
sick board on demand) and its health check (`lab check`'s, through labgrid, its figures in
a private board-health history) runs before each night: the week's commits do not move
the metric, so its one change point is the board's. Goal (issue "The board, not the
kernel"): no culprit named, the watch says the board drifted."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from boardlab.bisect import git  # noqa: E402
from boardlab.bisect.nightly import failed, nightly  # noqa: E402
from boardlab.bisect.watch import watch  # noqa: E402
from boardlab.facts.board import env_path, load_board  # noqa: E402
from boardlab.judge import boardhealth  # noqa: E402
from boardlab.judge.health import check_board  # noqa: E402
from boardlab.vlab.boardload import at_switch  # noqa: E402
from boardlab.history import kcidb  # noqa: E402
from boardlab.history import server as history_server  # noqa: E402
from boardlab.history.server import HistoryServer  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.net import free_port  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402
from kerneltree import _git, make_tree  # noqa: E402

# which of the tree's regressions moves a metric (tests/kerneltree.py): the culprit a watch
# must name; only the boot commit is reverted later in the week (an improvement left alone)
CULPRIT_BY_METRIC = (("boot_time.", "boot"), ("lmbench.lat_syscall_null_us", "syscall"), ("build.", "size"))


def culprit_of(metric: str) -> str:
    for prefix, culprit in CULPRIT_BY_METRIC:
        if metric.startswith(prefix):
            return culprit
    raise SystemExit(f"--metric {metric}: none of the test tree's commits moves it (known: "
                     f"{', '.join(p for p, _ in CULPRIT_BY_METRIC)})")


BRANCH = "nightly-week"   # (nightly-demo, an earlier shape, reverted after one night: too short a level for Otava)


def demo_branch(tree) -> list[str]:
    """The branch's commits after master's head (made once, fixed dates: the same ids)."""
    have = git(tree.path, "rev-parse", "-q", "--verify", f"refs/heads/{BRANCH}", check=False)
    if not have:
        _git(tree.path, "checkout", "-q", "-b", BRANCH, tree.head)
        doc = "Documentation/process/howto.rst"
        steps = [("docs: a note on the nightly builds", doc, None),
                 ("docs: who reads the nightly figures", doc, None),
                 ("docs: when the nightly builds start", doc, None),
                 ("Revert \"virtio_net: give the link time to settle before probing\"", None,
                  tree.culprits["boot"]),
                 ("docs: where the lab's figures are", doc, None),
                 ("docs: the lab's board list", doc, None),
                 ("docs: how to reserve a board", doc, None)]
        for n, (subject, path, revert) in enumerate(steps, 19):
            if revert:
                _git(tree.path, "revert", "--no-edit", revert, when=n)
            else:
                with open(tree.path / path, "a") as f:
                    f.write(f"\n.. {subject}\n")
                _git(tree.path, "commit", "-q", "-a", "-m", subject, when=n)
        _git(tree.path, "checkout", "-q", "master")
    return git(tree.path, "rev-list", "--reverse", f"{tree.head}..{BRANCH}").split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metric", default="boot_time.guest_login")
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--families", default=None, help="what each night measures (comma separated; default "
                    "the nightly's: the families one boot decides)")
    ap.add_argument("--sick-from", type=int, default=None, metavar="N",
                    help="slow the board from night N on (--load) and check its health each night")
    ap.add_argument("--load", default="steady:10", help="the load that slows it (boardlab vlab load)")
    args = ap.parse_args()
    if args.sick_from is None:
        culprit_of(args.metric)   # before anything is built
    data = Path(tempfile.mkdtemp(prefix="boardlab-nightly-"))
    # every run lands here, not in the lab's history: the nightly's suites (their own
    # processes) read the variable, this process's submissions the module's default
    os.environ["BOARDLAB_HISTORY_DIR"] = str(data)
    history_server.DATA_ROOT = data
    status = week(args, data)
    shutil.rmtree(data, ignore_errors=True)   # (left for a look when the week crashed)
    return status


def week(args, data: Path) -> int:
    """The nights, the watch, what they found: the bench's exit status."""
    tree = make_tree()
    revs = git(tree.path, "rev-list", "--reverse", f"{tree.base}..{tree.head}").split()
    after = demo_branch(tree)
    nights = [tree.base, revs[0], revs[1], tree.head] + after   # regression: 16 commits; revert: after[3]
    # the board's lab host's history: where `boardlab nightly` lands the board's runs
    # (qemu-ppc: vlab2) and where the watch reads them
    lab_host = load_board(args.board).lab_host
    server = HistoryServer(lab_host, port=free_port(), data=data / lab_host)
    culprit = None if args.sick_from is not None else tree.culprits[culprit_of(args.metric)]
    more = {"families": tuple(args.families.split(","))} if args.families else {}
    health = data / "health"
    boardhealth.HEALTH_DIR = health   # the watch's question "is the board drifting?" reads it
    print(f"host {clocks.this_host()['id']}, board {args.board}, metric {args.metric}, {len(nights)} nights: "
          f"{', '.join(r[:12] for r in nights)}; history {data}")
    took, crashed = [], []
    try:
        server.up()
        with kept_up(lab_host, boards=(args.board,)):
            for n, rev in enumerate(nights):   # the branch head as it stood that night
                if args.sick_from is not None:
                    health_check(args, n, data, health)
                t0 = time.monotonic()
                run = nightly(tree.path, rev, args.board, out=data / f"night-{n:02d}", **more)
                took.append(time.monotonic() - t0)
                crashed += [f"night {n}: {t}: {why}" for t, why in failed(run).items()]
            if args.sick_from is not None:   # well again (a lab that goes down forgets it anyway)
                at_switch(load_board(args.board), "none")
            t_watch = time.monotonic()
            done = watch(server, tree.path, board=args.board, metric=args.metric)
            loop = time.monotonic() - t_watch
            doc = kcidb.document(server)
            version = kcidb.validate(doc)
    finally:
        server.down()
    for n, (rev, s) in enumerate(zip(nights, took)):
        print(f"night {n}: {rev[:12]}: built, booted, measured, landed in {s:.0f} s (host clock)")
    for d in done:
        print(f"watch: {d['change']}: {d['state']}: {d['result']}")
    named = next((d["first_bad"]["rev"] for d in done if d.get("first_bad")), None)
    if args.sick_from is not None:
        return sick_outcome(args, named, done, crashed)
    right = named == culprit
    left_alone = [d for d in done if "improvement" in d["result"]]
    failures = [d for d in done if d["state"] != "done"]
    statuses = sorted({(b.get("status") or "-") for b in doc["builds"]})
    boots = sorted({t["status"] for t in doc["tests"] if t["path"] == "boot"})
    print(f"KCIDB {version}: {len(doc['builds'])} builds, statuses {statuses}; boot tests {boots}")
    print(f"first bad commit {named[:12] if named else 'none'} ({'the culprit' if right else 'NOT the culprit'} "
          f"{culprit[:12]}); improvements left alone: {len(left_alone)}; bisects that failed: "
          f"{len(failures)}; nights that failed: {len(crashed)} {crashed or ''}")
    print(f"from the watch's start to the named commit: {loop:.0f} s ({loop / 60:.1f} min), host clock, "
          f"host {clocks.this_host()['id']}; goal <= 30 min for {len(revs) - 2} commits: "
          f"{'met' if right and loop <= 1800 else 'missed'}")
    subprocess.run(["git", "-C", str(tree.path), "status", "--short", "--branch"], check=False)
    improvement_due = culprit == tree.culprits["boot"]   # the week reverts the boot commit only
    return 0 if right and (left_alone or not improvement_due) and not failures and not crashed else 1


def sick_outcome(args, named, done, crashed) -> int:
    """The board slowed mid-series: no culprit named, the drift said (the bench's status)."""
    drift_said = [d for d in done if "the board changed, not the kernel" in str(d.get("result", ""))]
    print(f"board slowed from night {args.sick_from} ({args.load}): first bad commit "
          f"{named[:12] if named else 'none'}; change points the watch gave to the board: "
          f"{len(drift_said)}; nights that failed: {len(crashed)} {crashed or ''}")
    met = not named and drift_said and not crashed
    print(f"goal (no culprit named, the board's drift said): {'met' if met else 'NOT met'}")
    return 0 if met else 1


def health_check(args, n: int, data: Path, health: Path) -> None:
    """The board's health check before night n (`lab check`'s, through labgrid), its figures
    kept in the bench's board-health history; the load switched on before night sick_from."""
    board = load_board(args.board)
    if n == args.sick_from:
        at_switch(board, args.load)
        print(f"night {n}: the board's load from now on: {args.load}", flush=True)
    check = check_board(env_path(board.name), data / f"check-{n:02d}", echo=lambda line: None)
    h = boardhealth.record(board, check.kernel, check.measured, directory=health)
    print(f"night {n}: health check: {h.line()}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
