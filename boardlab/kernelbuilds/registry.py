"""Kernels built here by version, registered under their names: <cache>/kernels/<board>/
<name>.uImage with the identity beside it (measure.kernelid), the .config it was built
with and the options that version changed. `--kernel <name>` boots one (boot.bootplan),
and `compare`, `report` and the history take it like any kernel of the facts."""
from __future__ import annotations

import re
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR

REGISTRY_DIR = CACHE_DIR / "kernels"


def uimage(board: str, name: str) -> Path:
    return REGISTRY_DIR / board / f"{name}.uImage"


def lookup(board: str, name: str) -> Path | None:
    """The registered uImage of this name for the board, None if there is none."""
    if not name or "/" in name or name.startswith("."):
        return None
    path = uimage(board, name)
    return path if path.is_file() else None


def registered(board: str) -> list[str]:
    return sorted(p.name.removesuffix(".uImage") for p in (REGISTRY_DIR / board).glob("*.uImage"))


def config_options(config: Path) -> dict:
    """{CONFIG_X: value} of a .config; 'is not set' lines as 'n'."""
    out = {}
    for line in Path(config).read_text().splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line) or re.match(r"^# (CONFIG_\w+) is not set$", line)
        if m:
            out[m.group(1)] = m.group(2) if m.lastindex == 2 else "n"
    return out


def config_changes(before: Path, after: Path) -> list[str]:
    """The options a version changed for the same fragment: '+ CONFIG_X=y' (new),
    '- CONFIG_Y' (gone), '~ CONFIG_Z: a -> b' (another value)."""
    a, b = config_options(before), config_options(after)
    out = [f"+ {k}={b[k]}" for k in sorted(set(b) - set(a)) if b[k] != "n"]
    out += [f"- {k}" for k in sorted(set(a) - set(b)) if a[k] != "n"]
    out += [f"~ {k}: {a[k]} -> {b[k]}" for k in sorted(set(a) & set(b)) if a[k] != b[k]]
    return out
