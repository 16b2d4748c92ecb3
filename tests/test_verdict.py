"""The verdict's error rates on synthetic samples of the noise the lab measured, and its
four outcomes."""
import itertools
import math
import random

import pytest

from boardlab.judge import stats, verdict
from boardlab.measure import catalogue


def noisy(n, mean, cv, rng):
    return [rng.gauss(mean, mean * cv) for _ in range(n)]


def test_exact_metrics_compare_medians_against_the_floor():
    login = catalogue.spec("boot_time.guest_login")
    a = [20.7221, 20.7223, 20.7219]
    assert verdict.compare(a, [x * 1.005 for x in a], login, exact=True).outcome == verdict.SAME
    c = verdict.compare(a, [x * 1.03 for x in a], login, exact=True)
    assert c.outcome == verdict.REGRESSED and c.method == "exact" and "beyond the floor" in c.why
    free = catalogue.spec("memory.kernel_available_kb")   # higher is better, floor one page
    assert verdict.compare([100000], [99990], free, exact=True).outcome == verdict.REGRESSED
    assert verdict.compare([100000], [99997], free, exact=True).outcome == verdict.SAME
    assert verdict.compare([100000], [100100], free, exact=True).outcome == verdict.IMPROVED
    # not shown exact (the judge's rule): one sample a side decides nothing
    assert verdict.compare([100000], [99990], free).outcome == verdict.UNKNOWN


def test_an_exact_metric_that_is_not_repeatable_gets_the_rank_test():
    c = verdict.compare([10, 11, 9.5], [10.5, 9.8, 10.9], catalogue.spec("lmbench.lat_pipe_us"), exact=True)
    assert c.method == "rank test" and "too wide" in c.why


def test_rank_test_p_values():
    assert verdict.rank_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert verdict.rank_test([1, 2, 3], [1, 2, 3]) == 1.0
    assert verdict.smallest_p(4, 4) > verdict.ALPHA > verdict.smallest_p(5, 5)


@pytest.mark.parametrize("a, b", [([1, 2, 2, 3, 5, 5, 8], [2, 5, 9, 9]),             # ties
                                  ([117568.0] * 26 + [117312.0] * 4, [117312.0] * 3),   # two values
                                  ([4.1, 3.9, 4.4, 5.0, 4.2, 3.8], [4.6, 5.2, 4.9, 5.5, 4.0])])
def test_the_rank_test_counts_what_enumerating_every_arrangement_counts(a, b):
    ranks = stats._ranks(a + b)
    expected = len(b) * (len(a) + len(b) + 1) / 2
    observed = abs(sum(ranks[len(a):]) - expected)
    picks = list(itertools.combinations(ranks, len(b)))
    far = sum(1 for pick in picks if abs(sum(pick) - expected) >= observed - 1e-9)
    assert verdict.rank_test(a, b) == pytest.approx(far / len(picks), rel=1e-12)


def test_noisy_metric_false_alarms_and_detection():
    """jitter p99 with the CV bench/noise.py measured (7 % on a quiet host, 20 % with a CPU
    hog): 100 A/A comparisons of 5 against 5 give no false alarm on the quiet host and at
    most 2 with the hog; a 60 % worse p99 is found in >= 95 of 100, a 5 % one (under the
    floor) never."""
    p99 = catalogue.spec("jitter.p99_us")
    rng = random.Random(7)

    def alarms(cv):
        out = [verdict.compare(noisy(5, 200, cv, rng), noisy(5, 200, cv, rng), p99).outcome
               for _ in range(100)]
        return out.count(verdict.REGRESSED) + out.count(verdict.IMPROVED)
    assert alarms(0.07) == 0 and alarms(0.2) <= 2
    shifted = [verdict.compare(noisy(5, 200, 0.07, rng), noisy(5, 320, 0.07, rng), p99).outcome
               for _ in range(100)]
    assert shifted.count(verdict.REGRESSED) >= 95
    small = [verdict.compare(noisy(5, 200, 0.02, rng), noisy(5, 210, 0.02, rng), p99).outcome
             for _ in range(50)]
    assert verdict.REGRESSED not in small


