"""Jitter: cyclictest (the successor of realfeel) under load, like the 2005 article:
a shell loop of ls/find over / plus hackbench. Metrics min/avg/max/p99 in us; plots of
latency over time and of the histogram (log counts) go to the run directory."""
import pytest

from boardlab.judge import plots
from boardlab.measure import parsers, target_load, workloads

pytestmark = pytest.mark.workload   # hackbench and the ls/find loop change caches and slab

INTERVAL_US = workloads.CYCLICTEST_INTERVAL_US
SLICES = 200             # points of the latency-over-time figure


def cyclictest_run(shell, duration, per_slice):
    """One cyclictest run under load -> (cyclictest's JSON thread 0, the latency series)."""
    loops = workloads.cyclictest_loops(duration)
    try:
        out, _, rc = shell.run(target_load.under_load(
            workloads.cyclictest(duration, "--json=/tmp/cyc.json -v > /tmp/cyc.v 2>/dev/null")),
            timeout=duration * 3 + 60)
    finally:   # stopped already, unless the run was interrupted
        shell.run(f". {target_load.ON_BOARD} && load_stop", timeout=30)
    assert out[-1] == "rc=0", f"cyclictest failed: {out}"
    stats = parsers.parse_cyclictest_json("\n".join(shell.run_check("cat /tmp/cyc.json")))
    # the latency-over-time series, reduced on the board: the max of each slice
    series_out = shell.run_check(
        f"awk -F: 'NF==3 && $2 ~ /^ *[0-9]+$/ {{n++; if ($3+0 > m) m = $3+0; "
        f"if (n % {per_slice} == 0) {{ print n, m; m = 0 }} }}' /tmp/cyc.v; rm -f /tmp/cyc.v")
    series = [(int(n) * INTERVAL_US / 1e6, int(v)) for n, v in (ln.split() for ln in series_out)]
    t = stats["thread"]["0"]
    assert t["cycles"] >= loops * 0.99, f"cyclictest ran {t['cycles']} of {loops} cycles"
    return t, series


def test_cyclictest_under_load(board_strategy, board_facts, shell, gate, run_dir, quick, request,
                               require_package):
    """One run per sample; the plots show the last run."""
    require_package("rt-tests")
    duration = request.config.getoption("--jitter-duration") or (10 if quick else 60)
    per_slice = max(1, duration * 1_000_000 // INTERVAL_US // SLICES)
    shell.run_check(target_load.install_command())
    last = {}

    def one_run():
        t, last["series"] = cyclictest_run(shell, duration, per_slice)
        last["counts"] = t["histogram"]
        return {"min_us": t["min"], "avg_us": t["avg"], "max_us": t["max"],
                "p99_us": parsers.percentile_from_histogram(t["histogram"], 99)}
    gate.sample("jitter", one_run)
    kernel = board_strategy.kernel_under_test.name
    title = f"{board_facts.name} {kernel}: cyclictest -p 80 -i {INTERVAL_US} under load, {duration} s"
    plots.latency_over_time(last["series"], run_dir / f"jitter-{kernel}-over-time.png", title)
    plots.latency_histogram(last["counts"], run_dir / f"jitter-{kernel}-histogram.png", title)
    gate.check()
