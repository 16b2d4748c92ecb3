"""lmbench, the results the study reports, group by group: run on the board by
jobs/testdefs/lmbench/runs.sh, the one sequence, which LAVA, compare, bisect and the benches
run too, and parsed by boardlab.measure.sample. Quick mode (--quick)
shortens lmbench's timing loops (boardlab.measure.families.lmbench.QUICK: 1-5 s a
program instead of 30 s under emulation). Each group is sampled: its exact figures are
decided by one run, the noisy ones (context switches, loopback TCP) take more."""
import pytest

from boardlab.measure import workloads
from boardlab.measure.families import lmbench

# a workload (its runs leave sockets, files and slab behind): its record says so


@pytest.fixture
def lm(shell, quick, tool_set):
    return lmbench.runner(shell, quick, tools=tool_set("lmbench"))


@pytest.fixture
def not_small(board_facts):
    if workloads.small_board(board_facts.ram_mb):
        pytest.skip(f"{board_facts.name} has {board_facts.ram_mb} MB RAM: this lmbench "
                    f"test ran out of memory there in the study")


def measure(gate, lm, *groups):
    for group in groups:
        gate.sample("lmbench", lambda: lmbench.group(group, lm))
    gate.check()


def test_latencies(lm, gate):
    measure(gate, lm, "latencies", "connect")


def test_file_create_delete(lm, gate):
    measure(gate, lm, "file_create_delete")


def test_context_switch(lm, gate, not_small):
    measure(gate, lm, "context_switch")


def test_bandwidth(lm, gate, not_small):
    measure(gate, lm, "bandwidth", "tcp_bandwidth")