def test_too_few_samples_is_unknown_and_asks_for_more():
    p99 = catalogue.spec("jitter.p99_us")
    c = verdict.compare([200, 180, 230], [260, 300, 280], p99)
    assert c.outcome == verdict.UNKNOWN and "cannot reach p <" in c.why


def test_one_loop_samples_until_decided():
    """At least at_least samples; then until decided() or at_most; decided() is asked
    after every sample from at_least on, the last one too."""
    taken, asked = [], []

    def take():
        taken.append(len(taken))

    def decided_after(k):
        def decided():
            asked.append(len(taken))
            return len(taken) >= k
        return decided
    assert verdict.sample_until_decided(take, decided_after(0), 3, 10) == 3 and asked == [3]
    taken.clear(); asked.clear()
    assert verdict.sample_until_decided(take, decided_after(6), 3, 10) == 6 and asked == [3, 4, 5, 6]
    taken.clear(); asked.clear()
    assert verdict.sample_until_decided(take, decided_after(99), 1, 4) == 4 and asked == [1, 2, 3, 4]


def test_the_gate_compare_and_bisect_share_the_loop():
    """No second 'sample until decided' loop: each caller hands the one its take and
    decided."""
    from paths import ROOT
    for path in ("boardlab/judge/gate.py", "boardlab/ab/compare.py", "boardlab/bisect/step.py"):
        text = (ROOT / path).read_text()
        assert "sample_until_decided(" in text and "while True" not in text, path
    assert "def sample" not in (ROOT / "boardlab" / "pytestplugin.py").read_text()


def test_more_samples_are_not_taken_when_no_verdict_is_within_reach():
    spec = catalogue.spec("jitter.max_us")     # noisy, floor 10 %
    base = [2332.0, 2297.0, 2261.0, 2178.0, 2039.0, 2197.0, 2189.0, 2436.0, 2232.0, 2380.0]
    # a value near the baseline's, with its spread: 'same' needs samples, but is in reach
    assert verdict.out_of_reach(base, [2240.0], spec, at_most=10) is None
    # two samples as far apart as the floor's width several times: no 5 samples decide
    why = verdict.out_of_reach(base, [1500.0, 2800.0], spec, at_most=5)   # not past the worst by its spread
    assert why and why.startswith("out of reach: ")
    assert verdict.out_of_reach(base, [2240.0] * 5, spec, at_most=5) is None   # nothing more to take


def test_a_host_bound_change_against_a_stored_side_is_out_of_reach_at_once():
    """Against stored samples the judge leaves a host-bound figure's change unknown (its
    drift rule): only `same` could answer, so a sample far from them takes no more boots
    (the loop took up to 4 boots for the host-arrival milestones of every A/A round)."""
    spec = catalogue.spec("boot_time.login")     # noisy, floor 1 %
    base = [5.14, 4.69, 5.53, 5.19, 4.95]
    assert verdict.out_of_reach(base, [6.0], spec, at_most=5) is None            # a change could be called
    why = verdict.out_of_reach(base, [6.0], spec, at_most=5, only_same=True)    # but only same is an answer
    assert why and why.startswith("out of reach: ")


def test_a_real_difference_inside_the_floor_whose_interval_reaches_past_it_is_unknown():
    """The rule's old third branch: p < alpha, the median delta within the floor, the
    interval past it. That is not 'same': the samples do not show the change is small."""
    avg = catalogue.spec("jitter.avg_us")            # floor 10 %: 8.6 us at 86
    a = [86.0, 86.1, 86.2, 86.3, 86.4, 86.5, 86.6]
    b = [88.0, 88.2, 93.0, 94.0, 104.0, 104.2, 104.5]  # median +9 %: inside; spread: past it
    c = verdict.compare(a, b, avg)
    assert c.p < verdict.ALPHA
    assert abs(c.b - c.a) <= c.floor
    assert c.ci_pct[1] > c.floor / c.a * 100
    assert c.outcome == verdict.UNKNOWN and "uncertain size" in c.why


