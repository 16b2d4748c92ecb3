"""Memory bandwidth by bw_mem's method (target/measure/METHODS.md): read, write and copy
of a working set sized from the board's RAM (jobs/testdefs/mem_bw/runs.sh: a sixteenth of
MemTotal, 256 kB to 8 MB), in MB/s on the board's clock. The project's program on every
CPU (target/measure/, integers only: the MPC8xx has no FPU); a board whose root carries
Debian's set gets it over its console when the suite runs (own_onto), so that root stays
as its baselines know it. Floor 3 %, as the other bandwidths': on the deterministic clock
a pass is instructions, and repeats; on a real board the study's smallest difference was
far larger."""
from __future__ import annotations

from boardlab.measure import ownoutput
from boardlab.measure.families.record import GUEST, OWN, STUDY_TOOLS, Family, Options
from boardlab.measure.metric import MetricSpec
from boardlab.measure.parsers import ParseError

NAME = "mem_bw"
OPS = {"rd": "read", "wr": "write", "cp": "copy"}
METRICS = tuple(MetricSpec(f"{NAME}.{op}_mb_s", "MB/s", "higher", GUEST, 0.03,
                           what=f"memory bandwidth: {what} of a working set sized from the RAM")
                for op, what in OPS.items())


def read(lines, tools=None) -> dict:
    """Its runs' raw output: one '@raw bw mem_OP bytes=B ns=NS' line each. A run that
    printed none, or what is no figure, is the program's fault (ProgramOutputError)."""
    try:
        recs = {r["name"]: r for r in ownoutput.parse_raw("\n".join(lines)) if r["kind"] == "bw"}
        out = {f"{NAME}.{op}_mb_s": ownoutput.raw_value(recs[f"mem_{op}"]) for op in OPS if f"mem_{op}" in recs}
    except ParseError as e:
        raise ownoutput.ProgramOutputError(f"bw_mem (the project's) printed what is no figure: {e}") from None
    lacking = [op for op in OPS if f"{NAME}.{op}_mb_s" not in out]
    if lacking:
        raise ownoutput.ProgramOutputError(f"bw_mem (the project's) printed no {lacking[0]} figure: "
                                           + " | ".join(list(lines)[-3:]))
    return out


def params(o: Options) -> dict:
    return {"QUICK": "true" if o.quick else "false"}


FAMILY = Family(NAME, METRICS, GUEST, order=65, listed=45, what="memory bandwidth: read, write, copy",
                board_files=(f"{NAME}/runs.sh",), run="QUICK=true; mb_run", reads=read,
                script=f"{NAME}/{NAME}.sh", testdef=f"{NAME}/{NAME}.yaml", params=params,
                minutes=lambda p, quick: 3, workload=False, default=False, shown=f"{NAME}.rd_mb_s",
                tools={isa: OWN for isa in STUDY_TOOLS}, own_onto=True)
