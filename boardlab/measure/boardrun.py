"""Whose fault a board-side measurement command's failure is: a program that ran and failed,
or output without a figure, ran on the kernel under test (MeasureError); a program the
board's root lacks is the lab's image (ProgramMissing)."""
from __future__ import annotations

import re

from boardlab.errors import BoardlabError, KernelFault, LabFault


class BoardRunError(BoardlabError, RuntimeError):
    """A board-side measurement command that gave no figure (catch it for either kind)."""


class MeasureError(BoardRunError, KernelFault):
    """A measurement command failed on the board, or its output lacks a figure: the board
    is up, so what fails on it runs on the kernel under test."""


class ProgramMissing(BoardRunError, LabFault):
    """The board's root lacks a program a family runs (the shell's "not found", exit 127):
    the root is the lab's image, not the kernel's doing; a bisect stops on it instead of
    skipping the revision."""
    part = "image"


NOT_FOUND = re.compile(r"(^|: )\S+: not found\b", re.M)


def failed_run(what: str, rc: int, out: list) -> BoardRunError:
    """The error of a board-side command that failed: a program the root lacks is the lab's
    image (ProgramMissing), anything else ran on the kernel under test."""
    text = " | ".join(out[-3:])
    if rc == 127 or NOT_FOUND.search("\n".join(out[-5:])):
        return ProgramMissing(f"{what}: the board's root lacks a program it runs (exit {rc}): {text}")
    return MeasureError(f"{what} failed ({rc}): {text}")
