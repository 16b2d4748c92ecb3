"""The whole bisect: measure the good and the bad revision, `git bisect run` the steps,
name the first bad commit, leave the tree and the board as they were."""
from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
from pathlib import Path

from boardlab.bisect import (Bisect, BisectError, BisectInputError, LabFault, check_tree, git,
                             tree_lock)
from boardlab.bisect import revert as confirm
from boardlab.bisect import robot
from boardlab.bisect.step import run_revision
from boardlab.facts.board import PROJECT_ROOT, env_path, load_board
from boardlab.facts.labfacts import default_board
from boardlab.judge.results import prepare_run_dir
from boardlab.log import progress
from boardlab.measure import catalogue, clocks

def default_config(board: str, kernels: Path = PROJECT_ROOT / "kernels") -> Path:
    """The board's own kernel config: kernels/virt-nfs/<board>.config (the virtual board's),
    else the one kernels/*/<board>.config there is (kernels/6.1/tqm860l.config)."""
    preferred = kernels / "virt-nfs" / f"{board}.config"
    found = [preferred] if preferred.exists() else sorted(kernels.glob(f"*/{board}.config"))
    if len(found) != 1:
        raise BisectInputError(f"board {board}: {'no' if not found else 'more than one'} kernel config "
                          f"under {kernels} ({', '.join(str(f) for f in found) or f'*/{board}.config'}); "
                          f"name one with --config")
    return found[0].resolve()


def _measure_endpoints(b: Bisect, tree: Path):
    """The good and the bad revision, measured first: bad must be regressed against good."""
    for rev, role in ((b.good, "good"), (b.bad, "bad")):
        git(tree, "checkout", "-q", "--detach", rev)
        step = run_revision(b, rev, role)
        if step.answer == "stop":
            raise LabFault(f"{role} revision {rev[:12]}: {step.why}; fix the lab and run again")
        if role == "good" and not step.samples:
            raise BisectError(f"the good revision {b.good} could not be measured: {step.why}")
        if role == "bad" and step.answer != "bad":
            raise BisectError(f"{b.metric} did not regress between {b.good} and {b.bad}: "
                              f"{step.verdict or 'not measured'} ({step.why}); nothing to bisect")


def start(tree, good, bad, metric, board=None, env=None, config=None, root="",
          repeats=5, max_repeats=10, failed_boot="skip", out=None, revert=True) -> Bisect:
    """Run a whole bisect; returns its state (first_bad set when one was found)."""
    spec = catalogue.spec(metric)   # an unknown metric is an error before anything is built
    if spec.suite == "build" and not spec.exact:
        raise BisectInputError(f"{metric}: an incremental build's time says nothing of the revision; "
                          f"bisect a size (build.*_bytes) or a metric measured on the board")
    if repeats < 1 or max_repeats < 1:
        raise BisectInputError(f"--repeats {repeats} --max-repeats {max_repeats}: boots a revision, at least 1")
    tree = Path(tree).resolve()
    board = board or default_board()
    config = Path(config).resolve() if config else default_config(board)
    if not config.exists():
        raise BisectInputError(f"kernel config fragment {config} not found (--config)")
    env = Path(env or env_path(board)).resolve()
    if not env.exists():
        raise BisectInputError(f"labgrid environment {env} not found (--env)")
    with tree_lock(tree, f"bisect of {metric} {good}..{bad}"):   # two would move each other's checkout
        origin, good, bad = check_tree(tree, good, bad)
        run_dir = prepare_run_dir(out, prefix="bisect-").resolve()
        b = Bisect(str(tree), good, bad, metric, board, str(env), str(config), str(run_dir), root,
                   repeats, max_repeats, failed_boot)
        b.save()
        return _bisect(b, tree, origin, revert)


def _bisect(b: Bisect, tree: Path, origin: str, revert: bool = True) -> Bisect:
    """On a virtual board: its lab host up for the bisect (and down after, if it was); a
    culprit confirmed by revert while the board and the tree are still held (revert),
    and reported (robot)."""
    from boardlab.vlab.host import virtual_host_of
    from boardlab.vlab.lab import kept_up
    host = virtual_host_of(load_board(b.board)) if b.needs_boot else None
    with kept_up(host, boards=(b.board,)) if host else contextlib.nullcontext():
        b = _bisect_steps(b, tree, origin)
        if b.first_bad:
            _confirm_and_report(b, revert)
        return b


def _confirm_and_report(b: Bisect, revert: bool):
    """The culprit reverted (unless --no-revert) and reported in report.txt. Neither may
    lose the culprit an hours-long bisect found: a failure here is said, not raised."""
    try:
        if revert:
            confirm.confirm(b)
        else:
            confirm.not_tried(b, "--no-revert")
        robot.write(b.run_dir)
    except Exception as e:  # noqa: BLE001 - the culprit stands without its report
        progress(f"WARNING: no report of the culprit: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")


