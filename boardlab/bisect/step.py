"""One revision of a bisect: build it (incrementally, through ccache), boot it and
measure the metric, judge it against the good revision's samples. `git bisect run`
calls `python -m boardlab.bisect.step RUN_DIR` for each revision it picks: exit 0 good,
1 bad, 125 skip."""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from boardlab.bisect import ANSWER, ANSWER_CODE, BAD, GOOD, SKIP, STOP, Bisect, MetricMissing, Step, git
from boardlab.boot.bootlog import BootError
from boardlab.build.kbuild import KernelBuildError, build_tree
from boardlab.errors import KERNEL, LAB, BoardlabError, fault_of
from boardlab.facts.board import load_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import EXACT_SHOWN, Figures, decide, exactness
from boardlab.history.submit import land
from boardlab.judge.results import RunResults
from boardlab.log import progress
from boardlab.measure import sample
from boardlab.measure.clocks import metric_clock, this_host

def _measure_boot(b: Bisect, strategy, shell, step: Step):
    """One boot of the selected kernel: the metric's family measured on it."""
    family = b.spec.suite
    t0 = time.monotonic()
    rec = strategy.reboot()
    step.boot_s.append(round(time.monotonic() - t0, 2))
    t1 = time.monotonic()
    figures = sample.family(family, shell(), rec, metric=b.metric)
    step.measure_s.append(round(time.monotonic() - t1, 2))
    if b.metric not in figures:
        raise MetricMissing(f"the boot gave no {b.metric} (it measured: {', '.join(figures) or 'nothing'})")
    return figures


def _figures(b: Bisect, samples: list) -> Figures:
    """A revision's samples as the judge takes them: this host, the metric's clock on the
    bisect's board (one board, one session)."""
    board = load_board(b.board)
    return Figures(samples, metric_clock(b.spec.suite, b.spec.name, b.spec.unit, board), this_host()["id"])


def _enough(b: Bisect, step: Step, against: list | None) -> bool:
    """Whether the samples so far decide. The good revision: EXACT_SHOWN boots where they
    show the figure exact (decide.exactness: a deterministic clock, samples that agree),
    else --repeats. A step: as soon as the judge decides (one boot where exactness is
    shown), else more boots while a verdict is within reach, up to --max-repeats."""
    samples = step.samples
    if not samples:
        return False
    if against is None:
        shown = len(samples) >= EXACT_SHOWN and exactness(
            b.spec, _figures(b, samples), _figures(b, samples), load_board(b.board),
            b.spec.floor(statistics.median(samples))) is None
        return shown or len(samples) >= b.repeats
    v = _verdict(b, against, samples)
    if v.outcome != vd.UNKNOWN or len(samples) >= b.max_repeats:
        return True
    return len(samples) >= min(b.repeats, b.max_repeats) and bool(
        vd.out_of_reach(against, samples, b.spec, b.max_repeats, exact=v.exact))


def measure_revision(b: Bisect, step: Step, against: list | None):
    """Build the checked-out revision and take its samples (step.samples)."""
    board = load_board(b.board)
    step_dir = Path(step.dir)
    uimage = step_dir / f"bisect-{step.rev[:12]}.uImage"
    t0 = time.monotonic()
    built = build_tree(board, Path(b.tree), b.build_dir(), Path(b.config), uimage)
    step.build_s = round(time.monotonic() - t0, 1)
    results = RunResults(step_dir)
    results.meta.update({"bisect": {"rev": step.rev, "subject": step.subject, "role": step.role}})
    kernel = f"bisect-{step.rev[:12]}"
    if not b.needs_boot:
        figures = {f"build.{k}": v for k, v in built.figures().items()}
        step.samples = [float(figures[b.metric])]
        results.record(b.board, kernel, "build", b.spec.name, step.samples[0], samples=step.samples)
        return
    from boardlab.boot.session import board_session
    with board_session(Path(b.env), step_dir / "console") as (strategy, shell):
        strategy.select(kernel=str(uimage), root=b.root or "", ramdisk="")

        def one_boot():
            figures = _measure_boot(b, strategy, shell, step)
            step.samples.append(float(figures[b.metric]))
            progress(f"  {step.rev[:12]}: sample {len(step.samples)}: {b.metric} = "
                     f"{step.samples[-1]:g} {b.spec.unit}")
        vd.sample_until_decided(one_boot, lambda: _enough(b, step, against), 1, b.max_repeats)
    results.record(b.board, kernel, b.spec.suite, b.spec.name, statistics.median(step.samples),
                   samples=step.samples, qemu_clock=strategy.last_boot.qemu_clock)


