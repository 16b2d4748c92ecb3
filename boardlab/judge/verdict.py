"""The verdict on a metric from two sets of samples (A: the baseline or kernel A, B: this
run or kernel B), with known error rates, as pure code.

- exact comparisons, where the judge has found exactness shown (boardlab.judge.decide.
  exactness: a deterministic clock, and a stored side of repeated samples that agree),
  compare every pair of samples against the floor, provided the samples at hand agree
  too (else they are treated as noisy, and the verdict says so);
- a tail figure (a worst case: catalogue `tail`) is a regression when one run lies far
  beyond the baseline's worst (`tail_spike`: more than twice it), whatever the medians say;
- noisy ones get a rank test (a permutation test of the Mann-Whitney rank sum, exact:
  every arrangement counted by its rank sum, two-sided, alpha 0.01) with the floor: a difference
  must be real (p < alpha) and worth reporting with confidence (the bootstrap 95 %
  interval of the median difference lies wholly beyond the floor); `same` needs that
  interval wholly within the floor (an equivalence test), whatever p says.

Four outcomes of a comparison: same, regressed, improved, unknown (the samples cannot
tell yet: more repeats). The rules that come before it (whether two figures may be
compared at all) are boardlab.judge.decide's, whose verdicts add new, missing, info,
other host, other clock, other kernel and other settings: every verdict is a `Verdict`. With 5 samples a side the smallest p a rank test can give is 2/252 = 0.008, so
5 a side is the least that can decide a noisy metric at alpha 0.01."""
from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from boardlab.judge.stats import BOOTSTRAP, bootstrap_ci, rank_test, smallest_p
from boardlab.measure.catalogue import MetricSpec

ALPHA = 0.01
SPREAD_SEEN = 3   # samples a side before a noisy metric's interval can show it is 'same'
SAME, REGRESSED, IMPROVED, UNKNOWN = "same", "regressed", "improved", "unknown"
OUTCOMES = (SAME, REGRESSED, IMPROVED, UNKNOWN)   # of two sets of samples compared
NEW = "new"                   # no baseline: nothing to judge against
MISSING = "missing"           # the baseline holds the metric, the run did not produce it
INFO = "info"                 # information only (the catalogue's spec.not_judged)
OTHER_HOST = "other-host"     # a host-bound figure against one from another machine
OTHER_CLOCK = "other-clock"   # figures of two clocks: other units
OTHER_KERNEL = "other-kernel"  # two kernels under one name: not the same kernel
OTHER_SETTINGS = "other-settings"  # measured another way (a 60 s cyclictest run against 10 s ones)
NOT_COMPARED = (NEW, MISSING, INFO, OTHER_HOST, OTHER_CLOCK, OTHER_KERNEL, OTHER_SETTINGS)
WORDS = {OTHER_HOST: "other host, not judged", OTHER_CLOCK: "other clock, not judged",   # as a table reads
         OTHER_KERNEL: "other kernel, not judged", OTHER_SETTINGS: "other settings, not judged",
         INFO: "information only"}


@dataclass
class Verdict:
    """The one verdict type: an outcome of OUTCOMES (two sets of samples compared) or of
    NOT_COMPARED (then only `why`), and why."""
    outcome: str
    why: str
    a: float | None = None            # median of A
    b: float | None = None            # median of B
    delta_pct: float | None = None    # (b - a) / a, in %
    ci_pct: tuple | None = None       # 95 % interval of delta_pct
    p: float | None = None            # the rank test's p (noisy metrics)
    floor: float | None = None        # the smallest change worth reporting, in the metric's unit
    method: str = ""                  # "exact", "rank test" or "tail"; "" when not compared
    n: tuple = (0, 0)                 # samples of A and B
    exact: bool = False               # exactness was shown for this pair (decide.exactness)

    @property
    def compared(self) -> bool:
        return self.outcome in OUTCOMES

    def to_dict(self) -> dict:
        if not self.compared:
            return {"outcome": self.outcome, "why": self.why}
        d = dict(vars(self))
        d["ci_pct"] = list(self.ci_pct) if self.ci_pct else None
        d["n"] = list(self.n)
        return d


def _pct(x: float, base: float) -> float:
    return 100.0 * x / base if base else (0.0 if x == 0 else math.copysign(math.inf, x))


