"""The statistics under the verdict rule (boardlab.judge.verdict), as pure functions: the
rank test (a permutation test of the Mann-Whitney rank sum, exact) and the bootstrap
interval of the difference of medians. No rule here: what they decide is the verdict's."""
from __future__ import annotations

import math

BOOTSTRAP = 2_000


def _ranks(values):
    """Average ranks (1-based), ties sharing theirs."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_test(a, b) -> float:
    """Two-sided p of the rank sum of b among a + b, by permutation (ties allowed): the share
    of all ways to choose as many of the pooled ranks whose sum is as far from its mean.
    Counted by sum (ranks are halves: doubled to whole numbers), not enumerated: exact."""
    import numpy   # here: 0.2 s to import, and most processes never compare noisy figures
    ranks = _ranks(list(a) + list(b))
    side = ranks[len(a):] if len(b) <= len(a) else ranks[:len(a)]   # the smaller: the same p
    twice, k = [round(2 * r) for r in ranks], len(side)
    mean = k * (len(ranks) + 1)                              # doubled, as every sum below
    far = abs(round(2 * sum(side)) - mean)
    width = sum(sorted(twice)[-k:]) + 1 if k else 1          # no k ranks sum to more
    ways = numpy.zeros((k + 1, width))                      # ways[j, s]: j ranks, sum s
    ways[0, 0] = 1.0
    for r in twice:
        if r < width:
            ways[1:, r:] += ways[:-1, :width - r].copy()
    sums = numpy.arange(ways.shape[1])
    return float(ways[k][numpy.abs(sums - mean) >= far].sum() / ways[k].sum())


def smallest_p(n: int, m: int) -> float:
    """The smallest two-sided p a rank test of n and m samples can reach."""
    return 2 / math.comb(n + m, m) if n and m else 1.0


def bootstrap_ci(a, b, seed: int = 1, level: float = 0.95,
                 resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """Percentile bootstrap interval of median(b) - median(a). Each resample draws as
    random.Random(seed).choices(b), then choices(a), would (numpy's Mersenne Twister seeded
    the same way gives the same numbers), all resamples at once."""
    import numpy
    a, b = numpy.asarray(a, dtype=float), numpy.asarray(b, dtype=float)
    u = numpy.random.RandomState([seed]).random_sample((resamples, len(b) + len(a)))
    of_b = b[(u[:, :len(b)] * len(b)).astype(int)]
    of_a = a[(u[:, len(b):] * len(a)).astype(int)]
    diffs = numpy.sort(numpy.median(of_b, axis=1) - numpy.median(of_a, axis=1))
    lo = diffs[int((1 - level) / 2 * resamples)]
    hi = diffs[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return float(lo), float(hi)
