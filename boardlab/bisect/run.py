"""The whole bisect: measure the good and the bad revision (a metric the bad one does
not regress is dropped), `git bisect run` the steps, name the first bad commit and each
metric's verdict there, leave the tree and the board as they were."""
from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
from pathlib import Path

from boardlab.bisect import (Bisect, BisectError, BisectInputError, BisectLabFault, check_tree, git,
                             metric_list, tree_lock)
from boardlab.bisect import revert as confirm
from boardlab.bisect import robot
from boardlab.bisect.step import run_revision
from boardlab.facts.board import KERNELS_DIR, env_path, load_board
from boardlab.facts.labfacts import default_board
from boardlab.judge import verdict as vd
from boardlab.judge.results import prepare_run_dir
from boardlab.log import progress
from boardlab.measure import catalogue, families, clocks

def default_config(board: str, kernels: Path = KERNELS_DIR) -> Path:
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
    """The good and the bad revision, measured first: bad must regress against good, in
    one metric at least; a metric it does not regress is dropped (b.dropped), and said."""
    for rev, role in ((b.good, "good"), (b.bad, "bad")):
        git(tree, "checkout", "-q", "--detach", rev)
        step = run_revision(b, rev, role)
        if step.answer == "stop":
            raise BisectLabFault(f"{role} revision {rev[:12]}: {step.why}; fix the lab and run again")
        if role == "good" and not step.samples:
            raise BisectError(f"the good revision {b.good} could not be measured: {step.why}")
        if role == "bad" and step.answer != "bad":
            raise BisectError(f"{b.metric} did not regress between {b.good} and {b.bad}: "
                              f"{step.verdict or 'not measured'} ({step.why}); nothing to bisect")
    kept, dropped = endpoint_metrics(step.verdicts, b.metrics)
    if dropped:
        b.dropped = {m: f"did not regress between {b.good[:12]} and {b.bad[:12]}: {step.verdicts.get(m)}"
                     for m in dropped}
        b.metrics = kept
        b.save()
        progress(f"not bisected: {', '.join(f'{m} ({why})' for m, why in b.dropped.items())}; "
                 f"bisecting {b.metric}")


def endpoint_metrics(outcomes: dict, metrics: list) -> tuple[list, list]:
    """(the metrics the bad revision regresses: the ones bisected, the others: dropped).
    No outcomes (a boot that failed, counted bad by --failed-boot bad): all are kept."""
    if not outcomes:
        return list(metrics), []
    kept = [m for m in metrics if outcomes.get(m) == vd.REGRESSED]
    return kept, [m for m in metrics if m not in kept]