def _direction(spec: MetricSpec, delta: float) -> str:
    worse = delta > 0 if spec.direction == "lower" else delta < 0
    return REGRESSED if worse else IMPROVED


def agree(samples, floor: float) -> bool:
    """Samples that agree to a quarter of the floor: what an exact comparison needs."""
    return max(samples) - min(samples) <= floor / 4


def _exact(a, b, spec: MetricSpec, ma: float, mb: float, floor: float) -> Verdict | None:
    """The exact comparison, or None when the samples are not repeatable enough for it.
    Its interval is every difference the samples allow (min(b) - max(a) .. max(b) - min(a)):
    same when that lies within the floor, a change when it lies wholly beyond it."""
    if not (agree(a, floor) and agree(b, floor)):
        return None
    delta, unit = mb - ma, spec.unit
    lo, hi = min(b) - max(a), max(b) - min(a)
    if -floor <= lo and hi <= floor:
        outcome, where = SAME, "within"
    elif lo > floor or hi < -floor:
        outcome, where = _direction(spec, delta), "beyond"
    else:
        return None   # reaches across the floor: the samples must say more
    why = (f"exact: medians {ma:g} and {mb:g} {unit} differ by {abs(delta):.4g} {unit}, "
           f"{where} the floor {floor:.4g} {unit}")
    if len(a) > 1 or len(b) > 1:
        why += f" (every pair of samples: {lo:+.4g}..{hi:+.4g} {unit})"
    if len(a) == 1:   # e.g. the study's numbers: one value each, no samples
        why += ("; A is a single value (a stored number without samples, like the study's): "
                "compared as a value, with no spread to check it by")
    return Verdict(outcome, why, ma, mb, _pct(delta, ma), (_pct(lo, ma), _pct(hi, ma)), None,
                   floor, "exact", (len(a), len(b)), exact=True)


TAIL_FACTOR = 2.0   # "far beyond": more than twice the worst A has shown


def tail_spike(a, b, spec: MetricSpec, runs: int = 1) -> str | None:
    """A worst-case figure's regression that a median would average away: `runs` runs of B
    more than TAIL_FACTOR times the worst A has shown (a 10 x spike in 1 of 10 runs).
    runs 2: a worst case the lab host's own stalls reach (a virtual board's realtime
    figures): one stall of the host (its hypervisor took the CPU: 53 ms once in 20 A/A
    boots of the noisy board, 2026-12-02) lands in either side, so it must be seen twice.
    Maxima have heavy right tails, so a margin from A's spread cries wolf (6 % of A/A
    pairs of 10 runs at the measured CV 9 %, tests/test_verdict.py); twice the worst
    of SPREAD_SEEN runs or more is passed by runs of A's own kind well under 1 % of the
    time. Why, or None. Only worse: one good run says nothing of a tail; a smaller,
    steady shift of the tail is the rank test's."""
    if not spec.tail or len(a) < SPREAD_SEEN:
        return None
    lower = spec.direction == "lower"
    worst_a = max(a) if lower else min(a)
    bound = worst_a * TAIL_FACTOR if lower else worst_a / TAIL_FACTOR
    beyond = [x for x in b if (x > bound if lower else x < bound)]
    if len(beyond) < max(1, runs):
        return None
    far = max(beyond) if lower else min(beyond)
    return (f"tail: {len(beyond)} of {len(b)} runs of B reach {far:g} {spec.unit}, more than "
            f"{TAIL_FACTOR:g} x A's worst {worst_a:g} {spec.unit} (of {len(a)} runs): for a worst "
            + ("case one such run is the answer" if runs <= 1 else
               f"case the lab host's own stalls reach, {runs} such runs are the answer"))


