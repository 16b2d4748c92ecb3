"""Jitter the realfeel way: cyclictest (Debian's rt-tests, or the project's program in its
place) under a load, its wake-up latencies' min, avg, max, 99th and 0.1th percentiles.
The settings of a run are measure.workloads' (one definition for the suites and LAVA).

Floors 10 % (p99, max, avg) and 5 % (the 0.1th percentile): cyclictest's timer swept
against the kernel's tick (workloads.CYCLICTEST_INTERVAL_US), avg and p99 repeat to 0.2 and
1.8 % on the deterministic clock; max is one worst path (CV 8-9 % per 10 s run, decided
from 60 s a boot); always a rank test. min is information only."""
from __future__ import annotations

from boardlab.measure import parsers, target_load, workloads
from boardlab.measure.families.record import GUEST, STUDY_TOOLS, Family, Options
from boardlab.measure.metric import MetricSpec

NAME = "jitter"

# min is a single early wake-up (37-56 us against 66-67, 1-3 cycles in 10 000, in ~40 % of
# runs): no number of runs decides it at any useful floor. The lower tail is judged by
# the 0.1th percentile (67 us in 67 of 68 runs); min is kept as information.
MIN_NOT_JUDGED = ("information only: the single shortest wake-up comes and goes from run to run "
                  f"({NAME}.p0_1_us, the 0.1th percentile, is judged instead)")
_WHAT = {"min_us": "minimum", "p0_1_us": "0.1th percentile", "avg_us": "average",
         "max_us": "maximum", "p99_us": "99th percentile"}
METRICS = tuple(
    MetricSpec(f"{NAME}.{n}", "us", "lower", GUEST, floor, exact=False, tail=n == "max_us",
               what=f"cyclictest under load: {_WHAT[n]} latency",
               not_judged=MIN_NOT_JUDGED if n == "min_us" else "")
    for n, floor in (("min_us", 0.05), ("p0_1_us", 0.05), ("avg_us", 0.10), ("max_us", 0.10), ("p99_us", 0.10)))


def figures(thread: dict) -> dict:
    """The figures of one cyclictest run (its JSON's thread 0)."""
    hist, overflows = thread["histogram"], thread.get("overflows", 0)
    return {f"{NAME}.min_us": thread["min"], f"{NAME}.avg_us": thread["avg"], f"{NAME}.max_us": thread["max"],
            f"{NAME}.p99_us": parsers.percentile_from_histogram(hist, 99, overflows),
            f"{NAME}.p0_1_us": parsers.percentile_from_histogram(hist, 0.1, overflows)}


def read(lines, tools=None) -> dict:
    """The board-side script's raw output: cycles.sh's reduction of cyclictest's per-cycle
    lines ('H us count', 'N cycles overflows min max sum')."""
    cycles = parsers.parse_cycles_reduction(lines)
    if "sum" not in cycles or not cycles["cycles"]:
        raise parsers.ParseError("no 'N cycles overflows min max sum' line with cycles")
    return figures({"min": cycles["min"], "max": cycles["max"], "avg": round(cycles["sum"] / cycles["cycles"], 2),
                    "histogram": cycles["histogram"], "overflows": cycles["overflows"]})


def under_load(shell, seconds: int, per_slice: int = 0, tools: str | None = None) -> tuple[dict, list]:
    """The suite's measurement: cyclictest under its load, `seconds` long -> (cyclictest's
    JSON, thread 0, with the histogram and its overflows made from every cycle's latency;
    the latency over time, the max of every per_slice cycles as (s, us), when per_slice).
    The one definition: the suite, compare and the benches take it from here."""
    shell.run_check(target_load.install_command("load.sh"))
    shell.run_check(target_load.install_command("cycles.sh"))
    try:
        out, _, _ = shell.run(target_load.under_load(target_load.with_tools(workloads.cyclictest(
            seconds, "--json=/tmp/cyc.json > /tmp/cyc.v 2>/dev/null"), tools)), timeout=seconds * 20 + 60)
    finally:   # stopped already, unless the run was interrupted
        shell.run(target_load.stop_load(), timeout=30)
    if out[-1] != "rc=0":
        raise RuntimeError(f"cyclictest failed: {out[-3:]}")
    t = parsers.parse_cyclictest_json("\n".join(shell.run_check("cat /tmp/cyc.json")))["thread"]["0"]
    loops = workloads.cyclictest_loops(seconds)
    if t["cycles"] < loops * 0.99:
        raise RuntimeError(f"cyclictest ran {t['cycles']} of {loops} cycles")
    # reduced on the board, the load stopped: a few hundred lines over the console, not 60000
    cycles = parsers.parse_cycles_reduction(
        shell.run_check(target_load.cycles_reduction("/tmp/cyc.v", per_slice), timeout=seconds * 2 + 60))
    shell.run("rm -f /tmp/cyc.v")
    if cycles["cycles"] != t["cycles"]:   # its main thread fell behind: a ring of 16384 values overrun
        raise RuntimeError(f"cyclictest printed {cycles['cycles']} of its {t['cycles']} cycles' latencies")
    t["histogram"], t["overflows"] = cycles["histogram"], cycles["overflows"]
    series = [(n * workloads.CYCLICTEST_INTERVAL_US / 1e6, v) for n, v in cycles["slices"]]
    return t, series


def run(shell, seconds: int, tools: str | None = None) -> tuple[dict, dict]:
    """cyclictest under its load, `seconds` long -> (figures, histogram)."""
    t, _ = under_load(shell, seconds, tools=tools)
    return figures(t), t["histogram"]


def measure(shell, rec, jitter_s=workloads.JITTER_RUN_S, tools=None, extras=None, **_) -> dict:
    """On a boot: one run; its histogram kept in extras (compare draws it)."""
    figures_, histogram = run(shell, jitter_s, tools)
    if extras is not None:
        extras["histogram"] = histogram
    return figures_


def params(o: Options) -> dict:
    return {"DURATION": str(o.jitter_s or workloads.JITTER_RUN_S),
            "INTERVAL": str(workloads.CYCLICTEST_INTERVAL_US),
            "HISTOGRAM": str(workloads.CYCLICTEST_HISTOGRAM_US)}


FAMILY = Family(NAME, METRICS, GUEST, order=50, listed=50, what="cyclictest under load", packages=("rt-tests",),
                image=(("rt-tests", "usr/bin", "^cyclictest$", "usr/bin"),), measure=measure, script=f"{NAME}/{NAME}.sh", board_files=("lib/load.sh", "lib/cycles.sh"),
                testdef=f"{NAME}/{NAME}.yaml", params=params,
                minutes=lambda p, quick: 2 + 3 * int(p["DURATION"]) // 60, workload=True,
                shown=f"{NAME}.max_us", tools=STUDY_TOOLS, reads=read,
                settings=lambda p: {"run_s": int(p["DURATION"])} if "DURATION" in p else {})