def test_same_needs_the_interval_within_the_floor():
    avg = catalogue.spec("jitter.avg_us")
    a = [86.0, 86.4, 85.9, 86.2, 86.1]
    assert verdict.compare(a, [86.3, 86.0, 86.2, 85.8, 86.1], avg).outcome == verdict.SAME
    # the same medians, one side bimodal (the suite's 86/104 us runs): not shown to be same
    assert verdict.compare(a, [86.3, 104.0, 86.2, 104.1, 86.1], avg).outcome == verdict.UNKNOWN


def test_exact_samples_whose_differences_reach_across_the_floor_are_not_same():
    free = catalogue.spec("memory.kernel_available_kb")     # floor 4 kB, spread allowed 1 kB
    c = verdict.compare([100000, 100000.5], [100003.5, 100004.5], free, exact=True)   # +3..+4.5 kB
    assert c.method == "rank test" and "reach across the floor" in c.why
    assert c.outcome == verdict.UNKNOWN


@pytest.mark.parametrize("key", ["jitter.avg_us", "jitter.p99_us", "lmbench.bw_tcp_mb_s",
                                 "boot_time.guest_login", "memory.free_free_kb",
                                 "lmbench.lat_pipe_us"])
def test_no_same_verdict_has_an_interval_past_the_floor(key):
    """Random samples around the floor, exact and noisy: every 'same' has its whole interval
    within the floor, every change its whole interval beyond it."""
    spec = catalogue.spec(key)
    rng = random.Random(hash(key) % 1000)
    seen = set()
    for _ in range(150):
        base = 100.0
        floor_pct = spec.floor(base) / base * 100
        shift = rng.choice([0, 0.5, 0.9, 1.0, 1.1, 1.5, 3]) * floor_pct / 100
        cv = rng.choice([0.0, 0.0005, 0.01, 0.05, 0.1])
        n, m = rng.randint(1, 8), rng.randint(1, 8)
        a = [rng.gauss(base, base * cv) for _ in range(n)]
        b = [rng.gauss(base * (1 + shift), base * cv) for _ in range(m)]
        c = verdict.compare(a, b, spec, effort=0.1)
        seen.add(c.outcome)
        if c.outcome == verdict.SAME:
            lo, hi = c.ci_pct
            assert -c.floor / c.a * 100 - 1e-9 <= lo and hi <= c.floor / c.a * 100 + 1e-9, c.why
        elif c.outcome in (verdict.REGRESSED, verdict.IMPROVED):
            lo, hi = c.ci_pct
            fl = c.floor / c.a * 100
            assert lo > fl or hi < -fl, c.why
    assert verdict.SAME in seen and verdict.UNKNOWN in seen


def test_an_unknown_says_what_would_decide_it():
    """A difference near the floor with a modest spread: more samples would decide it; a
    side that flips between two modes farther apart than the floor: no count would."""
    avg = catalogue.spec("jitter.avg_us")
    rng = random.Random(3)
    a = noisy(5, 86.0, 0.03, rng)
    b = noisy(5, 86.0 * 1.14, 0.03, rng)
    says = verdict.boots_to_decide(a, b, avg, budget=5)
    assert says.startswith("about ") and "samples a side would decide it" in says
    bimodal = [86.0, 104.0, 86.1, 104.2, 86.2]
    says = verdict.boots_to_decide([86.0, 86.1, 86.2, 86.3, 86.4], bimodal, avg, budget=5, limit=20)
    assert says.startswith("no number of samples up to 20")
    # against stored figures only this side grows: counted from its own budget, not from
    # the baseline's 30 samples (qemu-ppc's mem_eat, 7 of 30 at the second value, and a
    # kernel at it on every boot: 10 boots decide, where "about 40" was said)
    mem_eat = catalogue.spec("memory.mem_eat_kb")
    stored = [118784.0] * 23 + [118720.0] * 7
    says = verdict.boots_to_decide(stored, [118720.0] * 2, mem_eat, budget=5, both=False)
    assert says.startswith("about 10 samples of this side"), says
    assert verdict.compare(stored, [118720.0] * 10, mem_eat).outcome == verdict.REGRESSED


