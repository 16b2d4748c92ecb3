"""Stored baselines: kernels/<kernel>/<board>.yaml holds, per metric, its samples (the
figures of every repeat it was measured with), their median and spread, the unit and
direction, and the source (the 2005 study, or measured: date, host, clock, repeats).

The verdict against a baseline is boardlab.judge.verdict's (the baseline's samples are side A,
the run's side B), with each metric's floor from boardlab.measure.catalogue; a baseline measured
on another clock, or a host-bound one measured on another host, does not judge.

The one reader of those files; in measure/, not judge/: the strategy (boot/, below judge/)
reads when a boot's milestones are due from them (boot.milestonesdue)."""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from boardlab.errors import InputError, one_line
from boardlab.facts.board import KERNELS_DIR
from boardlab.measure import clocks, kernelid
from boardlab.measure.catalogue import METRICS, BadFigure, for_harness, usable
from boardlab import yamltext

DIRECTIONS = ("lower", "higher")


class BaselineError(InputError):
    """A baseline file that cannot be used: names the file and the field."""


@dataclass
class Baseline:
    name: str
    value: float                    # the median of the samples
    unit: str
    direction: str = "lower"
    spread: dict | None = None      # {min, max, stdev, n}
    source: dict | None = None
    samples: list | None = None     # every repeat's figure (None: the study's single numbers)
    others: list | None = None      # the same metric measured with other settings (Baselines)

    def values(self) -> list[float]:
        """Side A of a comparison: the samples; where a file kept only their spread, the
        samples it determines exactly (n alike, or three: min, median, max); else the
        one stored value."""
        if self.samples:
            return [float(x) for x in self.samples]
        n, lo, hi = ((self.spread or {}).get(k) for k in ("n", "min", "max"))
        if isinstance(n, int) and lo is not None and hi is not None and (n == 3 or (lo == hi and n > 1)):
            return [float(lo), float(self.value), float(hi)] if n == 3 else [float(lo)] * n
        return [self.value]

    def limit(self, harness: str | None = None) -> float | None:
        """The worst value an exact metric may take and still be the same (its floor past the
        median): what a LAVA test case checks by itself. None for a noisy metric."""
        spec = METRICS.get(self.name)
        if spec is None or not spec.exact:
            return None
        floor = for_harness(spec, harness).floor(self.value)
        return self.value + floor if self.direction == "lower" else self.value - floor

    def clock(self) -> str | None:   # the clock it was measured on (boardlab.measure.clocks), if said
        return (self.source or {}).get("clock")

    def settings(self) -> dict | None:
        """How it was measured where that changes the figure ({"run_s": 10}), if it says."""
        return (self.source or {}).get("settings")

    def stated(self) -> bool:
        """The study's published numbers: compared as values, with no clock (decide.Figures)."""
        return (self.source or {}).get("kind") == "study"

    def for_settings(self, settings: dict | None) -> Baseline:
        """The baseline of this metric measured with these settings (the maximum of a 60 s
        cyclictest run is judged against 60 s runs, kept beside the 10 s ones); itself when
        it has none of them (the judge then says other-settings)."""
        if not settings or self.settings() in (None, settings):
            return self
        return next((b for b in self.others or () if b.settings() == settings), self)

    def with_other(self, new: Baseline) -> Baseline:
        """This metric's baselines with new in place of the one of new's settings; new is
        kept beside them when its settings are another's (both say theirs)."""
        kept = [b for b in [self] + list(self.others or ()) if b.settings() != new.settings()]
        if not new.settings() or not self.settings() or self.settings() == new.settings():
            return replace(new, others=[b for b in kept if b is not self and b.settings()] or None)
        return replace(self, others=[b for b in kept if b is not self] + [new])

    def host_id(self) -> str | None:   # the machine it was measured on (clocks.this_host id)
        return (self.source or {}).get("host_id")

    def to_dict(self, others: bool = True) -> dict:
        d = {"value": self.value, "unit": self.unit, "direction": self.direction}
        if self.samples:
            d["samples"] = [round(float(x), 6) for x in self.samples]
        if self.spread:
            d["spread"] = self.spread
        if self.source:
            d["source"] = self.source
        if others and self.others:
            d["other_settings"] = [b.to_dict() for b in self.others]
        return d


