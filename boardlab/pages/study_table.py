"""`boardlab report --study RUN`: the study's table, one column per kernel, for every
board of the run that the study measured: its numbers for 2.4.25 and 2.6.11.7 (the
stored study baselines under kernels/) beside this run's kernels (e.g. 6.1 from the
build-size suite). Rows are (board, metric); the last column is the change from the
study's newest kernel to the run's.

Whether a cell may be compared with the study's is the judge's to say (judge.decide): build
times were taken on the study's 2005 build hosts and on this run's host (host-bound:
shown, marked with their hosts, never compared); a real board's boot milestones are the
board's own time and are compared wherever they were stamped.

Given several runs (e.g. a sweep's builds at the oldest 6.1 and the newest 6.12), their
kernels are columns in that order, and two more columns judge the last two of them as the
DENX page set 2.4 against 2.6: their change and its verdict (judge.decide on their
samples)."""
from __future__ import annotations

from pathlib import Path

from boardlab.measure import baselines as bl
from boardlab.pages.report import _facts, _fmt, _order, _pct, delta_pct, markdown_table
from boardlab.judge.results import load_run
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide, why_not
from boardlab.measure import catalogue


def _version_key(kernel: str):
    parts = kernel.split(".")
    return (0, [int(p) for p in parts], "") if all(p.isdigit() for p in parts) else (1, [], kernel)


def study_kernels(board: str, root: Path = bl.KERNELS_DIR) -> list[str]:
    """Kernels of `board` whose stored baselines are the study's numbers, oldest first."""
    found = []
    for kernel in bl.kernels_of(board, root):
        base = bl.load(kernel, board, root)
        if base and all((b.source or {}).get("kind") == "study" for b in base.values()):
            found.append(kernel)
    return sorted(found, key=_version_key)


STUDY_HOSTS = "the study's 2005 build hosts"


def _merged(runs: list[str]) -> dict:
    """Several runs read as one: their metrics in order, their kernel configs together."""
    loaded = [load_run(r) for r in runs]
    meta = dict(loaded[0]["meta"])
    meta["kernel_configs"] = {k: v for d in loaded for k, v in d["meta"].get("kernel_configs", {}).items()}
    return {"meta": meta, "metrics": [m for d in loaded for m in d["metrics"]]}


def study_table(run: str | list[str], root: Path = bl.KERNELS_DIR) -> tuple[list[str], list[list[str]], list[str]]:
    """-> (head, rows, notes). Raises ValueError when no board of the run is one the
    study measured."""
    runs = [run] if isinstance(run, (str, Path)) else list(run)
    data = _merged([str(r) for r in runs])
    run = ", ".join(map(str, runs))
    values: dict[str, dict] = {}          # kernel -> {(board, key): value}
    samples: dict[str, dict] = {}         # kernel -> {(board, key): samples}
    hosts: dict[str, str] = {}            # kernel -> the host its host-clock figures came from
    run_clocks: dict = {}                 # (board, key) -> the run's clock of it
    run_kernels = []
    for m in data["metrics"]:
        values.setdefault(m["kernel"], {})[(m["board"], f"{m['suite']}.{m['name']}")] = m["value"]
        samples.setdefault(m["kernel"], {})[(m["board"], f"{m['suite']}.{m['name']}")] = m.get("samples") or [m["value"]]
        hosts[m["kernel"]] = m.get("host") or data["meta"].get("host", "this host")
        run_clocks[(m["board"], f"{m['suite']}.{m['name']}")] = m.get("clock")
        if m["kernel"] not in run_kernels:
            run_kernels.append(m["kernel"])
    boards = sorted({m["board"] for m in data["metrics"]})
    studied = {b: study_kernels(b, root) for b in boards}
    if not any(studied.values()):
        raise ValueError(f"{run}: none of its boards ({', '.join(boards) or 'no metrics'}) has "
                         f"the study's numbers under {root} (the study measured tqm860l and "
                         f"sandpoint)")
    for b, kernels in studied.items():
        for k in kernels:
            for key, base in bl.load(k, b, root).items():
                values.setdefault(k, {}).setdefault((b, key), base.value)
                hosts.setdefault(k, STUDY_HOSTS)
    old = sorted({k for ks in studied.values() for k in ks}, key=_version_key)
    ordered = run_kernels if len(runs) > 1 else sorted(run_kernels, key=_version_key)
    columns = old + [k for k in ordered if k not in old]
    pair = [k for k in columns if k not in old][-2:]     # the run's last two: judged
    pair = pair if len(pair) == 2 else []
    head = (["metric", "unit"] + columns + [f"{old[-1]} -> {columns[-1]}"]
            + ([f"{pair[0]} -> {pair[1]}", "verdict"] if pair else []) + ["clock"])
    rows = []
    keys = {(b, key) for b in boards if studied[b] for key in _run_keys(data, b)}
    for board, key in sorted(keys, key=_order):
        cells = [values.get(k, {}).get((board, key)) for k in columns]
        apart = why_not(key, Figures((), None, hosts.get(old[-1])),
                        Figures((), run_clocks.get((board, key)), hosts.get(columns[-1])), _facts(board))
        host_bound = apart is not None and apart.outcome == vd.OTHER_HOST
        change = ("other hosts" if host_bound else "other clocks" if apart is not None
                  else _pct(delta_pct(values.get(old[-1], {}).get((board, key)), cells[-1])))
        clock = _hosts_cell([k for k in columns if values.get(k, {}).get((board, key)) is not None],
                            hosts) if host_bound else "-"
        spec = catalogue.METRICS.get(key)
        judged = _judged(pair, board, key, values, samples, hosts, run_clocks, spec) if pair else []
        rows.append([f"{board} {key}", spec.unit if spec else "", *map(_fmt, cells), change, *judged, clock])
    configs = data["meta"].get("kernel_configs", {})
    notes = [f"{name}: {how}" for name, how in sorted(configs.items())
             if name.split()[0] in boards]
    return head, rows, notes


def _judged(pair, board, key, values, samples, hosts, run_clocks, spec) -> list[str]:
    """[change, verdict] of the run's last two kernels for one row."""
    a, b = (samples.get(k, {}).get((board, key)) for k in pair)
    if not a or not b or spec is None:
        return ["-", "-"]
    clock = run_clocks.get((board, key))
    change = _pct(delta_pct(values[pair[0]][(board, key)], values[pair[1]][(board, key)]))
    # the runs set side by side are a sweep's, measured in one session: no drift rule
    return [change, decide(spec, Figures(a, clock, hosts.get(pair[0])), Figures(b, clock, hosts.get(pair[1])),
                           _facts(board), interleaved=True).outcome]


def _hosts_cell(kernels: list[str], hosts: dict[str, str]) -> str:
    """'host: 2.4.25, 2.6.11.7 on the study's 2005 build hosts; 6.1 on vm-...'"""
    by_host: dict[str, list[str]] = {}
    for k in kernels:
        by_host.setdefault(hosts.get(k, "an unknown host"), []).append(k)
    return "host: " + "; ".join(f"{', '.join(ks)} on {h}" for h, ks in by_host.items())


def _run_keys(data: dict, board: str) -> set[str]:
    return {f"{m['suite']}.{m['name']}" for m in data["metrics"] if m["board"] == board}


def markdown(run: str, root: Path = bl.KERNELS_DIR) -> str:
    head, rows, notes = study_table(run, root)
    return markdown_table(head, rows) + "".join(
        ["\nKernel configs:\n"] + [f"- {n}\n" for n in notes] if notes else [])
