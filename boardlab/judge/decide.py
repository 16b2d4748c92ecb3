"""The one judge: every pair of figures of one metric is decided here, whoever asks (a run
against its baseline, compare, the report, the study table, LAVA's gate and results, a
bisect step, the boot's spans).

The rules, in order, each giving a verdict of boardlab.judge.verdict:
1. a figure the catalogue keeps as information only: `info`;
2. nothing stored to judge against: `new`; nothing measured: `missing`;
3. two kernels under one name (their identities differ): `other-kernel`;
4. figures of two clocks (other units): `other-clock`; figures of two sets of programs
   (Debian's against the project's: measure.families, tool sets) or measured
   with other settings where both sides say theirs (cyclictest's run length: the maximum
   of a 60 s run is not one of a 10 s run): `other-settings`;
5. a host-bound figure (another machine of the same kind would measure another value)
   against one of another machine, or of an unknown one: `other-host`;
6. the comparison of the samples (verdict.compare) with the harness's floor, exact only
   where `exactness` finds it shown (a deterministic clock and a stored side of at
   least EXACT_SHOWN samples that agree), else as noisy samples (sampled until decided);
   a worst case bound to the host is regressed by two runs far beyond A's worst, not one
   (the host's own stalls reach single runs);
7. drift: a host-bound figure judged against one stored in another session cannot tell
   the host's drift from a change, so a change there is `unknown` (only boots
   interleaved, `boardlab compare`, can say).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from boardlab.errors import InputError
from boardlab.facts.board import Board
from boardlab.judge import verdict as vd
from boardlab.judge.verdict import Verdict
from boardlab.measure import catalogue, families, kernelid
from boardlab.measure.catalogue import MetricSpec
from boardlab.measure.clocks import (GUEST_DETERMINISTIC, GUEST_REALTIME, HOST, NO_CLOCK, guest_clock,
                                     known_host)


@dataclass(frozen=True)
class Figures:
    """One side of a pair: a metric's samples and where they were measured."""
    samples: Sequence[float]
    clock: str | None = None     # boardlab.measure.clocks names; None: not said (the study's numbers)
    host: str | None = None      # clocks.this_host id; None: unknown
    kernel: dict | None = None   # the kernel's identity (measure.kernelid), where both sides
    #                              should be one kernel (a run against its baseline)
    settings: dict | None = None  # how it was measured, where that changes the figure ({"run_s": 10})
    stated: bool = False         # its source states it is compared as a value without a clock: the
    #                              study's published numbers, a health check's band, compare's spans


class NotAFigure(InputError, ValueError):
    """A sample that is no number (NaN, inf) handed to the judge: one line, metric and side."""
    __str__ = Exception.__str__


def host_work(suite: str) -> bool:
    """Figures of work the lab host does itself (its family's record says: the build)."""
    fam = families.BY_NAME.get(suite)
    return fam is not None and fam.host_work


def host_bound(clock: str | None, board: Board | None, key: str) -> bool:
    """Would another machine of the same kind measure another value of metric `key`
    (suite.name) on the clock given? Work the host does itself (a build), and the
    host-clock and guest-realtime figures of a virtual board (its speed is the host's).
    A real board's milestones are its own time: the lab host only stamps their arrival.
    (board None: not known, taken as virtual)"""
    if clock in (NO_CLOCK, GUEST_DETERMINISTIC):
        return False
    if host_work(key.split(".")[0]):
        return True
    return (board is None or board.virtual) and clock in (HOST, GUEST_REALTIME, None)


def _words(settings: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(settings.items()))


def _host_words(host_id: str | None) -> str:
    if not host_id:
        return "an unknown host"
    return host_id if known_host(host_id) else f"an unknown host: {host_id} is an id machines of one kind share"


def _clock(spec: MetricSpec, a: Figures, b: Figures) -> str | None:
    """The pair's clock: a side's where it says, else none for a size (no clock measures it)."""
    said = a.clock if a.clock is not None else b.clock
    return said if said is not None or spec.timed_by != catalogue.NONE else NO_CLOCK