# A harness whose measurement differs from the pytest suites' keeps the figures that
# differ in a file of its own, kernels/<kernel>/<board>.<harness>.yaml; the rest come
# from the shared file. LAVA: its ramdisk carries its test overlay, so memory differs.
HARNESSES = ("lava",)


def baseline_path(kernel: str, board: str, root: Path = KERNELS_DIR, harness: str | None = None) -> Path:
    """kernels/<kernel>/<board>.yaml; a name that would lead out of root is refused."""
    for what, name in (("kernel", kernel), ("board", board), ("harness", harness or "x")):
        if not name or name.startswith("/") or ".." in name.split("/") or "\0" in name:
            raise BaselineError(f"{what} name {name!r}: a baseline's path must stay under {root}")
    return root / kernel / (f"{board}.{harness}.yaml" if harness else f"{board}.yaml")


def kernels_of(board: str, root: Path = KERNELS_DIR) -> list[str]:
    """The kernels with a stored baseline file of the board (kernels/*/<board>.yaml), by name."""
    return sorted(p.parent.name for p in Path(root).glob(f"*/{board}.yaml"))


def _field(path, metric, key):
    return f"{path}: metrics.{metric}.{key}"


def parse_baselines(data, path) -> dict[str, Baseline]:
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise BaselineError(f"{path}: expected a mapping with a 'metrics' mapping")
    return {name: _parse_metric(name, m, path, name) for name, m in data["metrics"].items()}


def _parse_metric(name, m, path, where) -> Baseline:
    """One metric's mapping (where: its place in the file, for the error)."""
    if not isinstance(m, dict):
        raise BaselineError(f"{path}: metrics.{where} must be a mapping, got {m!r}")
    if not isinstance(m.get("value"), (int, float)) or isinstance(m.get("value"), bool):
        raise BaselineError(f"{_field(path, where, 'value')} must be a number, got {m.get('value')!r}")
    if not isinstance(m.get("unit"), str):
        raise BaselineError(f"{_field(path, where, 'unit')} must be a string, got {m.get('unit')!r}")
    direction = m.get("direction", "lower")
    if direction not in DIRECTIONS:
        raise BaselineError(f"{_field(path, where, 'direction')} must be lower or higher, "
                            f"got {direction!r}")
    spread = m.get("spread")
    if spread is not None and (not isinstance(spread, dict) or not all(
            isinstance(v, (int, float)) for v in spread.values())):
        raise BaselineError(f"{_field(path, where, 'spread')} must map min/max/stdev/n to "
                            f"numbers, got {spread!r}")
    samples = m.get("samples")
    if samples is not None and (not isinstance(samples, list) or not samples or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in samples)):
        raise BaselineError(f"{_field(path, where, 'samples')} must be a list of numbers, "
                            f"got {samples!r}")
    others = m.get("other_settings")
    if others is not None and (not isinstance(others, list) or not all(
            isinstance(o, dict) and isinstance((o.get("source") or {}).get("settings"), dict) for o in others)):
        raise BaselineError(f"{_field(path, where, 'other_settings')} must be a list of metrics, each "
                            f"with its source.settings, got {others!r}")
    try:
        usable(name, [m["value"]] + (samples or []), f"{path}: metrics.{where}", reference=True)
    except BadFigure as e:   # a BaselineError: what a run checks before it boots
        raise BaselineError(str(e)) from None
    return Baseline(name, float(m["value"]), m["unit"], direction, spread, m.get("source"), samples,
                    [_parse_metric(name, o, path, f"{where}.other_settings[{i}]")
                     for i, o in enumerate(others)] if others else None)


def _read(path: Path):
    try:
        return yamltext.load(path.read_text())
    except yaml.YAMLError as e:
        raise BaselineError(f"{path}: not valid YAML: {one_line(e)}") from None


def _load_file(path: Path) -> dict[str, Baseline]:
    return parse_baselines(_read(path), path) if path.exists() else {}


def load_identity(kernel: str, board: str, root: Path = KERNELS_DIR) -> dict | None:
    """The identity of the kernel the baselines were measured with (measure.kernelid);
    None where the file records none (the study's figures)."""
    path = baseline_path(kernel, board, root)
    if not path.exists():
        return None
    ident = (_read(path) or {}).get("identity")
    if ident is not None and not (isinstance(ident, dict) and all(isinstance(v, str) for v in ident.values())):
        raise BaselineError(f"{path}: identity must map names to strings, got {ident!r}")
    return ident


