"""`boardlab nightly`: a kernel tree's branch head built, measured on the board and
landed in the lab's history, named by its revision: the series `history watch` looks for
change points in and bisects. The schedule runs it once a night per tree
(jobs/schedule.yaml `trees:`; `boardlab lava schedule` prints it beside the LAVA jobs).

What happened is said as tests beside the figures (KCIDB's statuses come from them):
kernel/checkout, kernel/build, kernel/boot, each pass or fail with why. A build that
fails or a kernel that does not boot is a result of the night, landed like the others;
a lab fault (power, console, TFTP, a board shared with LAVA not had at the coordinator)
is not the kernel's: it lands as kernel/boot error (KCIDB's ERROR), and the night fails
loudly. The build directory is the bisect's own (one per tree, board and config), so a
bisect of a night's range starts warm."""
from __future__ import annotations

import contextlib
import statistics
import time
from pathlib import Path

from boardlab.bisect import BisectInputError, build_dir_of, git, tree_lock
from boardlab.boot.bootlog import BootError
from boardlab.sharing.placehold import PlaceHoldError
from boardlab.kernelbuilds.kbuild import KernelBuildError, build_tree
from boardlab.errors import BoardlabError, fault_of
from boardlab.facts.board import env_path, load_board
from boardlab.facts.labfacts import default_board
from boardlab.history.submit import land, parse_environment
from boardlab.judge import mdc
from boardlab.judge import verdict as vd
from boardlab.judge.decide import EXACT_SHOWN, Figures, decide, sampled_enough
from boardlab.judge.outcomes import of_fault
from boardlab.judge.results import RunResults, prepare_run_dir
from boardlab.log import progress
from boardlab.measure import catalogue, families, sample
from boardlab.measure.clocks import metric_clock, this_host

DEFAULT_FAMILIES = tuple(f.name for f in families.FAMILIES if f.one_boot)   # exact: one boot decides
PASS, FAIL, ERROR = "pass", "fail", "error"   # error: a lab fault (judge.outcomes)


def outcome(results: RunResults, board: str, kernel: str, test: str, result: str, why: str = ""):
    """One test of what happened to the night's kernel (kernel/build: fail, ...)."""
    entry = results.meta.setdefault("outcomes", {}).setdefault(f"{board}/{kernel}", {})
    entry[test] = result
    if why:
        entry.setdefault("why", {})[test] = why
    results.save()


def _check(tree: Path, branch: str, families) -> str:
    bad = [f for f in families if f not in sample.FAMILIES]
    if bad:
        raise BisectInputError(f"--families {','.join(families)}: no family {', '.join(bad)} "
                               f"(a boot measures: {', '.join(sample.FAMILIES)})")
    if not (tree / ".git").exists():
        raise BisectInputError(f"{tree}: not a git work tree (--tree names a kernel source checkout)")
    rev = git(tree, "rev-parse", "--verify", "-q", f"{branch}^{{commit}}", check=False)
    if not rev:
        raise BisectInputError(f"{tree}: no branch or revision {branch!r}")
    return rev


def _build(results, board, tree: Path, rev: str, config: Path, uimage: Path) -> bool:
    """The revision built (the tree checked out there and back); False when it failed."""
    kernel = rev[:12]
    origin = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False) or git(tree, "rev-parse", "HEAD")
    try:
        git(tree, "checkout", "-q", "--detach", rev)
    except BoardlabError as e:
        outcome(results, board.name, kernel, "kernel/checkout", FAIL, str(e).splitlines()[0])
        return False
    outcome(results, board.name, kernel, "kernel/checkout", PASS)
    try:
        progress(f"nightly {kernel}: building for {board.name}")
        built = build_tree(board, tree, build_dir_of(tree, board.name, config), config, uimage)
    except KernelBuildError as e:
        outcome(results, board.name, kernel, "kernel/build", FAIL, str(e).splitlines()[0])
        return False
    finally:
        git(tree, "checkout", "-q", origin)
    outcome(results, board.name, kernel, "kernel/build", PASS)
    for name, value in built.figures().items():
        if catalogue.spec(f"build.{name}").exact:   # sizes; an incremental build's times say nothing
            results.record(board, kernel, "build", name, value)
    return True


