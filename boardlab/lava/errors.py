"""The errors of boardlab.lava."""
from __future__ import annotations

from boardlab.errors import BoardlabError, InputError, LAB, INPUT


class LavaError(BoardlabError):
    """A LAVA job that cannot be rendered, run or read: names the cause."""
    party = LAB
    part = "lava"


class LavaInputError(LavaError, InputError):
    """A LAVA request the board cannot take, or a file that is not there (exit 2)."""
    party = INPUT