def load(kernel: str, board: str, root: Path = KERNELS_DIR, harness: str | None = None,
         shared: bool = True) -> dict[str, Baseline]:
    """The baselines of (board, kernel); empty when there are none yet. With a harness,
    its own figures over the shared ones (shared=False: its own only)."""
    out = _load_file(baseline_path(kernel, board, root)) if shared or not harness else {}
    if harness:
        out.update(_load_file(baseline_path(kernel, board, root, harness)))
    return out


def load_stored(spec: str) -> tuple[str, str, dict[str, Baseline]]:
    """'baseline:<board>:<kernel>' -> (board, kernel, its baselines); BaselineError
    naming the file when there are none."""
    parts = spec.split(":", 2)
    if len(parts) != 3 or not all(parts[1:]):
        raise BaselineError(f"{spec!r}: a stored side is baseline:<board>:<kernel> "
                            f"(e.g. baseline:tqm860l:2.4.25)")
    _, board, kernel = parts
    base = load(kernel, board)
    if not base:
        raise BaselineError(f"no baselines for board {board}, kernel {kernel} "
                            f"({baseline_path(kernel, board)})")
    return board, kernel, base


def spread_of(values) -> dict:
    values = [float(v) for v in values]
    out = {"min": min(values), "max": max(values), "n": len(values)}
    if len(values) > 1:
        out["stdev"] = round(statistics.stdev(values), 6)
    return out


def write(kernel: str, board: str, metrics: dict[str, Baseline], root: Path = KERNELS_DIR, merge=True,
          harness: str | None = None, identity: dict | None = None) -> Path:
    """Write baselines (atomically), keeping the file's other metrics unless they are of
    another kernel (identity: the kernel these metrics were measured with)."""
    return write_all([(kernel, board, metrics, identity)], root, merge, harness)[0]


def write_all(files, root: Path = KERNELS_DIR, merge=True, harness: str | None = None) -> list[Path]:
    """[(kernel, board, metrics, identity)], all or none: each staged beside its place, then all put in place."""
    staged = []
    try:
        for kernel, board, metrics, identity in files:
            path = baseline_path(kernel, board, root, harness)
            try:
                staged.append((_staged(kernel, board, metrics, path, merge, harness, identity, root), path))
            except OSError as e:
                raise BaselineError(f"{path}: cannot be written ({e.strerror or e}): no baseline file was changed") from None
        for tmp, path in staged:
            os.replace(tmp, path)
        return [path for _, path in staged]
    finally:
        for tmp in (t for t, _ in staged if os.path.exists(t)):
            os.unlink(tmp)


def _staged(kernel, board, metrics, path: Path, merge, harness, identity, root) -> str:
    existing = {}
    had = load_identity(kernel, board, root) if not harness else None
    if identity and had and kernelid.differs(had, identity):
        merge = False   # the file's other metrics are another kernel's figures
    if merge and path.exists():
        existing = _load_file(path)
    for k, b in metrics.items():   # a figure of other settings is kept beside the file's
        existing[k] = existing[k].with_other(b) if k in existing else b
    existing = {k: b.to_dict() for k, b in existing.items()}
    doc = {"board": board, "kernel": kernel}
    if not harness and (identity or had):
        doc["identity"] = dict(sorted((identity or had).items()))
    doc["metrics"] = dict(sorted(existing.items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".baseline-")
    with os.fdopen(fd, "w") as f:
        through = f", as {harness} measures them" if harness else ""
        f.write(f"# Baselines of {board} with kernel {kernel}{through}. Written by --update-baselines;\n"
                f"# identity: the kernel they were measured with (uname -r, /proc/version, package\n"
                f"# or build inputs, uImage sha256); each metric: value (median of its samples),\n"
                f"# unit, direction, samples, spread, source.\n")
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=None, width=100)
    return tmp


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
        if clocks.known_host(source["host_id"]) is None:
            return f"an unknown host (under {source['host_id']}, an id machines of one kind share)"
        return source["host_id"]
    if source.get("kind") == "study":
        return "the study's lab (2005)"
    if source.get("host"):
        return f"an unidentified host named {source['host']!r} ({source.get('date', 'undated')})"
    return "an unknown host"