def night_reference(spec, entries) -> Figures | None:
    """What tonight's samples of a metric are judged against while the night samples: the
    newest night's in its series (entries: history.changes.recent_samples' newest first),
    with the nights of that series before it pooled while they agree to a quarter of the
    floor, up to EXACT_SHOWN samples, so that a night of one boot at a level earlier
    nights showed leaves the next night a side whose exactness is still shown. None: no
    night before."""
    if not entries:
        return None
    _, newest, env = entries[0]
    pooled = [float(x) for x in newest]
    for _, values, e in entries[1:]:
        more = pooled + [float(x) for x in values]
        if len(pooled) >= EXACT_SHOWN or not vd.agree(more, spec.floor(statistics.median(more))):
            break
        pooled = more if e == env else pooled
    where = parse_environment(env)
    return Figures(pooled, where["clock"] or None, where["host"] or None)


def references(board, rev: str, families) -> dict:
    """{metric key: Figures} of the night's series before tonight, from the lab's history;
    {} where it keeps none or SQUAD does not answer (said: the night then shows its own
    exactness, EXACT_SHOWN boots)."""
    from boardlab.history.changes import recent_samples
    from boardlab.history.server import HistoryError, HistoryServer
    server = HistoryServer(board.lab_host)
    if not server.keeps_history() or not server.is_up():
        progress(f"nightly: no history of {board.lab_host} answers: each figure shows its own exactness")
        return {}
    try:
        recent = recent_samples(server, board.name, not_build=rev)
    except (HistoryError, OSError) as e:
        progress(f"nightly: the history of {board.lab_host} not read ({e}): each figure shows its own exactness")
        return {}
    out = {}
    for key, entries in recent.items():
        spec = catalogue.METRICS.get(key)
        if spec is not None and spec.suite in families and not spec.not_judged:
            out[key] = night_reference(spec, entries)
    return out


def _tonight(board, spec, values, clock) -> Figures:
    """Tonight's samples of a metric as the judge takes them: its clock on the board, this host."""
    return Figures(values, metric_clock(spec.suite, spec.name, spec.unit, board, clock), this_host()["id"])


def _enough(board, samples: dict, against: dict, clock, budget: int) -> bool:
    """Every figure of the night sampled enough against its series (decide.sampled_enough)."""
    for key, values in samples.items():
        spec = catalogue.spec(key)
        if spec.not_judged:
            continue
        if not sampled_enough(spec, _tonight(board, spec, values, clock), against.get(key), board,
                              min(EXACT_SHOWN, budget), budget, interleaved=False):
            return False
    return True


def _verdicts(board, samples: dict, against: dict, clock, budget: int, seen: dict) -> dict:
    """{metric: {outcome, why, boots}} of tonight against the night before (said in
    results.json meta.nightly.against_last_night; the watch judges the series); an
    unknown one says the smallest change this board decides in the budget (judge.mdc)."""
    out = {}
    for key, values in samples.items():
        spec = catalogue.spec(key)
        if spec.not_judged or key not in against:
            continue
        v = decide(spec, against[key], _tonight(board, spec, values, clock), board)
        if v.outcome == vd.UNKNOWN:
            if key in seen:   # {metric: mdc.Detectable}, as said before the first boot
                v.why += f"; the smallest change this board decides in {budget} boots: {seen[key].words()}"
        out[key] = {"outcome": v.outcome, "why": v.why, "boots": len(values)}
    return out


