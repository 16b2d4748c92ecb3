"""The measurement families, one module each (boardlab/measure/families/<name>.py: its
metrics, how it measures on a running boot, how it reads its programs' output, its
settings, its LAVA parameters and minutes, the tools its image needs per CPU), its record
`FAMILY` of the kind record.Family: a module of this package with a FAMILY is a family,
nothing else to add. Every list of families (the catalogue's order, the clocks, a boot's
sample, LAVA's suites, the suites' order, the commands' defaults) is read from FAMILIES
here; tests/test_families.py fails on a family named anywhere else."""
from __future__ import annotations

import importlib
import pkgutil

from boardlab.errors import InputError
from boardlab.measure.families.record import (CLOCKS, DEBIAN, GUEST, HOST, NONE, OWN, OWN_BIN, SET_WORDS,
                                              STUDY_TOOLS, TESTDEFS, TOOL_SETS, Family, FamilyError,
                                              NoMeasurement, Options, UnknownFamily)

__all__ = ["CLOCKS", "DEBIAN", "GUEST", "HOST", "NONE", "OWN", "OWN_BIN", "SET_WORDS", "STUDY_TOOLS", "TESTDEFS",
           "TOOL_SETS", "Family", "FamilyError", "NoMeasurement", "Options", "UnknownFamily"]



def _found() -> tuple[Family, ...]:
    """Every module's FAMILY, in their records' `listed` order."""
    found = [getattr(importlib.import_module(f"{__name__}.{m.name}"), "FAMILY", None)
             for m in pkgutil.iter_modules(__path__)]
    out = tuple(sorted((f for f in found if isinstance(f, Family)), key=lambda f: f.listed))
    if len({f.listed for f in out}) != len(out):
        raise FamilyError(f"two families listed at one place: {[(f.name, f.listed) for f in out]}")
    return out


# their order (`listed`): reports, charts and compare's tables list them so, a boot measures
# them so (memory before any workload); `order` is where each suite runs in a pytest session
FAMILIES: tuple[Family, ...] = _found()
BY_NAME = {f.name: f for f in FAMILIES}
NAMES = tuple(BY_NAME)


def get(name: str) -> Family:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownFamily(f"no family {name!r} (boardlab/measure/families/ has: "
                            f"{', '.join(NAMES)})") from None


def tool_set(name: str, isa: str, chosen: str | None = None) -> str | None:
    """Whose programs family `name` runs on a CPU of `isa` (DEBIAN or OWN; None for a
    family that calls none): the record's, or `chosen` (the side-by-side bench's)."""
    fam = get(name)
    if fam.tools is None:
        return None
    if chosen is not None:
        if chosen not in TOOL_SETS:
            raise InputError(f"tool set {chosen!r}: {' or '.join(TOOL_SETS)}")
        return chosen
    try:
        return fam.tools[isa]
    except KeyError:
        raise InputError(f"family {name}: no tool set for isa {isa!r} (its record has "
                         f"{', '.join(fam.tools)})") from None


def run_prefix(tools: str | None) -> str:
    """What a board-side command starts with to call the set's programs."""
    return f"PATH={OWN_BIN}:$PATH " if tools == OWN else ""


def tool_settings(tools: str | None) -> dict:
    """The figures' settings that say their set: only the project's says it (a figure
    that says none was measured with Debian's, as every figure before the project's)."""
    return {"tools": OWN} if tools == OWN else {}


def run_settings(suite: str, options: Options) -> dict:
    """How a family's figures are measured with these options, where that changes a
    figure (its record's settings of its parameters: jitter's run length); {} for none."""
    fam = BY_NAME.get(suite)
    return fam.settings(fam.params(options)) if fam else {}


def figure_settings(suite: str, isa: str, settings: dict | None = None,
                    chosen: str | None = None) -> dict | None:
    """A figure's settings with the set of programs that measured it said (the one place
    every recorder asks: the results, compare's sides); chosen: a set other than the
    record's (compare --tools)."""
    its = tool_set(suite, isa, chosen) if suite in BY_NAME else None
    return {**tool_settings(its), **(settings or {})} or None


def settings_set(settings: dict | None) -> str:
    """The set a figure's settings say (DEBIAN where they say none)."""
    return (settings or {}).get("tools", DEBIAN)


def on_boot() -> tuple[str, ...]:
    """The families a boot measures, in the record's order (memory before any workload)."""
    return tuple(f.name for f in FAMILIES if f.on_boot)


def in_suite_order(others: dict | None = None) -> tuple[str, ...]:
    """The suites' names (test_<name>) in the order a session runs them; others: {suite
    name: order} of suites that are no family (test_shell)."""
    order = {f"test_{f.name}": f.order for f in FAMILIES}
    order.update(others or {})
    return tuple(sorted(order, key=order.get))


def of_family(name: str) -> int:
    """Where the family is in the record's order (99 for no family): a sort key."""
    return NAMES.index(name) if name in BY_NAME else 99