def why_not(spec: MetricSpec | str, a: Figures, b: Figures, board: Board | None) -> Verdict | None:
    """Rules 3-5: the verdict that keeps two figures apart, or None when they may be
    compared (LAVA's gate asks it alone, to know which limits a job can check)."""
    spec = catalogue.spec(spec) if isinstance(spec, str) else spec
    other = kernelid.differs(a.kernel, b.kernel)
    if other:
        return Verdict(vd.OTHER_KERNEL, f"the baseline's kernel is {other[0]}, this run's {other[1]}")
    if a.clock is not None and b.clock is not None and a.clock != b.clock:
        return Verdict(vd.OTHER_CLOCK, f"other clock, not judged ({a.clock} / {b.clock}: other units)")
    set_a, set_b = families.settings_set(a.settings), families.settings_set(b.settings)
    if set_a != set_b:
        return Verdict(vd.OTHER_SETTINGS, f"other programs, not judged ({families.SET_WORDS[set_a]} / "
                                          f"{families.SET_WORDS[set_b]})")
    if a.settings and b.settings and a.settings != b.settings:
        return Verdict(vd.OTHER_SETTINGS, f"other settings, not judged ({_words(a.settings)} / "
                                          f"{_words(b.settings)})")
    if host_bound(_clock(spec, a, b), board, spec.key):
        known_a, known_b = known_host(a.host), known_host(b.host)
        if known_a is None or known_b is None or known_a != known_b:
            return Verdict(vd.OTHER_HOST, f"other host, not judged ({_host_words(a.host)}"
                                          f" / {_host_words(b.host)})")
    return None


EXACT_SHOWN = 3   # samples of the stored side that show a figure repeats


def deterministic_board(board: Board | None) -> bool:
    """A board whose own clock is QEMU's icount (a figure no clock times, such as memory,
    still depends on what raced on a realtime one). A real board never is."""
    return board is not None and board.virtual and guest_clock(board) == GUEST_DETERMINISTIC


def exactness(spec: MetricSpec, a: Figures, b: Figures, board: Board | None, floor: float) -> str | None:
    """The one rule of exactness: None when the pair may be compared exactly (every pair of
    samples against the floor, one run of B enough), else why it is compared as noisy
    samples. The catalogue's `exact` says a figure can repeat; this pair must show it:
    a deterministic clock, and a stored side of EXACT_SHOWN samples or more that agree
    to a quarter of the floor. Two kinds are exact by what they are: a build's sizes
    (bytes of one source and config: counted, not timed; a rebuild gives the same bytes,
    kernels/6.1/pin.yaml) and figures whose clock neither side says where a side's source
    states it (Figures.stated): the study's published numbers, compared as values the way
    the study did, and a health check's band around one stored value (LAVA's limit); a
    figure with neither (an old or hand-made results.json) is not exact."""
    if not spec.exact:
        return "the catalogue keeps it noisy"
    if a.clock is None and b.clock is None:
        if a.stated or b.stated:
            return None
        if spec.timed_by != catalogue.NONE:   # a count or size: by what it is, below
            return "exactness not shown: neither side says its clock (an old or hand-made results.json)"
    clock = _clock(spec, a, b)
    if clock == NO_CLOCK and host_work(spec.suite):
        return None
    if not (clock == GUEST_DETERMINISTIC or (clock == NO_CLOCK and deterministic_board(board))):
        where = "a board without a deterministic clock" if clock == NO_CLOCK else f"the {clock} clock"
        return f"exactness not shown: measured on {where}"
    if len(a.samples) < EXACT_SHOWN:
        return (f"exactness not shown: the stored side has {len(a.samples)} sample(s), "
                f"{EXACT_SHOWN} that agree would show it repeats")
    if not vd.agree([float(x) for x in a.samples], floor):
        return "exactness not shown: the stored side's samples spread over more than a quarter of the floor"
    return None


