"""A family's board-side script (jobs/testdefs, which LAVA runs on the board) prints what
its programs printed, raw and tagged, and no figure or verdict of its own:

    @boardlab-raw FAMILY begin
    ... the programs' output (memory: '@free' then free's, '@mem_eat' then mem_eat's) ...
    @boardlab-raw FAMILY end rc=N

Off the board, `boardlab lava results` reads that text with the family's own parser (the
one the pytest suites use, measure.sample and measure.parsers) and judges the figures with
the one judge: one parser and one verdict of every figure on every path. How a family reads
its output is its record's (measure.families: `reads`, else its `figures` patterns)."""
from __future__ import annotations

import re

from boardlab.errors import TestFault
from boardlab.measure import families, parsers
from boardlab.measure.boardrun import MeasureError

TAG = "@boardlab-raw"
_LINE = re.compile(rf"^{TAG} ([a-z_]+) (begin|end rc=(-?\d+))\s*$")


class RawOutputError(MeasureError):
    """A family's tagged output gave no figure (a run failed, a figure lacking, no end):
    a failure to measure, named by family."""


def sections(lines) -> dict[str, tuple[list[str], int | None]]:
    """{family: (the lines between its tags, its script's exit code; None: no end tag)},
    from a board's output lines in order (a later section of a family replaces one before)."""
    out: dict = {}
    current = None
    for line in lines:
        m = _LINE.match(line.strip())
        if m and m.group(2) == "begin":
            current = m.group(1)
            out[current] = ([], None)
        elif m and current == m.group(1):
            out[current] = (out[current][0], int(m.group(3)))
            current = None
        elif current is not None:
            out[current][0].append(line)
    return out


def figures(family: str, lines, rc: int | None, tools: str | None = None) -> dict:
    """The family's figures of its tagged output (catalogue keys); RawOutputError when its
    script failed or its output gives none."""
    if rc is None:
        raise RawOutputError(f"{family}: its output has no end tag (the run was cut off)")
    if rc != 0:
        raise RawOutputError(f"{family}: its run exited {rc}: " + " | ".join(list(lines)[-3:]))
    fam = families.BY_NAME.get(family)
    if fam is None:   # the board is untrusted: what it names is checked
        raise RawOutputError(f"{family}: no such family (its output names one of {', '.join(families.NAMES)})")
    if fam.reads is None and not fam.figures:
        raise RawOutputError(f"{family}: its family record says no way to read its output")
    try:
        return fam.read(lines, tools)
    except (parsers.ParseError, KeyError, ValueError, MeasureError) as e:
        raise RawOutputError(f"{family}: {e}") from None


def all_figures(lines, tools_of=lambda family: None) -> tuple[dict, dict]:
    """Every family's figures in a board's output lines, each read by its own reader ->
    ({family: {key: value}}, {family: why it gave none}). tools_of(family): whose programs
    measured it. A family that failed to measure leaves the others' figures; a program
    that printed what is no figure is said to be the test's fault."""
    got, failed = {}, {}
    for family, (raw, rc) in sections(lines).items():
        try:
            got[family] = figures(family, raw, rc, tools_of(family))
        except RawOutputError as e:
            failed[family] = str(e)
        except TestFault as e:
            failed[family] = f"{family}: {e} (the test's fault)"
    return got, failed
