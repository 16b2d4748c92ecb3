"""`boardlab report RUN [RUN2]`: the study-style table (metric, A, B, delta %) as
Markdown, and an HTML page with the run's plots. A run is a results directory, or
'baseline:<board>:<kernel>' for stored baselines (e.g. the study's numbers)."""
from __future__ import annotations

import base64
import html
from pathlib import Path

from . import baselines as bl
from .results import load_run


def load_side(spec: str) -> tuple[str, dict, list]:
    """-> (label, {(board, suite.metric): (value, unit, verdict, baseline value, clock)},
    plot files)."""
    if spec.startswith("baseline:"):
        _, board, kernel = spec.split(":", 2)
        base = bl.load(kernel, board)
        if not base:
            raise FileNotFoundError(f"no baselines for board {board}, kernel {kernel} "
                                    f"({bl.baseline_path(kernel, board)})")
        return (f"{board} {kernel}",
                {(board, k): (b.value, b.unit, "", None, "") for k, b in base.items()}, [])
    data = load_run(spec)
    metrics = {}
    kernels = set()
    for m in data["metrics"]:
        base = (m.get("baseline") or {}).get("value")
        metrics[(m["board"], f"{m['suite']}.{m['name']}")] = (
            m["value"], m["unit"], VERDICT_WORDS.get(m["verdict"], m["verdict"]), base,
            m.get("clock", ""))
        kernels.add(m["kernel"])
    run_dir = Path(spec)
    label = f"{data['meta'].get('run_id', run_dir.name)} ({', '.join(sorted(kernels))})"
    return label, metrics, sorted(run_dir.glob("*.png")) if run_dir.is_dir() else []


# how a verdict reads in the table
VERDICT_WORDS = {bl.OTHER_HOST: "other host, not judged", bl.OTHER_CLOCK: "other clock, not judged"}


def delta_pct(a, b):
    if a in (None, 0) or b is None:
        return None
    return (b - a) / abs(a) * 100.0


def _fmt(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else f"{int(v)}"


def rows(a: dict, b: dict | None):
    keys = sorted(set(a) | set(b or {}), key=lambda k: (k[1].split(".")[0], k[0], k[1]))
    for key in keys:
        va = a.get(key)
        vb = (b or {}).get(key)
        unit = (va or vb)[1]
        yield key, unit, va, vb, delta_pct(va[0] if va else None, vb[0] if vb else None)


def markdown(spec_a: str, spec_b: str | None = None) -> str:
    la, a, _ = load_side(spec_a)
    if spec_b:
        lb, b, _ = load_side(spec_b)
        out = [f"| metric | unit | {la} | {lb} | delta |", "|---|---|---:|---:|---:|"]
        for (board, name), unit, va, vb, d in rows(a, b):
            out.append(f"| {board} {name} | {unit} | {_fmt(va[0] if va else None)} | "
                       f"{_fmt(vb[0] if vb else None)} | {'-' if d is None else f'{d:+.1f} %'} |")
    else:
        out = [f"| metric | unit | {la} | baseline | delta | clock | verdict |",
               "|---|---|---:|---:|---:|---|---|"]
        for (board, name), unit, va, _, _ in rows(a, None):
            d = delta_pct(va[3], va[0])
            out.append(f"| {board} {name} | {unit} | {_fmt(va[0])} | {_fmt(va[3])} | "
                       f"{'-' if d is None else f'{d:+.1f} %'} | {va[4] or '-'} | {va[2]} |")
    return "\n".join(out) + "\n"


def html_page(spec_a: str, spec_b: str | None, path: Path) -> Path:
    md = markdown(spec_a, spec_b).splitlines()
    head = [c.strip() for c in md[0].strip("|").split("|")]
    body = [[c.strip() for c in ln.strip("|").split("|")] for ln in md[2:]]
    plots = load_side(spec_a)[2] + (load_side(spec_b)[2] if spec_b else [])
    parts = ["<!doctype html><meta charset=utf-8><title>boardlab report</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 8px}td:nth-child(n+3){text-align:right}"
             ".fail{background:#fcc}</style>",
             f"<h1>boardlab report</h1><p>{html.escape(spec_a)}"
             f"{' vs. ' + html.escape(spec_b) if spec_b else ''}</p><table><tr>"
             + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for r in body:
        cls = ' class="fail"' if "fail" in r else ""
        parts.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
    parts.append("</table>")
    for png in plots:
        data = base64.b64encode(png.read_bytes()).decode()
        parts.append(f"<h3>{html.escape(png.stem)}</h3><img src='data:image/png;base64,{data}'>")
    path.write_text("\n".join(parts))
    return path