def decide(spec: MetricSpec | str, a: Figures | None, b: Figures | None, board: Board | None = None, *,
           harness: str | None = None, interleaved: bool = False, effort: float = 1.0) -> Verdict:
    """The verdict on B against A (A: the baseline, kernel A or the good revision).
    spec: the metric (a catalogue key, or a MetricSpec such as a boot span's); board: the
    sides' board (None: not known, taken as virtual); harness: whose floor (catalogue.
    for_harness); interleaved: the two sides were measured in one session, boots in turn
    (no drift between them); effort < 1: a cheaper comparison (sampling decisions)."""
    spec = catalogue.spec(spec) if isinstance(spec, str) else spec
    if spec.not_judged:
        return Verdict(vd.INFO, spec.not_judged)
    if a is None or not a.samples:
        return Verdict(vd.NEW, "new: nothing stored to judge against")
    if b is None or not b.samples:
        return Verdict(vd.MISSING, "missing: nothing measured")
    for side, f in (("the stored side (A)", a), ("the new side (B)", b)):
        bad = next((x for x in f.samples if not math.isfinite(x)), None)
        if bad is not None:   # a NaN compares as nothing: it would read as "same"
            raise NotAFigure(f"{spec.key}: {side} holds {bad}: no figure to judge")
    apart = why_not(spec, a, b, board)
    if apart is not None:
        return apart
    judged_as = catalogue.for_harness(spec, harness)
    not_exact = exactness(judged_as, a, b, board, judged_as.floor(statistics.median(a.samples)))
    bound_to_host = host_bound(_clock(spec, a, b), board, spec.key)
    v = vd.compare(a.samples, b.samples, judged_as, effort=effort, exact=not_exact is None,
                   tail_runs=2 if bound_to_host else 1)   # the host's own stalls reach one run
    v.exact = not_exact is None
    if not_exact and spec.exact and v.outcome == vd.UNKNOWN:
        v.why += f" ({not_exact})"
    if not interleaved and v.outcome in (vd.REGRESSED, vd.IMPROVED) and bound_to_host:
        # the host's speed drifts between sessions (+8 % seen): a stored side cannot tell it from a change
        v.outcome = vd.UNKNOWN
        v.why += ("; but a host-bound figure drifts between sessions: judged paired, boots "
                  "interleaved, by `boardlab compare`")
    return v


def sampled_enough(spec: MetricSpec, taken: Figures, against: Figures | None, board: Board | None,
                   repeats: int, at_most: int, interleaved: bool = True, verdict: Verdict | None = None) -> bool:
    """The one "enough boots of this revision?" rule of a bisect step and a night: whether
    the samples taken so far of a metric decide. A build's size: its one build. With nothing
    to judge against (a bisect's good revision, a first night): EXACT_SHOWN samples where
    they show the figure exact (`exactness`), else `repeats`. Against a side: as soon as
    the judge decides (one sample where that side's exactness is shown), else more while a
    verdict is within reach (verdict.out_of_reach), up to at_most. interleaved: both sides
    in one session; if not, a host-bound figure is sampled as with nothing against it.
    verdict: decide's on this pair, where the caller has it already."""
    samples = [float(x) for x in taken.samples]
    if not samples:
        return False
    if host_work(spec.suite):
        return True
    if against is None or (not interleaved and host_bound(taken.clock, board, spec.key)):
        # (against another session's samples, no number of boots decides a host-bound figure: rule 7)
        shown = len(samples) >= EXACT_SHOWN and exactness(
            spec, taken, taken, board, spec.floor(statistics.median(samples))) is None
        return shown or len(samples) >= repeats
    v = verdict or decide(spec, against, taken, board, interleaved=interleaved)
    if v.outcome != vd.UNKNOWN or len(samples) >= at_most:
        return True
    return len(samples) >= min(repeats, at_most) and bool(
        vd.out_of_reach(list(against.samples), samples, spec, at_most, exact=v.exact))
