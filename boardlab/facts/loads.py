"""A virtual board's load, as its facts (qemu.load) and its power switch take it: work
running on the board that no test asked for (boardlab.vlab.boardload carries it to the
board). `none`, `steady:P` (busy P % of every 100 ms of the board's time: the sick board
on demand) or `bursts:L[@SEED]` (seeded random bursts of CPU work and memory traffic, L %
of the board's time on average: the known-noise stand-in)."""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from boardlab.errors import InputError

NONE = "none"
KINDS = ("steady", "bursts")
STEADY_MAX = 90          # % of the board's time: beyond it the board barely runs its tests
BURSTS_MAX = 20.0
MACHINES = ("virt",)     # QEMU machines whose device tree exists when -device is applied


class LoadError(InputError):
    """A load the board cannot take, or one written wrong: said in one line."""


@dataclass(frozen=True)
class Load:
    kind: str              # none, steady or bursts
    size: float = 0.0      # % of the board's time
    seed: int | None = None   # bursts: the first power-on's seed (then +1 each power-on)

    def __str__(self) -> str:
        if self.kind == NONE:
            return NONE
        size = f"{self.size:g}"
        return f"{self.kind}:{size}" + (f"@{self.seed}" if self.seed is not None else "")

    def bootargs(self, power_on: int) -> str:
        """What the board's start-up reads: the load, and this power-on's seed."""
        seed = ((self.seed or 0) + power_on) & 0x7fff   # busybox ash's RANDOM takes 15 bits
        return f"boardlab.load={self.kind}:{self.size:g} boardlab.seed={seed}"


def parse(text: str, board_name: str = "") -> Load:
    """`none`, `steady:P` or `bursts:L[@SEED]` -> Load; LoadError naming what is wrong."""
    who = f"board {board_name}: " if board_name else ""
    text = text.strip()
    if text == NONE:
        return Load(NONE)
    m = re.fullmatch(r"(\w+):([0-9.]+)(?:@(\d+))?", text)
    if not m or m.group(1) not in KINDS:
        raise LoadError(f"{who}load {text!r}: none, steady:PERCENT or bursts:PERCENT[@SEED]")
    kind, size, seed = m.group(1), float(m.group(2)), m.group(3)
    top = STEADY_MAX if kind == "steady" else BURSTS_MAX
    if not 0 < size <= top:
        raise LoadError(f"{who}load {text!r}: {kind} takes more than 0 and at most {top:g} % of the board's time")
    if kind == "steady" and seed is not None:
        raise LoadError(f"{who}load {text!r}: a steady load has no seed")
    return Load(kind, size, int(seed) if seed is not None else None)


def check_board(board, load: Load) -> None:
    """A board whose QEMU cannot carry the load's node is refused before its power-on."""
    machine = board.qemu.machine.split(",")[0]
    if load.kind != NONE and machine not in MACHINES:
        raise LoadError(f"board {board.name}: QEMU machine {machine} builds its device tree after "
                        f"its devices, so no load reaches it (machines that take one: {', '.join(MACHINES)})")


def seeded(load: Load, board_name: str) -> Load:
    """A bursts load without a seed gets the board's: from its name, so a rerun repeats it."""
    if load.kind != "bursts" or load.seed is not None:
        return load
    return Load(load.kind, load.size, zlib.crc32(board_name.encode()) & 0x7fff)
