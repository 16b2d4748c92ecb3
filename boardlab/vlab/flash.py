"""A virtual board's own boot flash: the U-Boot it starts from, one copy per board in its
lab host's run directory, as a real board has U-Boot in its own NOR flash. A board comes
flashed (the Debian package's U-Boot, qemu.bios in its facts) on its first power-on;
`erase` leaves it as an erased NOR reads (every byte 0xff: the CPU runs no U-Boot and the
console stays silent, the lab's "U-Boot erased" fault); `write` flashes it again (the
repair, as a JTAG or a recovery boot does on a real board)."""
from __future__ import annotations

import shutil
from pathlib import Path

from boardlab.facts.board import Board
from boardlab.facts.labhosts import LabHost

ERASED = 0xff


def flash_path(board: Board, lab: LabHost) -> Path:
    return Path(lab.run_dir) / "flash" / f"{board.name}.bin"


def flashed(board: Board, lab: LabHost) -> Path:
    """The board's flash, written from its facts' U-Boot if it has none yet."""
    path = flash_path(board, lab)
    if not path.exists():
        write(board, lab)
    return path


def write(board: Board, lab: LabHost) -> Path:
    """Flash the board's U-Boot (the package's) again; the next power-on boots it."""
    path = flash_path(board, lab)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".writing")
    shutil.copyfile(board.qemu.bios, tmp)
    tmp.replace(path)
    return path


def erase(board: Board, lab: LabHost) -> Path:
    """Erase the board's flash, keeping its size (QEMU loads it as it would U-Boot)."""
    path = flashed(board, lab)
    path.write_bytes(bytes([ERASED]) * path.stat().st_size)
    return path


def is_erased(board: Board, lab: LabHost) -> bool:
    path = flash_path(board, lab)
    return path.exists() and set(path.read_bytes()) <= {ERASED}
