"""Stored baselines and the gate.

kernels/<kernel>/<board>.yaml holds, per metric: value, unit, direction (which way is
better), tolerance, the spread of the repeats it came from, and its source (the 2005
study, or a measured run with date, host and repeat count).

The gate allows a metric to be worse than its baseline by the largest of: the
absolute tolerance, the relative tolerance, and NOISE_K times the spread the baseline
was measured with. So a noisy metric (boot time on a shared QEMU host) gets a wide
band it has earned, a stable one (uImage size) a narrow one, and identical reruns
do not cry wolf."""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .facts import PROJECT_ROOT
from .errors import BoardlabError

KERNELS_DIR = PROJECT_ROOT / "kernels"
NOISE_K = 3.0          # spread multiples that still count as noise
DEFAULT_TOLERANCE = {"rel": 0.10, "abs": 0.0}
DIRECTIONS = ("lower", "higher")

PASS, FAIL, NEW, IMPROVED = "pass", "fail", "new", "improved"
OTHER_HOST = "other-host"   # a host-bound figure with a baseline from another machine
OTHER_CLOCK = "other-clock"  # a baseline measured on another clock (boardlab.clocks)


class BaselineError(BoardlabError):
    """A baseline file that cannot be used: names the file and the field."""


@dataclass
class Baseline:
    name: str
    value: float
    unit: str
    direction: str = "lower"
    tolerance: dict = field(default_factory=lambda: dict(DEFAULT_TOLERANCE))
    spread: dict | None = None      # {min, max, stdev, n}
    source: dict | None = None

    def allowance(self) -> float:
        """How much worse than value a result may be and still pass."""
        tol = self.tolerance or {}
        noise = 0.0
        if self.spread:
            if self.spread.get("stdev") is not None:
                noise = NOISE_K * float(self.spread["stdev"])
            elif self.spread.get("min") is not None and self.spread.get("max") is not None:
                noise = float(self.spread["max"]) - float(self.spread["min"])
        return max(float(tol.get("abs", 0.0)), float(tol.get("rel", 0.0)) * abs(self.value), noise)

    def limit(self) -> float:
        a = self.allowance()
        return self.value + a if self.direction == "lower" else self.value - a

    def judge(self, measured: float) -> str:
        worse_by = measured - self.value if self.direction == "lower" else self.value - measured
        if worse_by > self.allowance():
            return FAIL
        if -worse_by > self.allowance():
            return IMPROVED
        return PASS

    def clock(self) -> str | None:
        """The clock the baseline was measured on (boardlab.clocks), if it says."""
        return (self.source or {}).get("clock")

    def host_id(self) -> str | None:
        """The machine the baseline was measured on (clocks.this_host id), if known."""
        return (self.source or {}).get("host_id")

    def to_dict(self) -> dict:
        d = {"value": self.value, "unit": self.unit, "direction": self.direction,
             "tolerance": self.tolerance}
        if self.spread:
            d["spread"] = self.spread
        if self.source:
            d["source"] = self.source
        return d


# A harness whose measurement differs from the pytest suites' keeps the figures that
# differ in a file of its own, kernels/<kernel>/<board>.<harness>.yaml; the rest come
# from the shared file. LAVA: its ramdisk carries its test overlay, so memory differs.
HARNESSES = ("lava",)


def baseline_path(kernel: str, board: str, root: Path = KERNELS_DIR, harness: str | None = None) -> Path:
    return root / kernel / (f"{board}.{harness}.yaml" if harness else f"{board}.yaml")


def _field(path, metric, key):
    return f"{path}: metrics.{metric}.{key}"


