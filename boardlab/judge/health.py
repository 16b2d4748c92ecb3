"""A board's health check: power on, to a shell with its default kernel and root, one
exact figure within its floor, power off. One rule, two ways to run it: LAVA's
health-check job per device type (boardlab.lava.health), which the LAVA server runs on
a schedule and after a failed job, and `boardlab lab check BOARD` for labgrid users.

The figure is the total memory `free` reports: exact on a deterministic clock, read in a
second, and it moves when the kernel, its ramdisk or the board's RAM is not what the
baselines were measured with. A board that cannot be powered, reach U-Boot, load its
kernel over TFTP or boot it fails the check before the figure is read."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boardlab.errors import BoardlabError, LAB
from boardlab.facts.board import Board
from boardlab.judge import baselines as bl
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue

METRIC = "memory.free_total_kb"


@dataclass(frozen=True)
class HealthFigure:
    board: str
    kernel: str
    root: str
    key: str
    expected: float | None     # None: no baseline yet: the check is the boot alone
    floor: float | None

    def judge(self, value: float) -> str | None:
        """None when the judge finds the figure the same as its baseline (within its
        floor: an exact figure), else why not (one line)."""
        if self.expected is None:
            return None
        # a band around one stored value, the way LAVA's own limit checks it: the two are
        # compared as values (no clock said), not as samples of a noisy figure
        v = decide(self.key, Figures([self.expected]), Figures([value]))
        if v.outcome == vd.SAME:
            return None
        return (f"{self.key} = {value:g} kB ({v.outcome}), the baseline of {self.kernel} on {self.board} is "
                f"{self.expected:g} +- {self.floor:g} kB")

    def describe(self) -> str:
        if self.expected is None:
            return f"boot of {self.kernel} ({self.root}) to a shell (no {self.key} baseline yet)"
        return f"{self.key} within {self.expected:g} +- {self.floor:g} kB ({self.kernel}, {self.root})"


def health_figure(board: Board, root_dir: Path = bl.KERNELS_DIR) -> HealthFigure:
    """The board's check: its default kernel on its default root, and the figure's baseline."""
    kernel, root = board.images.default_kernel, board.root.default
    base = bl.load(kernel, board.name, root_dir).get(METRIC)
    if base is None or root != "ramdisk":   # memory is measured on the ramdisk root
        return HealthFigure(board.name, kernel, root, METRIC, None, None)
    return HealthFigure(board.name, kernel, root, METRIC, base.value,
                        catalogue.spec(METRIC).floor(base.value))


class CheckFailed(BoardlabError):
    """The board failed its health check (the message says where)."""
    party = LAB
    part = "board"


def check_board(env_path: Path, log_dir: Path, echo=print) -> HealthFigure:
    """The check through labgrid (the environment's strategy, as a user's script would):
    CheckFailed with the reason, the board left off. A shared board's place not had at the
    coordinator is not the board's: PlaceHoldError, as it is."""
    from boardlab.boot.placehold import PlaceHoldError
    from boardlab.boot.session import board_session
    from boardlab.measure import sample
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        with board_session(env_path, log_dir, command="lab-check") as (strategy, shell):
            fig = health_figure(strategy.board)
            echo(f"{fig.board}: health check: {fig.describe()}")
            strategy.select(kernel=fig.kernel, root=fig.root)
            strategy.transition("shell")
            value = sample.free(shell())[fig.key]
    except PlaceHoldError:
        raise
    except BoardlabError as e:
        raise CheckFailed(f"{Path(env_path).stem}: bad: {str(e).splitlines()[0]}") from None
    except Exception as e:   # labgrid's own (a power switch refusing, a console gone)
        raise CheckFailed(f"{Path(env_path).stem}: bad: {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}") from None
    why = fig.judge(value)
    if why:
        raise CheckFailed(f"{fig.board}: bad: {why}")
    echo(f"{fig.board}: good: {fig.key} = {value:g} kB")
    return fig