def _bisect_steps(b: Bisect, tree: Path, origin: str) -> Bisect:
    """Measure the endpoints, `git bisect run` the steps, leave the tree as found."""
    good, bad, run_dir = b.good, b.bad, Path(b.run_dir)
    started = False
    try:
        _measure_endpoints(b, tree)
        if b.spec.suite == "boot_time":
            _where_hint(b)
        git(tree, "checkout", "-q", origin)
        git(tree, "bisect", "start", bad, good, "--")
        started = True
        progress(f"git bisect run over {git(tree, 'rev-list', '--count', f'{good}..{bad}')} commits")
        proc = subprocess.Popen(["git", "-C", str(tree), "bisect", "run", sys.executable, "-m",
                                 "boardlab.bisect.step", str(run_dir)])
        try:
            proc.wait()
        except KeyboardInterrupt:   # the step got it too: it powers the board off first
            progress("interrupted: waiting for the step to power the board off")
            proc.wait(timeout=120)
            raise
        b = Bisect.load(run_dir)
        log = git(tree, "bisect", "log", check=False)
        (run_dir / "bisect.log").write_text(log + "\n")
        stopped = next((s for s in b.steps if s.answer == "stop"), None)
        if stopped is not None:
            raise LabFault(f"the bisect stopped at {stopped.rev[:12]} ({stopped.subject!r}): "
                           f"{stopped.why}. No revision was judged by it; the steps so far are "
                           f"in {run_dir}/bisect.json. Fix the lab and run again")
        b.first_bad, b.candidates = _answer(b, tree, log)
        b.save()
        return b
    finally:
        back = ["bisect", "reset"] if started else ["checkout", "-q", origin]
        r = subprocess.run(["git", "-C", str(tree), *back], capture_output=True, text=True)
        if r.returncode != 0:   # said, not raised: it must not hide why the bisect ended
            progress(f"WARNING: `git {' '.join(back)}` in {tree} failed, the tree is not as it "
                     f"was found: {(r.stderr or r.stdout).strip()}")


def _answer(b: Bisect, tree: Path, log: str) -> tuple[dict | None, list]:
    """(the first bad commit, None) or, when git was left with skipped revisions only,
    (None, the revisions the first bad commit is among: git's "could be any of", which
    only its output says), each with why it was skipped. Read before `git bisect reset`."""
    first = git(tree, "rev-parse", "-q", "--verify", "refs/bisect/bad", check=False)
    if not first:
        return None, []
    if f"# first bad commit: [{first}]" in log:
        return {"rev": first, "subject": _subject(tree, first)}, []
    goods = git(tree, "for-each-ref", "--format=%(objectname)", "refs/bisect/good-*").split()
    why = {s.rev: s.why if s.answer == "skip" else s.answer for s in b.steps}
    return None, [{"rev": r, "subject": _subject(tree, r), "why": why.get(r, "not measured")}
                  for r in git(tree, "rev-list", first, "--not", *goods).split()]


def _subject(tree: Path, rev: str) -> str:
    return git(tree, "log", "-1", "--format=%s", rev)


def _where_hint(b: Bisect):
    """Before the bisect: the good and the bad kernel booted once more each with their
    phase log, and the largest span change said (b.hint; often the answer already). A
    hint only: its failure is said and the bisect goes on."""
    from boardlab.errors import BoardlabError
    from boardlab.judge import bootspans
    from boardlab.ab import compare
    good, bad = (next(s for s in b.steps if s.role == r) for r in ("good", "bad"))
    images = [str(Path(s.dir) / f"bisect-{s.rev[:12]}.uImage") for s in (good, bad)]
    progress("where the boot time went between good and bad: one boot each with the kernel's phase log")
    try:
        sides, _, files = compare.compare(b.env, images, families=("boot_time",), repeats=1, max_repeats=1,
                                          out_dir=Path(b.run_dir) / "where", phase_log=True)
        went = bootspans.of_sides(*sides)
    except (BoardlabError, ValueError, OSError) as e:
        b.hint = f"no hint: {str(e).splitlines()[0]}"
    else:
        b.hint = bootspans.leading_change(went) + f" (details: {files['markdown']})"
    progress(f"leading change: {b.hint}")
    b.save()


def table(b: Bisect) -> str:
    """Every step, in the order measured, as a Markdown table."""
    unit = b.spec.unit
    rows = ["| # | revision | subject | build s | boots | " + f"{b.metric} ({unit})" +
            " | n | verdict | git |", "|---:|---|---|---:|---:|---:|---:|---|---|"]
    for i, s in enumerate(b.steps):
        med = f"{statistics.median(s.samples):g}" if s.samples else "-"
        rows.append(f"| {i} | {s.rev[:12]} ({s.role}) | {s.subject[:50]} | {s.build_s or '-'} | "
                    f"{len(s.boot_s)} | {med} | {len(s.samples)} | {s.verdict or '-'} | {s.answer} |")
    return "\n".join(rows) + "\n"


def summary(b: Bisect) -> str:
    if b.first_bad:
        head = (f"first bad commit for {b.metric}: {b.first_bad['rev']}\n"
                f"    {b.first_bad['subject']}\n")
    elif b.candidates:
        head = (f"no first bad commit found for {b.metric}: skipped revisions only; it is one of\n"
                + "".join(f"    {c['rev'][:12]} {c['subject']} ({c['why']})\n" for c in b.candidates))
    else:
        head = f"no first bad commit found for {b.metric} (see the steps below and bisect.log)\n"
    if b.hint:
        head += f"leading change between good and bad: {b.hint}\n"
    return head + "\n" + table(b) + "\n" + clocks_line(b) + f"\nrun directory: {b.run_dir}\n"


def clocks_line(b: Bisect) -> str:
    """Which clock the table's figures are on."""
    suite, name = b.metric.split(".", 1)
    metric = clocks.metric_clock(suite, name, b.spec.unit, load_board(b.board))
    metric = "none, a size" if metric == clocks.NO_CLOCK else metric
    return f"clocks: {b.metric} {metric}; build s the host clock ({clocks.this_host()['id']})\n"

