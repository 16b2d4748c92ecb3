"""hackbench (rt-tests): groups of processes passing messages over sockets, the scheduler
and the kernel's socket path under many tasks; its time in seconds, counted on the board.
Run by jobs/testdefs/hackbench/runs.sh, the one definition LAVA runs too, its figures read
as its family's record (boardlab.measure.families) says. A workload (its record says so):
it leaves slab and freed processes behind."""
from boardlab.measure import sample


def test_hackbench_time(shell, gate, tool_set):
    tools = tool_set("hackbench")
    gate.sample("hackbench", lambda: sample.family("hackbench", shell, None, tools=tools))
    gate.check()