def _measure(results, board, kernel: str, uimage: Path, families, budget: int, root: str, against: dict):
    """Boots of the built kernel until every figure is decided against the night before (or
    shown exact, or out of reach), up to budget; every family's figures recorded with
    their samples."""
    from boardlab.boot.session import board_session
    from boardlab.vlab.host import virtual_host_of
    from boardlab.vlab.lab import kept_up
    host = virtual_host_of(board)
    env = env_path(board.name)
    samples: dict = {}
    stored, rows = mdc.of_suites(board, families, budget)   # what this board and budget can see
    line = mdc.said(board, stored, rows, budget)
    if line:
        progress(f"nightly {kernel}: {line}")
    with kept_up(host, boards=(board.name,)) if host else contextlib.nullcontext(), \
            board_session(env, results.run_dir / "console", command="nightly") as (strategy, shell):
        strategy.select(kernel=str(uimage), root=root, ramdisk="")

        booted = []

        def one_boot():
            figures, _ = sample.one_sample(strategy, shell, families)
            booted.append(figures)
            for key, v in figures.items():
                samples.setdefault(key, []).append(float(v))
            progress(f"nightly {kernel}: boot {len(booted)} (at most {budget}) measured ({len(figures)} figures)")

        def clock():
            return strategy.last_boot.qemu_clock if strategy.last_boot else None
        try:
            vd.sample_until_decided(one_boot, lambda: _enough(board, samples, against, clock(), budget),
                                    1, budget)
        except BootError as e:
            result, why = of_fault(fault_of(e))   # the lab's error names its part
            outcome(results, board.name, kernel, "kernel/boot", result, why)
            if result != FAIL:   # not the kernel's fault: said, and the night fails
                raise
            return
        qemu_clock = clock()
    outcome(results, board.name, kernel, "kernel/boot", PASS)
    results.meta["nightly"]["against_last_night"] = _verdicts(board, samples, against, qemu_clock, budget,
                                                           {d.metric: d for d in rows})
    for key, values in samples.items():
        suite, name = key.split(".", 1)
        results.record(board, kernel, suite, name, statistics.median(values), samples=values,
                       qemu_clock=qemu_clock)


def nightly(tree, branch: str = "HEAD", board_name: str | None = None, families=DEFAULT_FAMILIES,
            boots: int = mdc.DEFAULT_BUDGET, config=None, root: str = "", out=None, tree_name: str = "") -> Path:
    """The night's run of a tree: its run directory (results.json, console logs), landed.
    boots: at most this many (the budget; fewer where the figures decide, nightly's
    sample_until_decided).
    tree_name: the tree's name as KernelCI names trees (mainline, stable, next...): told,
    never guessed from a directory."""
    from boardlab.bisect.run import default_config
    board = load_board(board_name or default_board())
    if boots < 1:
        raise BisectInputError(f"--boots {boots}: at least 1")
    tree = Path(tree).resolve()
    config = Path(config).resolve() if config else default_config(board.name)
    t0 = time.monotonic()
    _check(tree, branch, families)   # bad input said before anything is written or waited for
    with tree_lock(tree, f"nightly of {branch}"):   # a bisect of the tree first, then this
        rev = _check(tree, branch, families)         # where the branch is now, after the wait
        kernel = rev[:12]
        run_dir = prepare_run_dir(out, prefix=f"nightly-{kernel}-").resolve()
        results = RunResults(run_dir)
        results.meta["nightly"] = {"tree": str(tree), "branch": branch, "rev": rev,
                                   "subject": git(tree, "log", "-1", "--format=%s", rev),
                                   "url": git(tree, "ls-remote", "--get-url", check=False),
                                   **({"tree_name": tree_name} if tree_name else {})}
        uimage = run_dir / f"{kernel}.uImage"
        built = _build(results, board, tree, rev, config, uimage)
    if built and families:   # no families: the build's sizes alone, no board taken
        try:
            _measure(results, board, kernel, uimage, families, boots, root,
                     references(board, rev, families))
        except (BootError, PlaceHoldError) as e:   # the lab's fault: landed as kernel/boot error, then the night fails
            if isinstance(e, PlaceHoldError):       # the shared board not had at the coordinator: no boot
                outcome(results, board.name, kernel, "kernel/boot", *of_fault(fault_of(e)))
            land(run_dir, board.lab_host, progress=progress)
            raise
    land(run_dir, board.lab_host, progress=progress)
    said = results.meta.get("outcomes", {}).get(f"{board.name}/{kernel}", {})
    progress(f"nightly {kernel} ({branch}): " + ", ".join(f"{t} {r}" for t, r in said.items()
                                                          if t != "why")
             + f"; {len(results.metrics)} figures in {time.monotonic() - t0:.0f} s: {run_dir}")
    return run_dir


def failed(run_dir: Path) -> dict:
    """{test: why} of the night's tests that failed."""
    from boardlab.judge.results import load_run
    out = {}
    for entry in load_run(run_dir)["meta"].get("outcomes", {}).values():
        out.update({t: entry.get("why", {}).get(t, "") for t, r in entry.items() if r == FAIL})
    return out
