"""A board's health check: power on, the board's default kernel and root loaded from its
own TFTP directory on its lab host, as every labgrid boot loads it, to a shell; its
figures within their bands; for a board with an NFS root besides its default one, a second
boot to a shell on that NFS root; power off. One rule, two ways to run it: LAVA's
health-check job per device type (boardlab.lava.health), which the LAVA server runs on
a schedule and after a failed job, and `boardlab lab check BOARD` for labgrid users.

The figures, from the stored baselines of the default kernel (measured on the default
root: the real boards' are the study's, on their NFS root):
- the total memory `free` reports: exact, read in a second, and it moves when the kernel,
  its ramdisk or the board's RAM is not what the baselines were measured with;
- the boot: the board's own time to its login prompt (boot_time.guest_login, printk time)
  within its floor where that is exact (a deterministic clock), else the host's time from
  the load command to the login prompt (boot_time.login) no later than the band's upper
  edge: its slowest stored figure and HOST_BOOT_MARGIN (host-arrival times vary by ~8 %
  from boot to boot; a check can only bound it from above: LAVA's timeout).
- for the board's own history, in no band (`lab check`; LAVA's job not yet): the families'
  `health` figures (a null system call's and a pipe's latency), run once the board is up:
  a board that got slower once it runs (a load its boot ends before) shows there, and the
  board-health rule (judge.boardhealth) judges them against the board's own level.
A board that cannot be powered, reach U-Boot, load its kernel over TFTP or boot it fails
the check before a figure is read. One attempt: a board that boots one time in three is
not healthy."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

from boardlab.errors import BoardlabError, LabFault
from boardlab.facts.board import Board
from boardlab.measure import baselines as bl
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide, deterministic_board
from boardlab.measure import catalogue, families

METRIC = "memory.free_total_kb"
GUEST_BOOT = "boot_time.guest_login"   # the board's own clock, from the kernel's start
HOST_BOOT = "boot_time.login"          # the host's, from the load command
HOST_BOOT_MARGIN = 0.10                # past the slowest stored host-arrival boot
FAILED_JOB = ("Incomplete", "Canceled")   # LAVA's healths of a job that did not complete


def failed_job(job: dict) -> bool:
    """A job that ended failed and was no health check (a failed check has set its board
    Bad itself)."""
    return job.get("state") == "Finished" and job.get("health") in FAILED_JOB and not job.get("health_check")


def unknown_after(job: dict, health: str) -> bool:
    """The one rule for a failed job, whoever submitted it and whoever sees it end (the
    arbiter each round, `boardlab lava submit --wait`): it may have failed for its board,
    so a board LAVA has as Good is set Unknown and LAVA runs its health check before its
    next job (LAVA itself does so only after an infrastructure error). Unknown already is;
    Bad gets no job; Maintenance, Retired and Looping are an admin's (or the arbiter's,
    which keeps its own: lab.rules.after_job)."""
    return failed_job(job) and health == "Good"


@dataclass(frozen=True)
class HealthFigure:
    key: str
    unit: str
    expected: float
    lo: float | None    # None: bounded from above only (a host-arrival boot)
    hi: float
    clock: str | None = None    # the baseline's, where the judge must know it (the board's own)
    samples: tuple = ()         # the baseline's samples, with its clock: they show it repeats

    @property
    def exact(self) -> bool:
        return self.lo is not None

    def judge(self, value: float, where: str = "") -> str | None:
        """None when the figure is within its band, else why not (one line). An exact one
        is the judge's: the same as its stored value within its floor (a band around one
        stored value, the way LAVA's own limit checks it: compared as values, no clock; a
        figure of the board's own clock, with the stored samples that show it exact)."""
        if self.exact:
            v = decide(self.key, Figures(list(self.samples) or [self.expected], self.clock, stated=True),
                       Figures([value], self.clock))
            if v.outcome == vd.SAME:
                return None
            return f"{self.key} = {value:g} {self.unit} ({v.outcome}), not {self.band()}{where}"
        return None if value <= self.hi else f"{self.key} = {value:g} {self.unit}, not {self.band()}{where}"

    def band(self) -> str:
        if self.exact:
            return f"{self.expected:g} +- {self.hi - self.expected:g} {self.unit}"
        return f"at most {self.hi:g} {self.unit}"


@dataclass(frozen=True)
class HealthCheck:
    board: str
    kernel: str
    root: str                       # the default root, the figures' boot
    figures: tuple                  # HealthFigure, ...: none when there is no baseline yet
    nfs_boot: bool                  # a second boot, to the board's NFS root
    measured: dict = field(default_factory=dict, compare=False)   # the figures a passed check read
    performance: tuple = ()         # keys measured for the board's own history, in no band
    #                                 (the families' `health` figures its baselines hold), by
    #                                 `lab check` and LAVA's check alike (lava.health)

    def figure(self, key: str) -> HealthFigure | None:
        return next((f for f in self.figures if f.key == key), None)

    def describe(self) -> str:
        what = ", ".join(f"{f.key} {f.band()}" for f in self.figures) or "boot to a shell (no baseline yet)"
        return f"{what} ({self.kernel}, {self.root})" + (" and a boot on its NFS root" if self.nfs_boot else "")


