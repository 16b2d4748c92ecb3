"""A measurement family, one record each: its metrics (the catalogue's entries of its
suite), its clock, what the board's image must have for it, the board-side script that
measures it (for pytest and LAVA alike), the LAVA test definition with its parameters and
minutes, where its suite runs in a session, and whether it leaves the board disturbed.
Every list of families (the catalogue's order, the clocks, a boot's sample, LAVA's suites,
the suites' order, the commands' defaults) is read from FAMILIES; tests/test_families.py
fails on a family listed anywhere else."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from boardlab.errors import Bug, InputError
from boardlab.measure import catalogue, ownoutput, parsers, readings, workloads

HOST, GUEST, NONE = catalogue.HOST, catalogue.GUEST, catalogue.NONE
CLOCKS = (HOST, GUEST, NONE)
TESTDEFS = "jobs/testdefs"

# The programs a family's runs call, per CPU (a board's facts: isa): Debian's packages, or
# the project's own (target/measure/, boardlab/images/ownprograms.py), which a board's root
# carries in OWN_BIN under the tools' own names, so the same board-side scripts run either
# set by PATH alone. Figures of one set are never judged against figures of the other
# (decide.why_not); a figure that does not say its set was measured with Debian's.
DEBIAN, OWN = "debian", ownoutput.OWN
TOOL_SETS = (DEBIAN, OWN)
OWN_BIN = "/usr/lib/boardlab/bin"
SET_WORDS = {DEBIAN: "Debian's programs", OWN: "the project's programs"}
# Debian ships lmbench and rt-tests for armhf and armel; for 32-bit PowerPC nothing, and
# its archive does not serve their sources here
STUDY_TOOLS = {"armhf": DEBIAN, "armel": DEBIAN, "e500mc": OWN, "603e": OWN, "mpc8xx": OWN}


class FamilyError(Bug, ValueError):
    """A family record that is incomplete (no clock, say): ours to fix."""


class UnknownFamily(InputError, ValueError):
    __str__ = Exception.__str__


@dataclass(frozen=True)
class Options:
    """What a LAVA job's parameters of a family depend on."""
    quick: bool = False
    small: bool = False            # workloads.small_board
    jitter_s: int | None = None    # cyclictest's run length (None: workloads.JITTER_RUN_S)


def _no_params(o: Options) -> dict:
    return {}


@dataclass(frozen=True)
class Family:
    name: str                     # the suite: testsuites/test_<name>.py, LAVA's suite, metrics' prefix
    clock: str                    # its timed figures' clock: host, guest (the board's) or none (sizes)
    order: int                    # where its suite runs in a session (pytestplugin.SUITE_ORDER)
    what: str = ""
    on_boot: bool = True          # measured on a boot (sample.MEASURED_HERE, else its run); the build is not
    packages: tuple = ()          # what the board's image must have for it
    script: str | None = None     # the board-side script under jobs/testdefs/ that LAVA runs
    board_files: tuple = ()       # what the pytest side writes to the board from jobs/testdefs/
    #                               (boardlab.measure.target_load): the same runs as LAVA's
    run: str = ""                 # with those sourced, the board's command of one sample (pytest),
    #                               where sample.MEASURED_HERE does not measure it
    figures: tuple = ()           # (name, pattern): each figure of run's output, the pattern's
    #                               group, its last match (parsers.parse_figures)
    reads: Callable | None = None  # (lines, tools) -> its figures, of its board-side script's raw
    #                               output (measure.tagged; None: by `figures`), the suites' parsers
    testdef: str | None = None    # LAVA's test definition under jobs/testdefs/ (None: none runs on the board)
    lava: bool = True             # a LAVA suite (boot_time: timed from the job's log)
    params: Callable[[Options], dict] = _no_params   # the test definition's parameters
    minutes: Callable[[dict, bool], int] = lambda p, quick: 5   # (parameters, quick) -> its LAVA minutes
    workload: bool = False        # its runs leave the board disturbed (pytest's mark `workload`)
    default: bool = True          # in the commands' default selection (compare, LAVA render)
    one_boot: bool = False        # exact on the deterministic clock: one boot decides (nightly)
    shown: str = ""               # the figure a sweep's table shows of it
    tools: dict | None = None     # {isa: DEBIAN or OWN}: whose programs its runs call (None: the shell's own)
    host_work: bool = False       # work the lab host does itself (the build): its sizes are exact by what
    #                               they are, its times the host's
    group_of: Callable | None = None   # metric -> the run of the family that gives it alone (a bisect
    #                               of one figure runs that group only)
    settings: Callable[[dict], dict] = lambda params: {}   # how its figures were measured, from its
    #                               parameters, where that changes a figure (jitter's run length)
    root: str | None = None       # the one root it is measured on (memory: the ramdisk, as the study)
    health: tuple = ()            # its figures a board's health check measures besides the boot's, for
    #                               the board's own history (judge.health, judge.boardhealth): a board
    #                               that got slower once it runs, which its boot alone does not show

    def __post_init__(self):
        if self.clock not in CLOCKS:
            raise FamilyError(f"family {self.name!r} has no clock ({self.clock!r}): each family says "
                              f"which of {', '.join(CLOCKS)} its figures are counted on")

    @property
    def metrics(self) -> list[catalogue.MetricSpec]:
        return catalogue.of_suite(self.name)

    def read(self, lines, tools: str | None = None) -> dict:
        """Its figures (catalogue keys) of what its programs printed: its reader, else its
        figures' patterns (parsers.ParseError when one is lacking); the one reading of its
        output, for the suites and LAVA alike."""
        if self.reads is not None:
            return self.reads(list(lines), tools)
        found = parsers.parse_figures("\n".join(lines), self.figures)
        return {f"{self.name}.{k}": v for k, v in found.items()}