def compare(a, b, spec: MetricSpec, alpha: float = ALPHA, effort: float = 1.0, exact: bool = False,
            tail_runs: int = 1) -> Verdict:
    """The one verdict rule. `same` only when the samples show it (an equivalence test: the
    interval of the difference lies within the floor); a change only when it is real
    (p < alpha) and its interval lies wholly beyond the floor, and, by the rank test,
    seen twice (_seen_twice); anything else is `unknown` (more samples), also a real
    difference whose interval reaches past the floor. A tail figure is also regressed by
    one run far beyond A's worst (tail_spike).
    exact: the judge found exactness shown for the pair (boardlab.judge.decide.exactness);
    otherwise the samples are compared as noisy, however alike they look.
    effort < 1: fewer bootstrap resamples (out_of_reach asks many times).
    tail_runs: the runs beyond A's worst that regress a tail (tail_spike)."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    v = _compare(a, b, spec, alpha, effort, exact)
    if v.method == "rank test":
        v = _seen_twice(a, b, spec, alpha, effort, v, exact)
    spike = tail_spike(a, b, spec, tail_runs) if v.outcome != REGRESSED else None
    if spike:
        v.outcome, v.method = REGRESSED, "tail"
        v.why = f"{spike}; the medians alone: {v.why}"
    return v


def _seen_twice(a, b, spec: MetricSpec, alpha: float, effort: float, v: Verdict, exact: bool) -> Verdict:
    """A change the rank test calls stands only when B's first half (in the order taken)
    shows it too, wherever that half alone could: against many stored samples a few fresh
    ones reach p < alpha on a run of luck (qemu-ppc's mem_eat: a second value on 13-20 %
    of boots, three in a row were called regressed; tests/test_gate.py)."""
    if v.outcome not in (REGRESSED, IMPROVED):
        return v
    half = (len(b) + 1) // 2
    if half == len(b) or smallest_p(len(a), half) >= alpha:
        return v
    first = _compare(a, b[:half], spec, alpha, effort, exact)
    if first.outcome == v.outcome:
        v.why += f"; seen on the first {half} samples too"
        return v
    v.outcome = UNKNOWN
    v.why += (f"; but not on the first {half} samples alone ({first.outcome}): a change is called "
              f"when it is seen twice, on the first half of the samples and on all: more repeats")
    return v


def _compare(a, b, spec: MetricSpec, alpha: float, effort: float, exact: bool) -> Verdict:
    if not a or not b:
        raise ValueError(f"{spec.key}: nothing to compare (A has {len(a)}, B {len(b)} samples)")
    ma, mb = statistics.median(a), statistics.median(b)
    delta = mb - ma
    floor = spec.floor(ma)
    unit = spec.unit
    judged = _exact(a, b, spec, ma, mb, floor) if exact else None
    if judged is not None:
        return judged
    note = "" if not exact else (
        " (spread too wide for an exact comparison)" if not (agree(a, floor) and agree(b, floor)) else
        " (exact samples, but their differences reach across the floor)")
    p = rank_test(a, b)
    lo, hi = bootstrap_ci(a, b, resamples=max(200, int(BOOTSTRAP * effort)))
    ci = (_pct(lo, ma), _pct(hi, ma))
    interval = f"the 95 % interval {lo:+.4g}..{hi:+.4g} {unit}"
    if p < alpha and (lo > floor or hi < -floor):      # real, and wholly past the floor
        outcome = _direction(spec, delta)
        why = f"rank test p={p:.3g} < {alpha}, and {interval} lies beyond the floor +-{floor:.4g}"
    elif -floor <= lo and hi <= floor and min(len(a), len(b)) >= SPREAD_SEEN:   # equivalent
        outcome = SAME
        why = f"rank test p={p:.3g}; {interval} lies within the floor +-{floor:.4g}"
    elif -floor <= lo and hi <= floor:
        outcome = UNKNOWN
        why = (f"{interval} lies within the floor +-{floor:.4g}, but {min(len(a), len(b))} sample(s) "
               f"cannot show a noisy metric's spread (at least {SPREAD_SEEN} a side): more repeats")
    else:
        outcome = UNKNOWN
        reach = "" if smallest_p(len(a), len(b)) < alpha else \
            f"; {len(a)} and {len(b)} samples cannot reach p < {alpha}"
        real = " (a real difference, p < alpha, of uncertain size)" if p < alpha else ""
        why = (f"rank test p={p:.3g}{real}, {interval} reaches past the floor "
               f"+-{floor:.4g}: more repeats{reach}")
    return Verdict(outcome, why + note, ma, mb, _pct(delta, ma), ci, p, floor, "rank test",
                   (len(a), len(b)))


FUTILE = 0.05      # more samples are not taken when fewer completions than this decide
COMPLETIONS = 40
COMPLETION_EFFORT = 0.05   # each completion's test: 1 000 draws, 200 resamples


def out_of_reach(a, b, spec: MetricSpec, at_most: int, alpha: float = ALPHA,
                 seed: int = 1, both: bool = False, exact: bool = False, only_same: bool = False) -> str | None:
    """Why samples of B up to at_most in all would still leave the verdict unknown, or
    None when one is within reach. B is completed COMPLETIONS times with samples drawn
    from what B has shown (with one sample: A's spread around it), and compare() asked;
    when under FUTILE of the completions decide, more boots would be spent on no answer.
    both: A grows too; only_same: only `same` answers (decide's drift rule: a host-bound change)."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    if not a or not b or len(b) >= at_most:
        return None
    pool = b if len(b) >= 2 else [x - statistics.median(a) + b[0] for x in a]
    decided = _decided_completions(a, b, at_most, spec, alpha, random.Random(seed), COMPLETIONS, both, pool,
                                   exact, only_same)
    if decided >= FUTILE * COMPLETIONS:
        return None
    return (f"out of reach: {decided} of {COMPLETIONS} completions to {at_most} samples "
            f"(drawn from the spread seen) decide; a longer run or more repeats could")


def _completed(values, n, rng, pool=None):
    """values completed to n samples, drawn from pool (default: their own spread)."""
    return values + rng.choices(pool or values, k=n - len(values)) if len(values) < n else values


def _decided_completions(a, b, n, spec, alpha, rng, trials, both, b_pool=None, exact=False, only_same=False) -> int:
    """How many of `trials` completions of B to n samples (from b_pool, else B's own spread;
    A too when both) compare() decides (only_same: `same`): out_of_reach's and boots_to_decide's."""
    return sum(compare(_completed(a, n, rng) if both else a, _completed(b, n, rng, b_pool), spec, alpha,
                       COMPLETION_EFFORT, exact).outcome in ((SAME,) if only_same else (SAME, REGRESSED, IMPROVED))
               for _ in range(trials))


STORED_ENOUGH = 3   # stored samples under which no number of new ones decides a rank test

def boots_to_decide(a, b, spec: MetricSpec, budget: int, limit: int = 40, alpha: float = ALPHA,
                    seed: int = 1, both: bool = True, exact: bool = False) -> str:
    """What would decide an unknown metric: the fewest samples a side (budget x 2, x 4 ...
    up to limit) at which most of COMPLETIONS / 2 completions, drawn from the spread each
    side has shown, are decided; or why no such number would. both: A grows too (False:
    A is stored figures, only B is sampled)."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    if not both and len(a) < STORED_ENOUGH:   # no number of new samples makes up for the stored side's
        return (f"the baseline holds {len(a)} sample{'s' * (len(a) != 1)}: measure it again with more (`pytest "
                f"--update-baselines --repeats 5`, or `boardlab baselines update` over several runs)")
    rng = random.Random(seed)
    n = max(budget, len(a), len(b)) if both else max(budget, len(b))   # stored A does not grow
    while n < limit:
        n = min(limit, n * 2)
        trials = COMPLETIONS // 2
        decided = _decided_completions(a, b, n, spec, alpha, rng, trials, both, exact=exact)
        if decided * 2 > trials:
            return (f"about {n} samples {'a side' if both else 'of this side'} would decide it "
                    f"({decided} of {trials} completions drawn from the spread seen)")
    return (f"no number of samples up to {limit} {'a side' if both else 'of this side'} would "
            f"(completions drawn from the spread seen): "
            f"the spread itself must shrink (a longer run per sample, or a figure of the whole distribution)")


def sample_until_decided(take, decided, at_least: int, at_most: int) -> int:
    """The one "sample until decided" loop of the lab (the suites' gate, compare, a
    bisect step): take() one more sample (a boot, a run, a round of both sides) until
    there are at_least and decided() says no verdict is unknown any more, or at_most
    were taken. decided() is asked after every sample from at_least on, also the last.
    Returns how many were taken."""
    n = 0
    while True:
        take()
        n += 1
        if n >= at_least and (decided() or n >= at_most):
            return n
