"""Jitter: cyclictest (the successor of realfeel) under load, like the 2005 article:
a shell loop of ls/find over / plus hackbench. Metrics min/avg/max/p99 in us; plots of
latency over time and of the histogram (log counts) go to the run directory."""
from boardlab.pages import plots
from boardlab.measure import workloads
from boardlab.measure.families import jitter

# a workload (hackbench and the ls/find loop change caches and slab): its record says so
INTERVAL_US = workloads.CYCLICTEST_INTERVAL_US
SLICES = 200             # points of the latency-over-time figure


def test_cyclictest_under_load(board_strategy, board_facts, shell, gate, run_dir, request, tool_set):
    """One run per sample; the plots show the last run."""
    tools = tool_set("jitter")
    duration = request.config.getoption("--jitter-duration") or workloads.JITTER_RUN_S
    per_slice = max(1, duration * 1_000_000 // INTERVAL_US // SLICES)
    last = {}

    def one_run():
        t, last["series"] = jitter.under_load(shell, duration, per_slice, tools)
        last["counts"] = t["histogram"]
        return {k.split(".", 1)[1]: v for k, v in jitter.figures(t).items()}
    gate.sample("jitter", one_run, settings={"run_s": duration})   # a longer run's max is another figure
    kernel = board_strategy.kernel_under_test.name
    title = f"{board_facts.name} {kernel}: cyclictest -p 80 -i {INTERVAL_US} under load, {duration} s"
    plots.latency_over_time(last["series"], run_dir / f"jitter-{kernel}-over-time.png", title)
    plots.latency_histogram(last["counts"], run_dir / f"jitter-{kernel}-histogram.png", title)
    gate.check()