def _verdict(b: Bisect, good: list, samples: list) -> vd.Verdict:
    """The judge's verdict on a revision's samples against the good revision's: one board,
    this host, one bisect session (the good revision measured first: no drift rule)."""
    return decide(b.spec, _figures(b, good), _figures(b, samples), load_board(b.board), interleaved=True)


def judge(b: Bisect, step: Step) -> int:
    """good, bad or skip for a measured step, against the good revision's samples."""
    good = b.good_samples()
    cmp = _verdict(b, good, step.samples)
    step.verdict, step.why = cmp.outcome, cmp.why
    if cmp.outcome == vd.REGRESSED:
        return BAD
    if cmp.outcome in (vd.SAME, vd.IMPROVED):
        return GOOD
    # skipped after --max-repeats (or out of reach): say what would decide it
    step.why += "; skipped: " + vd.boots_to_decide(good, step.samples, b.spec, b.max_repeats,
                                                     both=False, exact=cmp.exact)
    return SKIP


def unmeasured(b: Bisect, e: BoardlabError) -> tuple[int, str]:
    """The answer for a revision that could not be measured, and why. Only the kernel's own
    fault answers for it: a build that failed or a figure its boot did not give, skip; a
    boot that failed, --failed-boot. Anyone else's (errors.fault_of: the lab's board, power,
    console, TFTP, staging) stops the bisect: an outage would skip or blame every revision."""
    fault = fault_of(e)
    if fault.party == LAB:
        return STOP, f"lab fault: {fault.part + ': ' if fault.part else ''}{fault.line}"
    if fault.party != KERNEL:
        return STOP, f"{fault.words()}: {type(e).__name__}: {fault.line}"
    if isinstance(e, BootError):
        return (BAD if b.failed_boot == "bad" else SKIP), f"boot failed: {fault.line}"
    if isinstance(e, KernelBuildError):
        return SKIP, f"build failed: {fault.line}"
    return SKIP, fault.line


def run_revision(b: Bisect, rev: str, role: str) -> Step:
    """Measure one revision (checked out already) and record it in the state."""
    tree = Path(b.tree)
    sha = git(tree, "rev-parse", rev)
    n = len(b.steps)
    step = Step(sha, git(tree, "log", "-1", "--format=%s", sha), role,
                dir=str(Path(b.run_dir) / f"{n:02d}-{role}-{sha[:12]}"))
    Path(step.dir).mkdir(parents=True, exist_ok=True)
    progress(f"{role} {sha[:12]} {step.subject!r}: building")
    against = None if role == "good" else b.good_samples()
    try:
        measure_revision(b, step, against)
        code = GOOD if role == "good" else judge(b, step)
    except BoardlabError as e:
        code, step.why = unmeasured(b, e)
    step.answer = ANSWER[code]
    b.steps.append(step)
    b.save()
    land(Path(step.dir), load_board(b.board).lab_host, progress=progress)   # into the lab's history
    med = f"{statistics.median(step.samples):g} {b.spec.unit}" if step.samples else "no samples"
    progress(f"{role} {sha[:12]}: build {step.build_s} s, boots {step.boot_s} s, "
             f"{b.metric} {med} (n={len(step.samples)}) -> {step.verdict or '-'}: {step.answer}"
             + (f" ({step.why})" if step.why else ""))
    return step


def step_main(run_dir: str) -> int:
    """What `git bisect run` calls for each revision: exit 0 good, 1 bad, 125 skip."""
    b = Bisect.load(run_dir)
    try:
        return ANSWER_CODE[run_revision(b, "HEAD", "step").answer]
    except KeyboardInterrupt:
        return 128 + 2     # git bisect run stops on an exit code above 127
    except Exception as e:  # noqa: BLE001 - anything else: say it and stop; never answer unmeasured
        print(f"boardlab bisect step: {type(e).__name__}: {e}", file=sys.stderr)
        return STOP


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m boardlab.bisect.step RUN_DIR (what boardlab bisect gives git bisect run)")
    sys.exit(step_main(sys.argv[1]))