def start(tree, good, bad, metric, board=None, env=None, config=None, root="",
          repeats=5, max_repeats=10, failed_boot="skip", out=None, revert=True) -> Bisect:
    """Run a whole bisect of one metric or several ("a,b" or a list: one build and one
    boot a sample for all of them); returns its state (first_bad set when one was found); revert:
    the culprit confirmed by revert and reported (report.txt)."""
    metrics = metric_list(metric)
    if not metrics:
        raise BisectInputError("--metric: no metric named")
    for m in metrics:
        spec = catalogue.spec(m)   # an unknown metric is an error before anything is built
        if families.get(spec.suite).host_work and not spec.exact:
            raise BisectInputError(f"{m}: an incremental build's time says nothing of the revision; "
                                   f"bisect a size (build.*_bytes) or a metric measured on the board")
    metric = ",".join(metrics)
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
        b = Bisect(str(tree), good, bad, metrics, board, str(env), str(config), str(run_dir), root,
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
        if "boot_time" in b.families:
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
            raise BisectLabFault(f"the bisect stopped at {stopped.rev[:12]} ({stopped.subject!r}): "
                           f"{stopped.why}. No revision was judged by it; the steps so far are "
                           f"in {run_dir}/bisect.json. Fix the lab and run again")
        b.first_bad, b.candidates = _answer(b, tree, log)
        if b.first_bad:
            b.first_bad["metrics"] = at_first_bad(b, b.first_bad["rev"])
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


def _median(values) -> float | None:
    return statistics.median(values) if values else None


def at_first_bad(b: Bisect, rev: str) -> dict:
    """{metric: {verdict, good, bad, change_pct}}: each metric bisected at the first bad
    commit (its medians, good and there), and each dropped one with why."""
    good = b.good_samples()
    there = next((s for s in reversed(b.steps) if s.rev == rev and s.role != "good"), None)
    out = {}
    for m in b.metrics:
        g = _median(good.get(m, []))
        x = _median(there.samples.get(m, [])) if there else None
        unmeasured = f"not measured ({there.why})" if there and there.why and not there.verdicts else "not measured"
        out[m] = {"verdict": (there.verdicts.get(m) if there else None) or unmeasured,
                  "good": g, "bad": x,
                  "change_pct": round(100.0 * (x - g) / g, 3) if g and x is not None else None}
    for m, why in b.dropped.items():
        out[m] = {"verdict": "dropped", "why": why, "good": _median(good.get(m, [])), "bad": None,
                  "change_pct": None}
    return out


def verdict_line(metric: str, v: dict) -> str:
    """One metric at the first bad commit, in a line."""
    if v["verdict"] == "dropped":
        return f"{metric}: not bisected: {v['why']}"
    unit = catalogue.spec(metric).unit
    fig = lambda x: "-" if x is None else f"{x:g} {unit}"  # noqa: E731
    change = "" if v["change_pct"] is None else f" ({v['change_pct']:+.2f} %)"
    return f"{metric}: {v['verdict']}, good {fig(v['good'])} -> {fig(v['bad'])}{change}"


def table(b: Bisect) -> str:
    """Every step, in the order measured, as a Markdown table: a column per metric (the
    median, n, the verdict)."""
    metrics = b.metrics + [m for m in b.dropped if m not in b.metrics]
    rows = ["| # | revision | subject | build s | boots | "
            + " | ".join(f"{m} ({catalogue.spec(m).unit})" for m in metrics)
            + " | n | verdict | git |",
            "|---:|---|---|---:|---:|" + "---:|" * len(metrics) + "---:|---|---|"]
    for i, s in enumerate(b.steps):
        meds = " | ".join(f"{statistics.median(s.samples[m]):g}" if s.samples.get(m) else "-" for m in metrics)
        n = "/".join(str(len(s.samples.get(m, []))) for m in metrics)
        verdict = (s.verdict or "-") if len(s.verdicts) < 2 else ", ".join(
            f"{m.split('.', 1)[1]} {o}" for m, o in s.verdicts.items())
        rows.append(f"| {i} | {s.rev[:12]} ({s.role}) | {s.subject[:50]} | {s.build_s or '-'} | "
                    f"{len(s.boot_s)} | {meds} | {n} | {verdict} | {s.answer} |")
    return "\n".join(rows) + "\n"


def summary(b: Bisect) -> str:
    if b.first_bad:
        head = (f"first bad commit for {b.metric}: {b.first_bad['rev']}\n"
                f"    {b.first_bad['subject']}\n")
        head += "".join(f"    {verdict_line(m, v)}\n" for m, v in b.first_bad.get("metrics", {}).items())
    elif b.candidates:
        head = (f"no first bad commit found for {b.metric}: skipped revisions only; it is one of\n"
                + "".join(f"    {c['rev'][:12]} {c['subject']} ({c['why']})\n" for c in b.candidates))
    else:
        head = f"no first bad commit found for {b.metric} (see the steps below and bisect.log)\n"
    if b.dropped and not (b.first_bad and b.first_bad.get("metrics")):
        head += "".join(f"not bisected: {m}: {why}\n" for m, why in b.dropped.items())
    if b.hint:
        head += f"leading change between good and bad: {b.hint}\n"
    return head + "\n" + table(b) + "\n" + clocks_line(b) + f"\nrun directory: {b.run_dir}\n"


def clocks_line(b: Bisect) -> str:
    """Which clock the table's figures are on."""
    board = load_board(b.board)
    said = []
    for m in b.metrics + [m for m in b.dropped if m not in b.metrics]:
        spec = catalogue.spec(m)
        clock = clocks.metric_clock(spec.suite, spec.name, spec.unit, board)
        said.append(f"{m} {'none, a size' if clock == clocks.NO_CLOCK else clock}")
    return f"clocks: {', '.join(said)}; build s the host clock ({clocks.this_host()['id']})\n"
