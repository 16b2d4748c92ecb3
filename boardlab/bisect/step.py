"""One revision of a bisect: build it (incrementally, through ccache), boot it and
measure its metrics (one boot a sample for all their families), judge each against the
good revision's samples: bad if any regressed. `git bisect run`
calls `python -m boardlab.bisect.step RUN_DIR` for each revision it picks: exit 0 good,
1 bad, 125 skip."""
from __future__ import annotations

import dataclasses
import functools
import statistics
import sys
import time
from pathlib import Path

from boardlab.bisect import ANSWER, ANSWER_CODE, BAD, GOOD, SKIP, STOP, Bisect, MetricMissing, Step, git
from boardlab.boot.bootlog import BootError
from boardlab.kernelbuilds.kbuild import KernelBuildError, build_tree
from boardlab.errors import KERNEL, LAB, BoardlabError, fault_of
from boardlab.facts.board import load_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide, sampled_enough
from boardlab.history.submit import land
from boardlab.judge.results import RunResults
from boardlab.log import progress
from boardlab.measure import catalogue, sample
from boardlab.measure import families
from boardlab.measure.families import tool_set
from boardlab.measure.clocks import metric_clock, this_host

@functools.lru_cache(maxsize=4)
def _facts(name: str):
    return load_board(name)


def _board(b: Bisect):
    """The bisect's board facts, loaded once in a step's process (every boot and every
    verdict asks for them)."""
    return _facts(b.board)


def _narrowed(b: Bisect, family: str) -> list | None:
    """The metrics a family's run is narrowed to (its record's group_of: the runs that give
    them alone, cheaper than the whole family's); None, the whole run."""
    mine = [m for m, s in b.specs.items() if s.suite == family]
    return mine if families.get(family).group_of and mine else None


def _measure_boot(b: Bisect, strategy, shell, step: Step, measured) -> dict:
    """One boot of the selected kernel: each family wanted measured on it, once."""
    t0 = time.monotonic()
    rec = strategy.reboot()
    step.boot_s.append(round(time.monotonic() - t0, 2))
    t1 = time.monotonic()
    figures = {}
    for family in measured:
        figures.update(sample.family(family, shell(), rec,
                                     metric=_narrowed(b, family),
                                     tools=tool_set(family, _board(b).isa)))
    step.measure_s.append(round(time.monotonic() - t1, 2))
    step.measured_at = time.time()
    wanted = [m for m, s in b.specs.items() if s.suite in measured]
    lacking = [m for m in wanted if m not in figures]
    if lacking:
        raise MetricMissing(f"the boot gave no {', '.join(lacking)} "
                            f"(it measured: {', '.join(figures) or 'nothing'})")
    return {m: figures[m] for m in wanted}


def _figures(board_name: str, metric: str, samples) -> Figures:
    """A revision's samples of a metric as the judge takes them: this host, the metric's
    clock on the bisect's board (one board, one session)."""
    board = _facts(board_name)
    spec = catalogue.spec(metric)
    return Figures(samples, metric_clock(spec.suite, spec.name, spec.unit, board), this_host()["id"])


def metric_enough(b: Bisect, metric: str, samples: list, against: list | None, step: Step | None = None) -> bool:
    """Whether a metric's samples so far decide (decide.sampled_enough: the good revision
    with nothing against it, a step against the good revision's samples)."""
    return sampled_enough(catalogue.spec(metric), _figures(b.board, metric, samples),
                          None if against is None else _figures(b.board, metric, against), _board(b),
                          b.repeats, b.max_repeats, interleaved=interleaved(b, step),
                          verdict=None if against is None or not samples else _verdict(b, metric, against, samples, step))


def _enough(b: Bisect, step: Step, against: dict | None) -> bool:
    """Whether the samples so far decide every metric (metric_enough, each against the
    good revision's samples of it; against None: this is the good revision)."""
    return all(metric_enough(b, m, step.samples.get(m, []), None if against is None else against.get(m), step)
               for m in b.metrics)


def measure_revision(b: Bisect, step: Step, against: dict | None):
    """Build the checked-out revision and take its samples (step.samples, per metric):
    one build, then boots, each measuring the families of the metrics not decided yet."""
    board = _board(b)
    step_dir = Path(step.dir)
    uimage = step_dir / f"bisect-{step.rev[:12]}.uImage"
    t0 = time.monotonic()
    built = build_tree(board, Path(b.tree), b.build_dir(), Path(b.config), uimage)
    step.build_s = round(time.monotonic() - t0, 1)
    results = RunResults(step_dir)
    results.meta.update({"bisect": {"rev": step.rev, "subject": step.subject, "role": step.role}})
    kernel = f"bisect-{step.rev[:12]}"
    sizes = {f"build.{k}": v for k, v in built.figures().items()}
    for m, spec in b.specs.items():
        if families.get(spec.suite).host_work:   # the build's sizes: no boot
            if m not in sizes:
                raise MetricMissing(f"the build gave no {m} (it gave: {', '.join(sizes) or 'nothing'})")
            step.samples[m] = [float(sizes[m])]
            results.record(b.board, kernel, "build", spec.name, step.samples[m][0], samples=step.samples[m])
    if not b.needs_boot:
        return
    from boardlab.boot.session import board_session

    def undecided() -> list:
        return [f for f in b.families if any(
            s.suite == f and not metric_enough(b, m, step.samples.get(m, []),
                                               None if against is None else against.get(m))
            for m, s in b.specs.items())]
    with board_session(Path(b.env), step_dir / "console", command="bisect") as (strategy, shell):
        strategy.select(kernel=str(uimage), root=b.root or "", ramdisk="")

        def one_boot():
            figures = _measure_boot(b, strategy, shell, step, undecided() or b.families)
            for m, v in figures.items():
                step.samples.setdefault(m, []).append(float(v))
            progress(f"  {step.rev[:12]}: boot {len(step.boot_s)}: " + ", ".join(
                f"{m} = {float(v):g} {b.specs[m].unit}" for m, v in figures.items()))
        vd.sample_until_decided(one_boot, lambda: _enough(b, step, against), 1, b.max_repeats)
    for m, spec in b.specs.items():
        if not families.get(spec.suite).host_work and step.samples.get(m):
            results.record(b.board, kernel, spec.suite, spec.name, statistics.median(step.samples[m]),
                           samples=step.samples[m], qemu_clock=strategy.last_boot.qemu_clock)


