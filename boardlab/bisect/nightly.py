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
from boardlab.boot.placehold import PlaceHoldError
from boardlab.kernelbuilds.kbuild import KernelBuildError, build_tree
from boardlab.errors import BoardlabError, fault_of
from boardlab.facts.board import env_path, load_board
from boardlab.facts.labfacts import default_board
from boardlab.history.submit import land
from boardlab.judge.decide import EXACT_SHOWN
from boardlab.judge.outcomes import of_fault
from boardlab.judge.results import RunResults, prepare_run_dir
from boardlab.log import progress
from boardlab.measure import catalogue, families, sample

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


def _measure(results, board, kernel: str, uimage: Path, families, boots: int, root: str):
    """boots boots of the built kernel, every family's figures recorded with their samples."""
    from boardlab.boot.session import board_session
    from boardlab.vlab.host import virtual_host_of
    from boardlab.vlab.lab import kept_up
    host = virtual_host_of(board)
    env = env_path(board.name)
    samples: dict = {}
    with kept_up(host, boards=(board.name,)) if host else contextlib.nullcontext(), \
            board_session(env, results.run_dir / "console", command="nightly") as (strategy, shell):
        strategy.select(kernel=str(uimage), root=root, ramdisk="")
        try:
            for i in range(boots):
                figures, _ = sample.one_sample(strategy, shell, families)
                for key, v in figures.items():
                    samples.setdefault(key, []).append(float(v))
                progress(f"nightly {kernel}: boot {i + 1}/{boots} measured ({len(figures)} figures)")
        except BootError as e:
            result, why = of_fault(fault_of(e))   # the lab's error names its part
            outcome(results, board.name, kernel, "kernel/boot", result, why)
            if result != FAIL:   # not the kernel's fault: said, and the night fails
                raise
            return
        clock = strategy.last_boot.qemu_clock if strategy.last_boot else None
    outcome(results, board.name, kernel, "kernel/boot", PASS)
    for key, values in samples.items():
        suite, name = key.split(".", 1)
        results.record(board, kernel, suite, name, statistics.median(values), samples=values,
                       qemu_clock=clock)


def nightly(tree, branch: str = "HEAD", board_name: str | None = None, families=DEFAULT_FAMILIES,
            boots: int = EXACT_SHOWN, config=None, root: str = "", out=None, tree_name: str = "") -> Path:
    """The night's run of a tree: its run directory (results.json, console logs), landed.
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
            _measure(results, board, kernel, uimage, families, boots, root)
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