def _exact(key: str, base: bl.Baseline, clocked: bool = False) -> HealthFigure:
    floor = catalogue.spec(key).floor(base.value)
    return HealthFigure(key, base.unit, base.value, base.value - floor, base.value + floor,
                        *((base.clock(), tuple(base.values())) if clocked else ()))


def boot_figure(board: Board, base: dict) -> HealthFigure | None:
    """The boot's figure: the board's own time where its clock makes it exact, else the
    host's, bounded from above."""
    guest = base.get(GUEST_BOOT)
    if guest is not None and guest.clock() == "guest-deterministic" and deterministic_board(board):
        return _exact(GUEST_BOOT, guest, clocked=True)
    host = base.get(HOST_BOOT)
    if host is None:
        return None
    return HealthFigure(HOST_BOOT, host.unit, host.value, None,
                        round(max(host.values()) * (1 + HOST_BOOT_MARGIN), 3))


def health_check(board: Board, root_dir: Path = bl.KERNELS_DIR) -> HealthCheck:
    """The board's check: its default kernel on its default root, the figures' baselines,
    and whether its NFS root is booted too."""
    kernel, root = board.images.default_kernel, board.root.default
    base = bl.load(kernel, board.name, root_dir)
    figures = [f for f in (boot_figure(board, base), _exact(METRIC, base[METRIC]) if METRIC in base else None) if f]
    performance = tuple(f"{fam.name}.{name}" for fam in families.FAMILIES for name in fam.health
                        if f"{fam.name}.{name}" in base)   # what its image measured for its baselines
    return HealthCheck(board.name, kernel, root, tuple(figures), root != "nfs" and "nfs" in board.root.bootargs,
                       performance=performance)


def boot_timeout_s(check: HealthCheck, board: Board) -> int:
    """How long the boot may take from the load command to the login prompt: the upper edge
    of a host-arrival boot figure, else the board's own boot timeout."""
    fig = check.figure(HOST_BOOT)
    return math.ceil(fig.hi) if fig else int(board.timeouts.boot_s)


class CheckFailed(LabFault):
    """The board failed its health check (the message says where)."""
    part = "board"


def _figures_of_boot(check: HealthCheck, strategy, shell) -> dict:
    """The check's figures of the boot just done: its milestones and free's total."""
    from boardlab.measure import sample
    from boardlab.measure.families import memory
    rec = strategy.last_boot
    values = {GUEST_BOOT: rec.guest_milestones.get("login"), HOST_BOOT: rec.milestones.get("login")}
    if check.figure(METRIC):
        values[METRIC] = memory.free(shell())[METRIC]
    out = {f.key: values.get(f.key) for f in check.figures}
    for name in dict.fromkeys(k.split(".")[0] for k in check.performance):   # one run a family
        keys = [k for k in check.performance if k.startswith(f"{name}.")]
        got = sample.family(name, shell(), rec, metric=keys,
                            tools=families.tool_set(name, strategy.board.isa))
        out.update({k: got.get(k) for k in keys})
    return out


def check_board(env_path: Path, log_dir: Path, echo=print) -> HealthCheck:
    """The check through labgrid (the environment's strategy, as a user's script would):
    CheckFailed with the reason, the board left off. A shared board's place not had at the
    coordinator is not the board's: PlaceHoldError, as it is."""
    from boardlab.sharing.placehold import PlaceHoldError
    from boardlab.boot.session import board_session
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        with board_session(env_path, log_dir, command="lab-check") as (strategy, shell):
            check = health_check(strategy.board)
            echo(f"{check.board}: health check: {check.describe()}"
                 + (f"; for its own history: {', '.join(check.performance)}" if check.performance else ""))
            strategy.select(kernel=check.kernel, root=check.root)
            strategy.transition("shell")
            values = _figures_of_boot(check, strategy, shell)
            if check.nfs_boot:
                strategy.transition("off")
                strategy.select(kernel=check.kernel, root="nfs")
                strategy.transition("shell")
    except PlaceHoldError:
        raise
    except BoardlabError as e:
        raise CheckFailed(f"{Path(env_path).stem}: bad: {str(e).splitlines()[0]}") from None
    except Exception as e:   # labgrid's own (a power switch refusing, a console gone)
        raise CheckFailed(f"{Path(env_path).stem}: bad: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}") from None
    for fig in check.figures:
        value = values[fig.key]
        why = f"{fig.key}: not read" if value is None else fig.judge(value, f" ({check.kernel} on {check.board})")
        if why:
            raise CheckFailed(f"{check.board}: bad: {why}")
    echo(f"{check.board}: good: " + (", ".join(f"{k} = {v:g}" for k, v in values.items()) or "booted")
         + (", and booted on its NFS root" if check.nfs_boot else ""))
    return dataclasses.replace(check, measured=values)
