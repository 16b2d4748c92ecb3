"""The errors of boardlab.lava."""
from __future__ import annotations

from boardlab.errors import BoardlabError, InputError


class LavaError(BoardlabError):
    """A LAVA job that cannot be rendered, run or read: names the cause."""


class LavaInputError(LavaError, InputError):
    """A LAVA request the board cannot take, or a file that is not there (exit 2)."""
