"""Every metric the lab measures, in one place: the union of the families' own
(boardlab/measure/families/<name>.py declares its metrics, their units, which way is
better, what they are timed by, whether the deterministic clock makes them exact, and
their floors, each with why). The suites, the gate, the study reference, the LAVA side and
the report read it here; tests check that the LAVA test definitions report exactly its
names."""
from __future__ import annotations

import math
from dataclasses import replace

from boardlab.errors import InputError
from boardlab.measure import families
from boardlab.measure.metric import GUEST, HOST, NONE, MetricSpec

__all__ = ["GUEST", "HOST", "NONE", "MetricSpec"]

METRICS: dict[str, MetricSpec] = {m.key: m for f in families.FAMILIES for m in f.metrics}


def for_harness(spec: MetricSpec, harness: str | None) -> MetricSpec:
    """The metric as a harness measures it: its floor widened where its family's record
    says the harness puts something of its own in its figures (harness_floor_abs)."""
    fam = families.BY_NAME.get(spec.suite)
    wider = dict(fam.harness_floor_abs).get(harness or "") if fam else None
    return replace(spec, floor_abs=max(spec.floor_abs, wider)) if wider else spec


class UnknownMetric(InputError, KeyError):
    __str__ = Exception.__str__     # KeyError's would quote the whole line


def spec(key: str) -> MetricSpec:
    try:
        return METRICS[key]
    except KeyError:
        raise UnknownMetric(f"metric {key!r} is not in the catalogue: add it to its family's module "
                            f"(boardlab/measure/families/) with its unit, direction and floor") from None


class BadFigure(InputError):
    """A figure no verdict can use: names where it came from and the metric."""


def usable(key: str, values, where: str, reference: bool = False) -> list[float]:
    """The figures of metric key as floats, or BadFigure saying where (the file and the
    metric there): none at all, one that is no number, NaN or infinite (each would pass a
    comparison as 'same' or make the floor infinite). reference: they are what others are
    judged against (a baseline, side A), where a zero of a metric whose floor is relative
    only would make the floor 0 and every change infinitely many percent."""
    if not isinstance(values, (list, tuple)):
        raise BadFigure(f"{where}: {values!r} is not a list of figures")
    if not values:
        raise BadFigure(f"{where}: no figures (an empty list): a metric needs one at least")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BadFigure(f"{where}: {v!r} is not a number")
        if not math.isfinite(v):
            raise BadFigure(f"{where}: {v} is no figure (a measurement that failed?)")
    metric = METRICS.get(key)
    if reference and metric and metric.floor_rel > 0 and metric.floor_abs == 0 and 0 in values:
        raise BadFigure(f"{where}: 0 {metric.unit} as a baseline: the floor is {metric.floor_rel:.1%} "
                        f"of it, so every change would be infinitely large")
    return [float(v) for v in values]


def of_suite(suite: str, lava: bool | None = None) -> list[MetricSpec]:
    return [m for m in METRICS.values() if m.suite == suite and (lava is None or m.lava == lava)]


# A boot's spans (boardlab.measure.phases: initcall.<fn>, phase.<name>, script.<name>) are
# named by the kernel, not listed here; one rule gives each its spec. Floor 1 ms or 1 %:
# an initcall's duration is the kernel's own count on the board's clock, which the
# deterministic clock repeats (bench/initcall_detection.py measures false alarms and the
# detection of a 2 ms delay); 1 % is the milestones' floor, for the long spans. Spans
# timed by the console's arrival (the old kernels) are the host's: noisy, a rank test.
SPAN_FLOOR_REL, SPAN_FLOOR_ABS = 0.01, 0.001
SPAN_KINDS = ("initcall", "phase", "script")


def span(key: str, source: str = "printk") -> MetricSpec:
    """The spec of a boot span, timed as its source says (phases.SOURCES)."""
    if key.split(".", 1)[0] not in SPAN_KINDS:
        raise UnknownMetric(f"{key!r} is no boot span ({', '.join(k + '.*' for k in SPAN_KINDS)})")
    console = source == "console"
    return MetricSpec(key, "s", "lower", HOST if console else GUEST, SPAN_FLOOR_REL, SPAN_FLOOR_ABS,
                      exact=not console, lava=False, what=f"boot span ({source})")
