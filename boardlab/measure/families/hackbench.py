"""hackbench (rt-tests', or the project's program in its place): 4 groups of 40 processes
passing 100 messages over sockets, its time on the board's clock. Floor 5 %: the run is
the scheduler's order of 160 tasks, which the harness's input timing moves as it moves
lat_ctx's ring (up to 15 % in single runs), so it is noisy, decided by a rank test; 5 %
is still a sixth of the smallest change the study's latency tables showed."""
from __future__ import annotations

from boardlab.measure.families.record import GUEST, STUDY_TOOLS, Family
from boardlab.measure.metric import MetricSpec

NAME = "hackbench"
METRICS = (MetricSpec(f"{NAME}.time_s", "s", "lower", GUEST, 0.05, exact=False,
                      what="hackbench: 4 groups of 40 processes, 100 messages, its time"),)

FAMILY = Family(NAME, METRICS, GUEST, order=70, listed=60, what="hackbench: processes passing messages over sockets",
                packages=("rt-tests",), image=(("rt-tests", "usr/bin", "^hackbench$", "usr/bin"),), script=f"{NAME}/{NAME}.sh", board_files=(f"{NAME}/runs.sh",),
                run="hb_run", figures=(("time_s", r"^Time:\s*([\d.]+)"),), testdef=f"{NAME}/{NAME}.yaml",
                workload=True, shown=f"{NAME}.time_s", tools=STUDY_TOOLS)