def test_one_sample_of_a_noisy_metric_is_never_same():
    """A single figure of a noisy metric shows no spread: its bootstrap interval is a point,
    which says nothing about being within the floor."""
    avg = catalogue.spec("jitter.avg_us")
    c = verdict.compare([86.0], [90.0], avg)
    assert c.outcome == verdict.UNKNOWN and "cannot show a noisy metric's spread" in c.why
    assert verdict.compare([86.0, 86.2, 85.9], [86.1, 86.0, 86.2], avg).outcome == verdict.SAME


def test_out_of_reach_grows_both_sides_when_both_are_booted():
    """compare boots A and B in turn: two tight samples a side are not 'out of reach' of a
    rank test at 10 a side, though they are when only B could grow."""
    ctx = catalogue.spec("lmbench.lat_ctx_0k_2p_us")
    a, b = [28.1, 28.1], [32.2, 32.21]
    assert verdict.out_of_reach(a, b, ctx, 10) is not None
    assert verdict.out_of_reach(a, b, ctx, 10, both=True) is None


def test_a_tail_is_judged_as_a_tail():
    """jitter.max_us is a worst case: ten runs at ~3.5 ms against nine at ~3.5 ms and one
    at 37 ms (10 x the baseline's worst) is a regression, not a median that did not move
    (the rank test alone said p=0.977, 'same')."""
    spec = catalogue.spec("jitter.max_us")
    a = [3480.0, 3510.0, 3495.0, 3530.0, 3470.0, 3505.0, 3490.0, 3520.0, 3500.0, 3515.0]
    b = [3485.0, 3500.0, 3492.0, 3525.0, 3475.0, 3508.0, 3498.0, 3512.0, 3503.0, 35300.0]
    v = verdict.compare(a, b, spec)
    assert v.outcome == verdict.REGRESSED and v.method == "tail" and "35300" in v.why
    assert verdict.compare(a, b[:-1] + [3530.0], spec).outcome == verdict.SAME   # within A's worst
    # a median figure is not a tail: one run far out does not decide p99
    assert not catalogue.spec("jitter.p99_us").tail


def test_a_tail_does_not_cry_wolf_on_runs_of_its_own_kind():
    """A/A on maxima of the measured kind (CV 9 %, right-skewed: a Gumbel of scale 0.07),
    200 pairs of 10 runs and 200 of 5 against 10: the tail rule alone flags almost none."""
    spec = catalogue.spec("jitter.max_us")
    rng = random.Random(7)

    def maxima(n):
        return [2200.0 * (1 - 0.07 * math.log(-math.log(rng.random()))) for _ in range(n)]
    alarms = sum(verdict.tail_spike(maxima(na), maxima(10), spec) is not None
                 for na in (10, 5) for _ in range(200))
    assert alarms <= 1, alarms


def test_the_advice_for_a_baseline_of_one_or_two_samples_is_to_measure_it_again():
    """It said 'the spread itself must shrink' even for a spread of 0: the cure is the
    stored side's samples (issue 'Answers without holes')."""
    from boardlab.measure import catalogue
    spec = catalogue.spec("memory.free_free_kb")
    for stored in ([3072.0], [3072.0, 3072.0]):
        why = verdict.boots_to_decide(stored, [3100.0] * 3, spec, 5, both=False)
        assert why.startswith(f"the baseline holds {len(stored)} sample") and "measure it again" in why, why
    assert "measure it again" not in verdict.boots_to_decide([3072.0] * 3, [3100.0, 3050.0, 3300.0], spec, 5, both=False)
