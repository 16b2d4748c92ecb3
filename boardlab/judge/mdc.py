"""The smallest change a board can decide in a budget of boots: its minimal detectable
change (MDC) per metric, from the board's own measured spread (its stored baseline's
samples), stated before anyone samples.

An exact metric (the judge's exactness rule: a deterministic clock, a stored side that
repeats) decides in one boot a change whose every pair of samples lies beyond the floor:
its MDC is the floor and the stored samples' range (a board whose figure repeats to the
digit: the floor). A noisy
one: fresh samples are drawn from the stored ones (their spread as the board showed it),
shifted the worse way by a trial change; the MDC is the smallest trial change, from the
floor up, that the one judge (decide) calls `regressed` in at least POWER of
TRIALS draws of `budget` samples. Below the floor nothing is a change (the floor is
what the lab calls worth reporting); above the largest trial the budget decides nothing
this board would show. The exactness rule is not loosened to make an MDC smaller."""
from __future__ import annotations

import random
from dataclasses import dataclass

from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide, exactness, host_bound
from boardlab.judge.stats import smallest_p
from boardlab.measure.catalogue import MetricSpec

POWER = 0.8                 # the usual 80 %: a change of the MDC is found in 4 of 5 tries
TRIALS = 20
STEPS = (1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32)   # trial changes, in floors
EFFORT = vd.COMPLETION_EFFORT                      # each trial's bootstrap: as out_of_reach's


@dataclass(frozen=True)
class Detectable:
    metric: str
    floor_pct: float
    mdc_pct: float | None    # None: nothing up to the largest trial is decided in the budget
    budget: int
    how: str                 # exact, or the trials' words, or why there is no figure

    def words(self) -> str:
        if self.mdc_pct is None:
            return f"{self.metric}: no change up to {STEPS[-1]} x its floor decided in {self.budget} boots ({self.how})"
        return f"{self.metric}: {self.mdc_pct:.3g} % in {self.budget} boots ({self.how})"


def _shifted(spec: MetricSpec, values, shift: float) -> list[float]:
    """values moved the worse way by shift (a fraction of their median's size)."""
    worse = 1 if spec.direction == "lower" else -1
    return [v * (1 + worse * shift) for v in values]


def detectable(spec: MetricSpec, stored: Figures, budget: int, board=None, seed: int = 1,
               both: bool = False) -> Detectable:
    """The MDC of one metric on one board: stored is its baseline (samples, clock, host).
    both: the two sides are each sampled `budget` times, booted in turn (compare), so
    both are drawn from the stored spread and a host-bound figure may be judged."""
    values = [float(x) for x in stored.samples]
    if not values:
        raise ValueError(f"{spec.key}: no stored samples")
    median = sorted(values)[len(values) // 2]
    floor_pct = 100 * spec.floor(median) / abs(median) if median else 0.0
    fresh = Figures(values, stored.clock, stored.host, settings=stored.settings)
    why = exactness(spec, stored, fresh, board, spec.floor(median))
    if why is None:
        spread_pct = 100 * (max(values) - min(values)) / abs(median) if median else 0.0
        return Detectable(spec.key, floor_pct, floor_pct + spread_pct, 1,
                          "exact: one sample (a boot; for a size, a build) decides a change beyond the floor"
                          + (f" and the samples' range ({spread_pct:.2g} %)" if spread_pct else ""))
    if host_bound(stored.clock, board, spec.key) and not both:
        return Detectable(spec.key, floor_pct, None, budget,
                          f"bound to its host ({stored.clock} clock): against stored samples the judge calls no "
                          f"change (the host drifts between sessions); `boardlab compare`, boots interleaved, can")
    if len(values) < vd.STORED_ENOUGH or smallest_p(budget if both else len(values), budget) >= vd.ALPHA:
        return Detectable(spec.key, floor_pct, None, budget,
                          f"noisy: {len(values)} stored samples against {budget} boots cannot reach the rank "
                          f"test's p < {vd.ALPHA}, whatever the change: the baseline needs more runs")
    rng = random.Random(seed)
    for step in STEPS:
        shift = step * floor_pct / 100
        def side(moved: float) -> Figures:
            return Figures(_shifted(spec, rng.choices(values, k=budget), moved), stored.clock,
                           stored.host or "the host of its boots", settings=stored.settings)
        hit = sum(decide(spec, side(0.0) if both else stored, side(shift), board, interleaved=both,
                         effort=EFFORT).outcome == vd.REGRESSED for _ in range(TRIALS))
        if hit >= POWER * TRIALS:
            return Detectable(spec.key, floor_pct, step * floor_pct, budget,
                              f"noisy ({why}): found in {hit} of {TRIALS} draws from its {len(values)} stored samples")
    return Detectable(spec.key, floor_pct, None, budget, f"noisy: {len(values)} stored samples")


DEFAULT_BUDGET = 5   # boots: the suites' --max-repeats (the gate's at_most)


def of_board(board, kernel: str, budget: int = DEFAULT_BUDGET, root=None, both: bool = False,
             suites=None) -> list[Detectable]:
    """Every metric the board's stored baseline of the kernel holds samples of (of these
    suites: default all; a dict {suite: its keys or None}: some figures of some), with its MDC."""
    from boardlab.measure import baselines as bl, catalogue
    stored = bl.load(kernel, board.name, **({"root": root} if root else {}))
    out = []
    for key, base in sorted(stored.items()):
        try:
            spec = catalogue.spec(key)
        except catalogue.UnknownMetric:
            continue
        if spec.not_judged or not base.samples or (suites is not None and spec.suite not in suites):
            continue
        if isinstance(suites, dict) and suites[spec.suite] is not None and key not in suites[spec.suite]:
            continue   # a family narrowed to some of its figures (sample.narrowed)
        out.append(detectable(spec, stored_figures(base), budget, board, both=both))
    return out


def stored_figures(base) -> Figures:
    """A stored baseline (measure.baselines.Baseline) as the side the judge compares."""
    return Figures(base.values(), base.clock(), base.host_id(), settings=base.settings(), stated=base.stated())


def of_suites(board, suites, budget: int, both: bool = False) -> tuple[str | None, list[Detectable]]:
    """(the kernel whose stored spread stands for the kernels measured: the board's
    default, its rows of these suites) for a budget of boots; (None, []) without one."""
    kernel = board.images.default_kernel if getattr(board, "images", None) else None
    suites = suites if isinstance(suites, dict) else set(suites)
    return kernel, (of_board(board, kernel, budget, both=both, suites=suites) if kernel else [])


def before_sampling(board, suites, budget: int, both: bool = False) -> str | None:
    """The line said before the first boot: the smallest change of each figure of these
    suites that `budget` boots decide on this board (both: as many a side, booted in
    turn, as compare boots them); None without a stored spread."""
    return said(board, *of_suites(board, suites, budget, both), budget, both)


def said(board, kernel: str | None, rows: list[Detectable], budget: int, both: bool = False) -> str | None:
    """before_sampling's line of rows of_suites gave (None for none)."""
    if not rows:
        return None
    return (f"on {board.name}, {budget} boots{' a side' if both else ''} decide (the stored "
            f"spread of {kernel}): "
            + ", ".join(f"{d.metric} " + (f"{d.mdc_pct:.3g} %" if d.mdc_pct is not None else "none") for d in rows))
