"""What runs on the board for a measurement, defined once: the pytest suites
(testsuites/), one sample per boot (boardlab.measure.sample, for compare and bisect), the parser
captures (tests/data/capture.py) and the LAVA jobs take their settings from here; the
LAVA test definitions' shell (jobs/testdefs) is checked against it by
tests/test_workloads.py, which fails on drift."""
from __future__ import annotations

# a board with less RAM skips the context-switch and bandwidth runs (and sizes the
# programs' working sets down): the TQM860L's 16 MB ran out there in the study
SMALL_BOARD_MB = 32

# cyclictest (the successor of realfeel) as the 2005 article ran it: locked memory, one
# SCHED_FIFO thread at priority 80, a 1 ms interval. Every cycle's latency is printed (-v)
# to a file on the board (the latency over time): everywhere, so that the suite, compare and
# LAVA measure under the same writes. The histogram is made from those per-cycle values on
# the board once the load has stopped (jobs/testdefs/lib/cycles.sh), not by cyclictest's -h: at exit -h
# prints every one of its buckets, 20000 lines with the zeros, from cyclictest's main
# thread, an ordinary thread among the load's ~40 processes. That took about 13 s of the
# board's clock (16-20 s of the host's) a run whatever its length, and the load ran on
# meanwhile; the figures are the same either way (docs/measurement.md, "Jitter").
# The histogram reaches 20 ms because a QEMU board's worst case is in milliseconds; longer
# wake-ups count as its overflows.
# 1001 us, not 1000: the kernel's tick falls on whole milliseconds (HZ 100, 250, 1000), so
# a 1000 us timer keeps one phase against it for a whole run, drawn at random when the run
# starts. In a window of ~135 us around the tick every 4th wake-up waits for the tick's
# work: armmp on the deterministic clock, 10 s runs, avg 86 us outside it and 104 inside,
# p99 180 against 260 (about 1 run in 7). At 1001 us the phase sweeps the whole
# millisecond once a second, so every run measures the phase-averaged latency: avg CV
# 0.2 %, p99 1.8 % over 12 runs on 4 boots (docs/measurement.md, "Jitter").
CYCLICTEST_PRIORITY = 80
CYCLICTEST_INTERVAL_US = 1001
CYCLICTEST_HISTOGRAM_US = 20000
# One run length for the jitter suite, quick mode or not: under the load a burst of long
# wake-ups comes about every 5.5 s (the ls/find pass), and the maximum is the worst burst
# the run sees. A 10 s run sees about two: its maximum moves by 9 % from run to run, and no
# number of runs decides it at its 10 % floor. A 60 s run sees about eleven: 2215-2483 us
# over 10 runs (CV 3.8 %), decided in 3 runs. Its cost: about 78 s of host time a run
# against 30 s (docs/measurement.md, "The run length").
JITTER_RUN_S = 60


def cyclictest_loops(seconds: float) -> int:
    return int(seconds * 1_000_000 // CYCLICTEST_INTERVAL_US)


def cyclictest(seconds: float, *options: str) -> str:
    """The cyclictest command of a run `seconds` long; options: where its output goes."""
    return " ".join([f"cyclictest -m -v -p {CYCLICTEST_PRIORITY} -i {CYCLICTEST_INTERVAL_US} "
                     f"-l {cyclictest_loops(seconds)}", *options])


def small_board(ram_mb: int) -> bool:
    return ram_mb < SMALL_BOARD_MB
