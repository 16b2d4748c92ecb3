"""The bridge from a suite to a verdict: a test records its metrics (catalogue names) with
their samples, each judged against the stored baselines of (board, kernel) as it is
recorded (boardlab.judge.results); a noisy metric is sampled until decided. conftest's `gate`
fixture hands one to each test and fails the test on regressed()."""
from __future__ import annotations

import math
import statistics

import time
from boardlab.errors import TestFault
from boardlab.judge import verdict
from boardlab.log import progress
from boardlab.measure import catalogue


class NoFigure(TestFault, ValueError):
    """A live measurement gave NaN or inf: the harness's or program's fault, never the
    kernel's; nothing of that sample is recorded."""


def run_line(suite: str, n: int, at_least: int, at_most: int, took) -> str:
    """'jitter: run 2 of 1-5, 34 s so far (17 s a run): about 0-51 s left' before run n:
    how long the runs so far took (host clock), and what is left: to at_least, and to
    at_most if the figures stay undecided."""
    count = f"{at_least}" if at_least == at_most else f"{at_least}-{at_most}"
    if not took:
        return f"{suite}: run {n} of {count}"
    each = sum(took) / len(took)
    least, most = max(0, at_least - n + 1) * each, (at_most - n + 1) * each
    left = f"about {most:.0f} s left" if least == most else f"about {least:.0f}-{most:.0f} s left"
    return f"{suite}: run {n} of {count}, {sum(took):.0f} s so far ({each:.0f} s a run): {left}"


class Gate:
    def __init__(self, results, strategy, nodeid, repeats=1, max_repeats=5):
        self.results, self.strategy, self.nodeid = results, strategy, nodeid
        self.repeats, self.max_repeats = repeats, max_repeats
        self.recorded = {}

    def record(self, suite, name, value, unit=None, direction=None, samples=(), kernel=None,
               identity=None, settings=None):
        """identity: what the kernel is (measure.kernelid); default: the kernel under test's
        as the strategy knows it (its uImage, what the last boot printed)."""
        boot = self.strategy.last_boot
        if identity is None and kernel is None:
            identity = self.strategy.kernel_identity()
        m = self.results.record(self.strategy.board, kernel or self.strategy.kernel_under_test.name,
                                suite, name, value, unit, direction, samples, test=self.nodeid,
                                qemu_clock=boot.qemu_clock if boot else None, identity=identity,
                                settings=settings)
        self.recorded[(m.kernel, m.key)] = m
        return m

    def sample(self, suite, measure, at_least=1, settings=None):
        """Record the figures measure() returns ({name: value}, names bare or as the
        catalogue names them, f"{suite}.name") from at_least(, --repeats) calls, then more while one of them is 'unknown' and a verdict is still within
        reach (verdict.out_of_reach), up to --max-repeats calls. settings: how they are
        measured where that changes a figure (the judge does not hold them against a
        baseline measured otherwise)."""
        samples, recorded, took = {}, [], []
        at_most = max(self.max_repeats, at_least, self.repeats)
        self._say_what_it_can_see(suite, at_most, settings)

        def take():
            t0 = time.monotonic()
            progress(run_line(suite, len(took) + 1, max(at_least, self.repeats), at_most, took))
            got = measure()
            took.append(time.monotonic() - t0)
            for name, value in got.items():   # one that is no figure: the sample is not taken
                if not math.isfinite(float(value)):
                    raise NoFigure(f"{suite}.{name.removeprefix(suite + '.')}: the measurement gave {value}: "
                                   f"no figure, this sample not recorded (the test's fault, not the kernel's)")
            for name, value in got.items():
                bare = name[len(suite) + 1:] if name.startswith(f"{suite}.") else name
                samples.setdefault(bare, []).append(float(value))

        def decided():
            recorded[:] = [self.record(suite, name, statistics.median(v), samples=v, settings=settings)
                           for name, v in samples.items()]
            unknown = [m for m in recorded if m.verdict == verdict.UNKNOWN]
            return not unknown or self._out_of_reach(unknown, at_most)

        verdict.sample_until_decided(take, decided, max(at_least, self.repeats), at_most)
        self._say_what_would_decide([m for m in recorded if m.verdict == verdict.UNKNOWN], at_most)
        return recorded

    def _say_what_it_can_see(self, suite, at_most, settings) -> None:
        """Before sampling: the smallest change of each of the suite's figures this board
        decides in at_most samples (judge.mdc, from its stored baseline), one line."""
        from boardlab.judge import mdc
        from boardlab.measure.families import figure_settings
        facts, kernel = self.results.board_facts(self.strategy.board), self.strategy.kernel_under_test.name
        settings = figure_settings(suite, facts.isa, settings)   # as results.record judges them
        stored = {k: b.for_settings(settings) for k, b in self.results.baselines(facts.name, kernel).items()
                  if k.startswith(f"{suite}.") and b.samples}
        if not stored:
            return
        seen = [mdc.detectable(catalogue.spec(k), mdc.stored_figures(b), at_most, facts)
                for k, b in sorted(stored.items()) if not catalogue.spec(k).not_judged]
        words = [f"{d.metric.split('.', 1)[1]} " + (f"{d.mdc_pct:.3g} %" if d.mdc_pct is not None else "none")
                 for d in seen]
        progress(f"{suite} on {facts.name}: the smallest change decided in {at_most} "
                 f"samples (stored spread): " + ", ".join(words))

    def _say_what_would_decide(self, unknown, at_most) -> None:
        """Each metric still unknown says what would decide it (the samples a side, or that
        none would), beside why it stopped."""
        for m in unknown:
            base, spec = self._baseline_side(m)
            m.comparison["why"] += "; " + verdict.boots_to_decide(base, m.samples, spec, at_most, both=False,
                                                                  exact=m.comparison.get("exact", False))
        if unknown:
            self.results.save()

    def _baseline_side(self, m) -> tuple[list, object]:
        """(the baseline's samples, the metric's spec under this run's harness): what a
        recorded metric is judged against."""
        spec = catalogue.for_harness(catalogue.spec(m.key), self.results.harness)
        return m.baseline.get("samples") or [m.baseline["value"]], spec

    def _out_of_reach(self, unknown, at_most) -> bool:
        """True when no unknown metric can be decided by at_most samples: each one's
        comparison then says why it stopped there."""
        from boardlab.judge.decide import host_bound
        facts = self.results.board_facts(self.strategy.board)
        reasons = {}
        for m in unknown:
            base, spec = self._baseline_side(m)
            reasons[m.key] = verdict.out_of_reach(base, m.samples, spec, at_most,
                                                  exact=m.comparison.get("exact", False),
                                                  # against a stored baseline a host-bound change stays unknown
                                                  only_same=host_bound(m.clock, facts, m.key))
        if not all(reasons.values()):
            return False
        for m in unknown:
            m.comparison["why"] += f"; stopped after {len(m.samples)}: {reasons[m.key]}"
        self.results.save()
        return True

    def regressed(self) -> str | None:
        """Every metric that regressed, with both sides and why; None when none did."""
        failed = [m for m in self.recorded.values() if m.verdict == verdict.REGRESSED]
        if not failed:
            return None
        return "regressed against the baseline:\n" + "\n".join("  " + m.describe() for m in failed)
