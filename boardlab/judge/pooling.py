"""Baselines from runs: per metric every sample of every run pooled (over runs, they carry
the run-to-run noise the verdict must not take for a change), their median and spread.
Every target's baselines are made and its file read before the first is written: a bad
figure or file of the last leaves the first as it was."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from boardlab.facts.board import load_board
from boardlab.measure import baselines as bl
from boardlab.judge.decide import host_bound
from boardlab.measure.catalogue import usable


def update_baselines(runs, root: Path = bl.KERNELS_DIR, harness: str | None = None,
                     facts: dict | None = None, identities: dict | None = None) -> list[Path]:
    """Baselines from one or more runs (lists of judge.results.Metric); facts: the boards'
    facts the runs were measured with (default the checkout's); identities: {board/kernel:
    the kernel measured} (measure.kernelid). The files written."""
    def facts_of(name):
        return (facts or {}).get(name) or load_board(name)
    targets = {}
    for (board, kernel, key), e in _pooled(runs).items():
        targets.setdefault((board, kernel), {})[key] = _baseline(board, kernel, key, e, facts_of)
    for board, kernel in targets:   # the files bl.write merges into: read before any is written
        bl.load(kernel, board, root, harness, shared=False)
        if not harness:
            bl.load_identity(kernel, board, root)
    return bl.write_all([(kernel, board, new, (identities or {}).get(f"{board}/{kernel}"))
                         for (board, kernel), new in sorted(targets.items())], root, harness=harness)


def _pooled(runs) -> dict:
    """{(board, kernel, key): the metric, its samples over the runs, how many runs, their
    hosts and settings}."""
    pooled = {}
    for metrics in runs:
        for m in metrics:
            if m.value is None:   # missing: nothing measured to pool
                continue
            entry = pooled.setdefault((m.board, m.kernel, m.key),
                                      {"m": m, "samples": [], "runs": 0, "hosts": set(), "settings": set()})
            entry["settings"].add(json.dumps(m.settings, sort_keys=True) if m.settings else "")
            entry["samples"] += m.samples or [m.value]
            entry["runs"] += 1
            entry["hosts"].add(m.host)
    return pooled


def _baseline(board: str, kernel: str, key: str, e: dict, facts_of) -> bl.Baseline:
    """One metric's pooled samples as its baseline; BadFigure where they are no figures
    (catalogue.usable), BaselineError where they are not one host's (a host-bound figure)
    or not of one setting."""
    m = e["m"]   # a run's own figures (pytest --update-baselines) come here unread by load_run
    samples = usable(key, e["samples"], f"{board} {kernel} {key}", reference=True)
    if len(e["hosts"]) > 1 and host_bound(m.clock, facts_of(board), key):
        raise bl.BaselineError(
            f"{board} {kernel} {key}: the runs were measured on different hosts "
            f"({', '.join(sorted(str(h) for h in e['hosts']))}); a {m.clock}-clock "
            f"figure's baseline comes from one host")
    if len(e["settings"]) > 1:
        raise bl.BaselineError(f"{board} {kernel} {key}: the runs were measured with other settings "
                               f"({', '.join(sorted(s or 'none said' for s in e['settings']))}); "
                               f"a baseline pools runs of one")
    source = bl.measured_source(len(samples), next(iter(e["hosts"])), m.clock)
    source["runs"] = e["runs"]
    if m.settings:
        source["settings"] = dict(m.settings)   # a copy each: no YAML anchors in a file people read
    return bl.Baseline(key, round(statistics.median(samples), 6), m.unit, m.direction,
                       bl.spread_of(samples), source, list(samples))
