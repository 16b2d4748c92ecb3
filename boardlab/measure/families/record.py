"""What a measurement family is: one record each (boardlab.measure.families.<name>) of
its metrics, its clock, what the board's image must have for it, how it measures on a
running boot and reads what its programs printed, the board-side script LAVA runs, its
test definition with its parameters and minutes, where its suite runs in a session, and
whether it leaves the board disturbed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from boardlab.errors import Bug, InputError
from boardlab.measure import metric, ownoutput, parsers

HOST, GUEST, NONE = metric.HOST, metric.GUEST, metric.NONE
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
# the study's measurement tools: Debian ships them for armhf and armel; for 32-bit
# PowerPC nothing, and its archive does not serve their sources here
STUDY_TOOLS = {"armhf": DEBIAN, "armel": DEBIAN, "e500mc": OWN, "603e": OWN, "mpc8xx": OWN}


class FamilyError(Bug, ValueError):
    """A family record that is incomplete (no clock, say): ours to fix."""


class UnknownFamily(InputError, ValueError):
    __str__ = Exception.__str__


class NoMeasurement(Bug, ValueError):
    """A family asked to measure on a boot that has no measurement there (the build)."""


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
    metrics: tuple = ()           # its metrics (metric.MetricSpec; the catalogue is every family's)
    clock: str = ""                   # its timed figures' clock: host, guest (the board's) or none (sizes)
    order: int = 0                # where its suite runs in a session (pytestplugin.SUITE_ORDER)
    listed: int = 0               # where reports and tables list it, and a boot measures it (memory
    #                               before any workload)
    what: str = ""
    on_boot: bool = True          # measured on a boot (by `measure`, else its run); the build is not
    measure: Callable | None = None   # (shell, rec, metric=, jitter_s=, small=, tools=) -> its figures
    #                               on the running boot (rec: its BootRecord); None: by its `run`
    packages: tuple = ()          # what the board's image must have for it (Debian's packages)
    image: tuple = ()             # Debian's programs its root carries: (package, directory in it, names
    #                               (a regular expression), directory in the root), per package
    script: str | None = None     # the board-side script under jobs/testdefs/ that LAVA runs
    board_files: tuple = ()       # what the pytest side writes to the board from jobs/testdefs/
    #                               (boardlab.measure.target_load): the same runs as LAVA's
    run: str = ""                 # with those sourced, the board's command of one sample (pytest),
    #                               where `measure` does not measure it
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
    own_onto: bool = False        # the project's programs put on the running board when its root lacks
    #                               them (a family no Debian program measures), not built into its image
    host_work: bool = False       # work the lab host does itself (the build): its sizes are exact by what
    #                               they are, its times the host's
    group_of: Callable | None = None   # metric -> the run of the family that gives it alone (a bisect
    #                               of one figure runs that group only)
    settings: Callable[[dict], dict] = lambda params: {}   # how its figures were measured, from its
    #                               parameters, where that changes a figure (jitter's run length)
    root: str | None = None       # the one root it is measured on (memory: the ramdisk, as the study)
    harness_floor_abs: tuple = ()  # ((harness, a wider absolute floor), ...): where
    #                               a harness puts something of its own in its figures (LAVA's overlay)
    study_note: str = ""          # how the 2005 study measured it, where that is not ours (pages.studybeside)
    study_changes: Callable | None = None   # the study's results -> {its metric: the study's 2.4 -> 2.6
    #                               change, in words}, where the study reported it pooled, not per board
    raw_commands: Callable | None = None   # (metrics, tools) -> the shell lines that print those figures'
    #                               raw, tagged output on a board (what `measure` runs; LAVA's health
    #                               check types them), read by `read`
    health: tuple = ()            # its figures a board's health check measures besides the boot's, for
    #                               the board's own history (judge.health, judge.boardhealth): a board
    #                               that got slower once it runs, which its boot alone does not show

    def __post_init__(self):
        strays = [m.key for m in self.metrics if m.suite != self.name]
        if strays:
            raise FamilyError(f"family {self.name!r} lists {strays[0]}, another family's metric")
        if self.clock not in CLOCKS:
            raise FamilyError(f"family {self.name!r} has no clock ({self.clock!r}): each family says "
                              f"which of {', '.join(CLOCKS)} its figures are counted on")

    def read(self, lines, tools: str | None = None) -> dict:
        """Its figures (catalogue keys) of what its programs printed: its reader, else its
        figures' patterns (parsers.ParseError when one is lacking); the one reading of its
        output, for the suites and LAVA alike."""
        if self.reads is not None:
            return self.reads(list(lines), tools)
        found = parsers.parse_figures("\n".join(lines), self.figures)
        return {f"{self.name}.{k}": v for k, v in found.items()}