def _lmbench_params(o: Options) -> dict:
    return {"QUICK": "true" if o.quick else "false", "SMALL": "true" if o.small else "false"}


def _jitter_params(o: Options) -> dict:
    return {"DURATION": str(o.jitter_s or workloads.JITTER_RUN_S),
            "INTERVAL": str(workloads.CYCLICTEST_INTERVAL_US),
            "HISTOGRAM": str(workloads.CYCLICTEST_HISTOGRAM_US)}


# their order: reports, charts and compare's tables list them so, a boot measures them so
# (memory before any workload); `order` is where each suite runs in a pytest session
FAMILIES: tuple[Family, ...] = (
    Family("boot_time", HOST, 10, "the study's boot milestones", one_boot=True,
           shown="boot_time.guest_login"),
    Family("build", HOST, 40, "a clean kernel build: times and sizes", on_boot=False, lava=False,
           default=False, host_work=True),
    Family("memory", NONE, 20, "free, the kernel's Memory: line, mem_eat", one_boot=True,
           script="memory/memory.sh", testdef="memory/memory.yaml", shown="memory.mem_eat_kb",
           reads=readings.read_memory, root="ramdisk"),
    Family("lmbench", GUEST, 60, "lmbench's latencies and bandwidths", packages=("lmbench",),
           script="lmbench/lmbench.sh", board_files=("lmbench/runs.sh",), testdef="lmbench/lmbench.yaml",
           params=_lmbench_params, minutes=lambda p, quick: 10 if quick else 40, workload=True,
           shown="lmbench.lat_syscall_null_us", tools=STUDY_TOOLS, reads=readings.read_lmbench,
           group_of=readings.lmbench_group_of, health=("lat_syscall_null_us", "lat_pipe_us")),
    Family("jitter", GUEST, 50, "cyclictest under load", packages=("rt-tests",),
           script="jitter/jitter.sh", board_files=("lib/load.sh", "lib/cycles.sh"),
           testdef="jitter/jitter.yaml", params=_jitter_params,
           minutes=lambda p, quick: 2 + 3 * int(p["DURATION"]) // 60, workload=True,
           shown="jitter.max_us", tools=STUDY_TOOLS, reads=readings.read_jitter,
           settings=lambda p: {"run_s": int(p["DURATION"])} if "DURATION" in p else {}),
    Family("hackbench", GUEST, 70, "hackbench: processes passing messages over sockets",
           packages=("rt-tests",), script="hackbench/hackbench.sh", board_files=("hackbench/runs.sh",),
           run="hb_run", figures=(("time_s", r"^Time:\s*([\d.]+)"),), testdef="hackbench/hackbench.yaml",
           workload=True, shown="hackbench.time_s", tools=STUDY_TOOLS),
)
BY_NAME = {f.name: f for f in FAMILIES}
NAMES = tuple(BY_NAME)


def get(name: str) -> Family:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownFamily(f"no family {name!r} (boardlab/measure/families.py has: "
                            f"{', '.join(NAMES)})") from None


def tool_set(name: str, isa: str, chosen: str | None = None) -> str | None:
    """Whose programs family `name` runs on a CPU of `isa` (DEBIAN or OWN; None for a
    family that calls none): the record's, or `chosen` (the side-by-side bench's)."""
    fam = get(name)
    if fam.tools is None:
        return None
    if chosen is not None:
        if chosen not in TOOL_SETS:
            raise InputError(f"tool set {chosen!r}: {' or '.join(TOOL_SETS)}")
        return chosen
    try:
        return fam.tools[isa]
    except KeyError:
        raise InputError(f"family {name}: no tool set for isa {isa!r} (its record has "
                         f"{', '.join(fam.tools)})") from None


def run_prefix(tools: str | None) -> str:
    """What a board-side command starts with to call the set's programs."""
    return f"PATH={OWN_BIN}:$PATH " if tools == OWN else ""


def tool_settings(tools: str | None) -> dict:
    """The figures' settings that say their set: only the project's says it (a figure
    that says none was measured with Debian's, as every figure before the project's)."""
    return {"tools": OWN} if tools == OWN else {}


def run_settings(suite: str, options: Options) -> dict:
    """How a family's figures are measured with these options, where that changes a
    figure (its record's settings of its parameters: jitter's run length); {} for none."""
    fam = BY_NAME.get(suite)
    return fam.settings(fam.params(options)) if fam else {}


def figure_settings(suite: str, isa: str, settings: dict | None = None,
                    chosen: str | None = None) -> dict | None:
    """A figure's settings with the set of programs that measured it said (the one place
    every recorder asks: the results, compare's sides); chosen: a set other than the
    record's (compare --tools)."""
    its = tool_set(suite, isa, chosen) if suite in BY_NAME else None
    return {**tool_settings(its), **(settings or {})} or None


def settings_set(settings: dict | None) -> str:
    """The set a figure's settings say (DEBIAN where they say none)."""
    return (settings or {}).get("tools", DEBIAN)


def on_boot() -> tuple[str, ...]:
    """The families a boot measures, in the record's order (memory before any workload)."""
    return tuple(f.name for f in FAMILIES if f.on_boot)


def in_suite_order(others: dict | None = None) -> tuple[str, ...]:
    """The suites' names (test_<name>) in the order a session runs them; others: {suite
    name: order} of suites that are no family (test_shell)."""
    order = {f"test_{f.name}": f.order for f in FAMILIES}
    order.update(others or {})
    return tuple(sorted(order, key=order.get))


def of_family(name: str) -> int:
    """Where the family is in the record's order (99 for no family): a sort key."""
    return NAMES.index(name) if name in BY_NAME else 99
