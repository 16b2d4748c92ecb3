"""The errors of boardlab.lava."""
from __future__ import annotations

from boardlab.errors import BoardlabError, InputError, LabFault


class LavaError(BoardlabError):
    """A LAVA job that cannot be rendered, run or read: names the cause (catch it for
    either kind below)."""


class LavaFault(LavaError, LabFault):
    """LAVA's side of the lab: its server, worker, files or tools."""
    part = "lava"


class LavaInputError(LavaError, InputError):
    """A LAVA request the board cannot take, or a file that is not there (exit 2)."""
