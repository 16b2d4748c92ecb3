"""The HTML page of a comparison (a Jinja2 template, boardlab/pages/templates/): the table,
every metric's delta with its interval, each boot's milestones, the jitter histograms."""
from __future__ import annotations

import base64
from pathlib import Path

import jinja2

from boardlab.pages import timeline
from boardlab.pages import plots

TEMPLATES = Path(__file__).parent / "templates"


def _plots(path: Path, a, b, rows) -> list[dict]:
    made = []
    judged = [r for r in rows if r.cmp is not None]
    if judged:
        made.append(("every metric: B against A", plots.deltas_with_intervals(
            [(r.spec.key, r.cmp.delta_pct, r.cmp.ci_pct,
              100 * r.cmp.floor / abs(r.cmp.a) if r.cmp.a else 0) for r in judged],
            path.with_name("compare-deltas.png"), f"{b.label} against {a.label}")))
    if a.boots or b.boots:
        made.append(("boot milestones of every boot", plots.milestones_per_boot(
            [(s.label, s.boots) for s in (a, b)], path.with_name("compare-milestones.png"),
            "milestones per boot")))
    for i, side in enumerate((a, b)):
        if side.histogram:
            made.append((f"jitter: {side.label}", plots.latency_histogram(
                {int(k): v for k, v in side.histogram.items()},
                path.with_name(f"compare-jitter-{'ab'[i]}.png"), f"cyclictest under load: {side.label}")))
    return [{"title": t, "data": base64.b64encode(p.read_bytes()).decode()} for t, p in made]


def html_page(path: Path, a, b, rows, meta: dict, where_went=None) -> Path:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    path.write_text(env.get_template("compare.html.j2").render(
        a=a, b=b, rows=rows, meta=meta, plots=_plots(path, a, b, rows), where=where_went,
        timeline=timeline.svg(a, b, where_went) if where_went and not where_went.not_compared else None))
    return path