# a step measured this long after the good revision is no longer of one session with it:
# a host-bound figure's change may be the host's drift (decide's rule 7)
DRIFT_WINDOW_S = 1800


def interleaved(b: Bisect, step: Step | None) -> bool:
    """Whether a step was measured close enough to the good revision to be judged as boots
    in turn (no drift rule): within DRIFT_WINDOW_S of it, or when either time is unknown
    (a bisect of an older boardlab)."""
    good = next((s for s in b.steps if s.role == "good"), None)
    if step is None or good is None or step is good or None in (step.measured_at, good.measured_at):
        return True
    return abs(step.measured_at - good.measured_at) <= DRIFT_WINDOW_S


def _verdict(b: Bisect, metric: str, good: list, samples: list, step: Step | None = None) -> vd.Verdict:
    """The judge's verdict on a revision's samples of a metric against the good revision's:
    one board, this host; the drift rule where the step came hours after the good side.
    Asked once per set of samples: the last boot's answer is the step's verdict too."""
    return dataclasses.replace(_decided(b.board, metric, tuple(good), tuple(samples), interleaved(b, step)))


@functools.lru_cache(maxsize=256)
def _decided(board: str, metric: str, good: tuple, samples: tuple, in_turn: bool) -> vd.Verdict:
    return decide(catalogue.spec(metric), _figures(board, metric, good), _figures(board, metric, samples),
                  _facts(board), interleaved=in_turn)


DECIDED = (vd.REGRESSED, vd.SAME, vd.IMPROVED)


def answer(outcomes: dict) -> int:
    """The step's answer from each metric's outcome: bad if any regressed, good if none
    did and every one is decided (same or improved), else skip."""
    if any(o == vd.REGRESSED for o in outcomes.values()):
        return BAD
    if outcomes and all(o in DECIDED for o in outcomes.values()):
        return GOOD
    return SKIP


def combined(outcomes: dict) -> str | None:
    """The step's one verdict: a single metric's own; else regressed if any regressed,
    unknown (or what else stood) if any is undecided, improved if all improved, else same."""
    got = list(outcomes.values())
    if len(got) == 1:
        return got[0]
    if not got:
        return None
    if vd.REGRESSED in got:
        return vd.REGRESSED
    undecided = [o for o in got if o not in DECIDED]
    if undecided:
        return vd.UNKNOWN if vd.UNKNOWN in undecided else undecided[0]
    return vd.IMPROVED if all(o == vd.IMPROVED for o in got) else vd.SAME


def judge_metrics(b: Bisect, good: dict, samples: dict, step: Step | None = None) -> dict:
    """{metric: its verdict} of a revision's samples against the good revision's, for each
    metric of the bisect (one without samples: unknown, with why)."""
    out = {}
    for m in b.metrics:
        if not samples.get(m):
            out[m] = vd.Verdict(vd.UNKNOWN, f"no samples of {m}")
        else:
            out[m] = _verdict(b, m, good.get(m, []), samples[m], step)
    return out


def judge(b: Bisect, step: Step) -> int:
    """good, bad or skip for a measured step, every metric judged against the good
    revision's samples (answer); a skip says which metric stood undecided and what
    would decide it."""
    good = b.good_samples()
    verdicts = judge_metrics(b, good, step.samples, step)
    step.verdicts = {m: v.outcome for m, v in verdicts.items()}
    step.verdict = combined(step.verdicts)
    code = answer(step.verdicts)
    named = len(verdicts) > 1
    whys = []
    for m, v in verdicts.items():
        why = v.why
        if code == SKIP and v.outcome not in DECIDED and step.samples.get(m):
            # skipped after --max-repeats (or out of reach): say what would decide it
            why += "; skipped: " + vd.boots_to_decide(good.get(m, []), step.samples[m], catalogue.spec(m),
                                                      b.max_repeats, both=False, exact=v.exact)
        whys.append(f"{m}: {why}" if named else why)
    step.why = "; ".join(whys)
    return code


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
    land(Path(step.dir), _board(b).lab_host, progress=progress)   # into the lab's history
    meds = ", ".join(f"{m} {statistics.median(v):g} {catalogue.spec(m).unit} (n={len(v)})"
                     for m, v in step.samples.items() if v) or "no samples"
    progress(f"{role} {sha[:12]}: build {step.build_s} s, boots {step.boot_s} s, "
             f"{meds} -> {step.verdict or '-'}: {step.answer}"
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
