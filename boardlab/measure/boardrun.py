"""Whose fault a board-side measurement command's failure is: a program that ran and failed,
or output without a figure, ran on the kernel under test (MeasureError); a program the
board's root lacks is the lab's image (ProgramMissing)."""
from __future__ import annotations

import re

from boardlab.errors import BoardlabError, KERNEL, LAB


class MeasureError(BoardlabError, RuntimeError):
    """A measurement command failed on the board, or its output lacks a figure."""
    party = KERNEL   # the board is up: what fails on it runs on the kernel under test


class ProgramMissing(MeasureError):
    """The board's root lacks a program a family runs (the shell's "not found", exit 127):
    the root is the lab's image, not the kernel's doing; a bisect stops on it instead of
    skipping the revision."""
    party = LAB
    part = "image"


NOT_FOUND = re.compile(r"(^|: )\S+: not found\b", re.M)


def failed_run(what: str, rc: int, out: list) -> MeasureError:
    """The error of a board-side command that failed: a program the root lacks is the lab's
    image (ProgramMissing), anything else ran on the kernel under test."""
    text = " | ".join(out[-3:])
    if rc == 127 or NOT_FOUND.search("\n".join(out[-5:])):
        return ProgramMissing(f"{what}: the board's root lacks a program it runs (exit {rc}): {text}")
    return MeasureError(f"{what} failed ({rc}): {text}")