def parse_baselines(data, path) -> dict[str, Baseline]:
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise BaselineError(f"{path}: expected a mapping with a 'metrics' mapping")
    out = {}
    for name, m in data["metrics"].items():
        if not isinstance(m, dict):
            raise BaselineError(f"{path}: metrics.{name} must be a mapping, got {m!r}")
        if not isinstance(m.get("value"), (int, float)) or isinstance(m.get("value"), bool):
            raise BaselineError(f"{_field(path, name, 'value')} must be a number, got {m.get('value')!r}")
        if not isinstance(m.get("unit"), str):
            raise BaselineError(f"{_field(path, name, 'unit')} must be a string, got {m.get('unit')!r}")
        direction = m.get("direction", "lower")
        if direction not in DIRECTIONS:
            raise BaselineError(f"{_field(path, name, 'direction')} must be lower or higher, "
                                f"got {direction!r}")
        tol = m.get("tolerance", DEFAULT_TOLERANCE)
        if not isinstance(tol, dict) or not all(
                k in ("rel", "abs") and isinstance(v, (int, float)) and v >= 0 for k, v in tol.items()):
            raise BaselineError(f"{_field(path, name, 'tolerance')} must be {{rel: x, abs: y}} "
                                f"with numbers >= 0, got {tol!r}")
        spread = m.get("spread")
        if spread is not None and (not isinstance(spread, dict) or not all(
                isinstance(v, (int, float)) for v in spread.values())):
            raise BaselineError(f"{_field(path, name, 'spread')} must map min/max/stdev/n to "
                                f"numbers, got {spread!r}")
        out[name] = Baseline(name, float(m["value"]), m["unit"], direction, dict(tol), spread,
                             m.get("source"))
    return out


def _load_file(path: Path) -> dict[str, Baseline]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise BaselineError(f"{path}: not valid YAML: {e}") from None
    return parse_baselines(data, path)


def load(kernel: str, board: str, root: Path = KERNELS_DIR, harness: str | None = None,
         shared: bool = True) -> dict[str, Baseline]:
    """The baselines of (board, kernel); empty when there are none yet. With a harness,
    its own figures over the shared ones (shared=False: its own only)."""
    out = _load_file(baseline_path(kernel, board, root)) if shared or not harness else {}
    if harness:
        out.update(_load_file(baseline_path(kernel, board, root, harness)))
    return out


def spread_of(values) -> dict:
    values = [float(v) for v in values]
    out = {"min": min(values), "max": max(values), "n": len(values)}
    if len(values) > 1:
        out["stdev"] = round(statistics.stdev(values), 6)
    return out


def write(kernel: str, board: str, metrics: dict[str, Baseline], root: Path = KERNELS_DIR,
          merge=True, harness: str | None = None) -> Path:
    """Write baselines (atomically), keeping metrics of the file not given here."""
    path = baseline_path(kernel, board, root, harness)
    existing = {}
    if merge and path.exists():
        existing = {k: v.to_dict() for k, v in _load_file(path).items()}
    existing.update({k: v.to_dict() for k, v in metrics.items()})
    doc = {"board": board, "kernel": kernel, "metrics": dict(sorted(existing.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".baseline-")
    with os.fdopen(fd, "w") as f:
        through = f", as {harness} measures them" if harness else ""
        f.write(f"# Baselines of {board} with kernel {kernel}{through}. Written by --update-baselines;\n"
                f"# each metric: value (median), unit, direction, tolerance, spread, source.\n")
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=None, width=100)
    os.replace(tmp, path)
    return path


def measured_source(repeats: int, host_id: str | None, clock: str = "") -> dict:
    out = {"kind": "measured", "date": time.strftime("%Y-%m-%d"), "host_id": host_id,
           "repeats": repeats}
    if clock:
        out["clock"] = clock
    return out


def host_of(source: dict | None) -> str:
    """Where a baseline was measured, as a person reads it."""
    source = source or {}
    if source.get("host_id"):
        return source["host_id"]
    if source.get("kind") == "study":
        return "the study's lab (2005)"
    if source.get("host"):
        return f"an unidentified host named {source['host']!r} ({source.get('date', 'undated')})"
    return "an unknown host"
