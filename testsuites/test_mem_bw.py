"""Memory bandwidth (lmbench's bw_mem method, the project's program on every CPU): read,
write and copy of a working set sized from the board's RAM, MB/s on the board's clock.
Run by jobs/testdefs/mem_bw/runs.sh, the one definition LAVA runs too, its figures read by
its family's reader (boardlab.measure.families.mem_bw). On a board whose root carries
Debian's programs, the project's are put on it over the console first (its record's
own_onto): the root stays as its baselines know it."""
from boardlab.measure import sample


def test_memory_bandwidth(shell, gate, tool_set):
    tools = tool_set("mem_bw")
    gate.sample("mem_bw", lambda: sample.family("mem_bw", shell, None, tools=tools))
    gate.check()
