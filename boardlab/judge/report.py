"""`boardlab report RUN [RUN2]`: the study-style table as Markdown, and an HTML page (a
Jinja2 template) with the run's plots. A run is a results directory, or
'baseline:<board>:<kernel>' for stored baselines (e.g. the study's numbers).

One run: per metric its value, baseline, delta, clock, verdict and why. Two: per metric
A, B and the delta; where both sides have samples, the verdict of B against A
(boardlab.judge.verdict, as `boardlab compare` judges)."""
from __future__ import annotations

import base64
from pathlib import Path

import jinja2

from boardlab.errors import BoardlabError
from boardlab.facts.board import load_board
from boardlab.judge import baselines as bl
from boardlab.judge import verdict as vd
from boardlab.judge.results import load_run
from boardlab.measure import catalogue, clocks

TEMPLATES = Path(__file__).parent / "templates"
# how a verdict reads in the table
VERDICT_WORDS = {bl.OTHER_HOST: "other host, not judged", bl.OTHER_CLOCK: "other clock, not judged"}


def load_side(spec: str) -> tuple[str, dict, list]:
    """-> (label, {(board, suite.metric): metric as results.json has it}, plot files)."""
    if spec.startswith("baseline:"):
        board, kernel, base = bl.load_stored(spec)
        return (f"{board} {kernel}",
                {(board, k): {"value": b.value, "unit": b.unit, "samples": b.values(),
                              "verdict": "", "clock": b.clock() or "", "host": b.host_id()}
                 for k, b in base.items()}, [])
    data = load_run(spec)
    metrics, kernels = {}, set()
    for m in data["metrics"]:
        metrics[(m["board"], f"{m['suite']}.{m['name']}")] = m
        kernels.add(m["kernel"])
    run_dir = Path(spec)
    label = f"{data['meta'].get('run_id', run_dir.name)} ({', '.join(sorted(kernels))})"
    return label, metrics, sorted(run_dir.glob("*.png")) if run_dir.is_dir() else []


def delta_pct(a, b):
    if a in (None, 0) or b is None:
        return None
    return (b - a) / abs(a) * 100.0


def _fmt(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else f"{int(v)}"


def _pct(d):
    return "-" if d is None else f"{d:+.1f} %"


def _order(key):
    suite = key[1].split(".")[0]
    return (catalogue.FAMILIES.index(suite) if suite in catalogue.FAMILIES else 99, key[0], key[1])


def single_rows(a: dict) -> list[list[str]]:
    rows = []
    for (board, name) in sorted(a, key=_order):
        m = a[(board, name)]
        base = (m.get("baseline") or {}).get("value")
        cmp = m.get("comparison") or {}
        rows.append([f"{board} {name}", m["unit"], _fmt(m["value"]), _fmt(base),
                     _pct(delta_pct(base, m["value"])), m.get("clock") or "-",
                     VERDICT_WORDS.get(m["verdict"], m["verdict"]), cmp.get("why", "")])
    return rows


def _facts(board: str):
    """A board's facts, None when this checkout has none of it (taken as virtual)."""
    try:
        return load_board(board)
    except BoardlabError:
        return None


def pair_rows(a: dict, b: dict) -> list[list[str]]:
    rows = []
    for key in sorted(set(a) | set(b), key=_order):
        va, vb = a.get(key), b.get(key)
        unit = (va or vb)["unit"]
        verdict, why = "", ""
        if va and vb and key[1] in catalogue.METRICS:
            sa, sb = va.get("samples") or [va["value"]], vb.get("samples") or [vb["value"]]
            spec = catalogue.METRICS[key[1]]
            rule = clocks.judgeable(key[1], _facts(key[0]), va.get("clock") or None, va.get("host"),
                                    vb.get("clock") or None, vb.get("host"))
            if not rule.ok:
                verdict, why = VERDICT_WORDS[rule.verdict], rule.why
            else:
                c = vd.compare(sa, sb, spec)
                verdict, why = c.outcome, c.why
        rows.append([f"{key[0]} {key[1]}", unit, _fmt(va["value"] if va else None),
                     _fmt(vb["value"] if vb else None),
                     _pct(delta_pct(va["value"] if va else None, vb["value"] if vb else None)),
                     verdict, why])
    return rows


def table(spec_a: str, spec_b: str | None = None) -> tuple[list[str], list[list[str]], list]:
    la, a, plots = load_side(spec_a)
    if spec_b:
        lb, b, plots_b = load_side(spec_b)
        return (["metric", "unit", la, lb, "delta", "verdict", "why"], pair_rows(a, b),
                plots + plots_b)
    return (["metric", "unit", la, "baseline", "delta", "clock", "verdict", "why"],
            single_rows(a), plots)


TEXT_COLUMNS = ("clock", "verdict", "why")   # left-aligned, as metric and unit; figures right


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i < 2 or h in TEXT_COLUMNS else "---:" for i, h in enumerate(head)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def markdown(spec_a: str, spec_b: str | None = None) -> str:
    head, rows, _ = table(spec_a, spec_b)
    return markdown_table(head, rows)


def html_page(spec_a: str, spec_b: str | None, path: Path) -> Path:
    head, rows, plots = table(spec_a, spec_b)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    verdict_col = head.index("verdict")
    path.write_text(env.get_template("report.html.j2").render(
        title=spec_a + (f" vs. {spec_b}" if spec_b else ""), head=head, rows=rows,
        verdict_col=verdict_col,
        plots=[{"title": p.stem, "data": base64.b64encode(p.read_bytes()).decode()} for p in plots]))
    return path
