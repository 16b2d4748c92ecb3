"""The lab host's share over a span (boardlab.measure.hostload), as the benches keep it."""
import os

from boardlab.measure import hostload


def test_a_span_says_busy_stolen_and_cpu_seconds():
    tick = os.sysconf("SC_CLK_TCK")
    before = [100, 0, 50, 800, 50, 0, 0, 0]
    after = [100 + 3 * tick, 0, 50 + tick, 800 + 5 * tick, 50, 0, 0, tick]   # 10 s of CPU time
    got = hostload.share(before, after)
    assert (got["busy_pct"], got["steal_pct"], got["busy_cpu_s"]) == (50.0, 10.0, 5.0)
    assert got["load1"] >= 0


def test_the_host_counts_up():
    first = hostload.cpu_ticks()
    assert len(first) == 8 and all(b >= a for a, b in zip(first, hostload.cpu_ticks()))
