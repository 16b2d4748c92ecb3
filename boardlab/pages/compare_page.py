"""What a comparison (boardlab.ab.compare) says to a person: the answer (the counts, every
change beyond its floor, every metric left unknown with why), the Markdown table, and the
HTML page (a Jinja2 template, boardlab/pages/templates/): every metric's delta with its
interval, each boot's milestones, the jitter histograms. A side is anything with the
compare side's label, samples, boots, identity and histogram."""
from __future__ import annotations

import base64
from collections import Counter
from pathlib import Path

import jinja2

from boardlab.judge import bootspans
from boardlab.judge import verdict as vd
from boardlab.measure import clocks, kernelid
from boardlab.pages import timeline
from boardlab.pages import plots

TEMPLATES = Path(__file__).parent / "templates"


def _plots(path: Path, a, b, rows) -> list[dict]:
    made = []
    judged = [r for r in rows if r.cmp is not None]
    if judged:
        made.append(("every metric: B against A", plots.deltas_with_intervals(
            [(r.spec.key, r.cmp.delta_pct, r.cmp.ci_pct,
              _floor_pct(r.cmp) or 0) for r in judged],
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
        clock_of=lambda spec: figure_clock(a, spec),
        timeline=timeline.svg(a, b, where_went) if where_went and not where_went.not_compared else None))
    return path


def _interval(c: vd.Verdict) -> str:
    return f"{c.ci_pct[0]:+.2f} .. {c.ci_pct[1]:+.2f} %" if c.method != "exact" else "exact"


def _floor_pct(c: vd.Verdict) -> float | None:
    """The floor as a share of A, in % (the terms of delta_pct and ci_pct)."""
    return 100 * c.floor / abs(c.a) if c.floor is not None and c.a else None


def _floor(c: vd.Verdict, unit: str) -> str:
    """The floor in the metric's unit, and as a share of A beside the interval's %."""
    pct = _floor_pct(c)
    return f"{c.floor:.4g} {unit}" + (f" (+-{pct:.3g} %)" if pct is not None else "")


def figure_clock(side, spec) -> str:
    """The clock of side A's figure: a size has none; a stored figure that did not keep
    its clock (the study's) says so."""
    clock = (getattr(side, "clocks", None) or {}).get(spec.key)
    return clock or (clocks.NO_CLOCK if clocks.is_size(spec.unit) else "not recorded")


def _clocks_line(a, b, rows) -> list[str]:
    """Which clocks the judged figures are on, and the host of the host-clock ones."""
    seen = Counter(figure_clock(a, r.spec) for r in rows if r.cmp is not None)
    if not seen:
        return []
    hosts = sorted({h for h in (getattr(a, "host", None), getattr(b, "host", None)) if h})
    on_host = f"; host-clock figures from {' and '.join(hosts)}" if clocks.HOST in seen and hosts else ""
    named = {clocks.NO_CLOCK: "none, sizes"}
    return ["Clocks: " + ", ".join(f"{named.get(c, c)} ({n})" for c, n in sorted(seen.items())) + on_host]


def answer(a, b, rows) -> str:
    """The answer a maintainer acts on: the counts, every change beyond its floor, largest
    first (none picked out), and every metric left unknown with why."""
    judged = [r for r in rows if r.cmp is not None]
    count, aside = {o: sum(r.cmp.outcome == o for r in judged) for o in vd.OUTCOMES}, len(rows) - len(judged)
    changed = sorted((r for r in judged if r.cmp.outcome in (vd.REGRESSED, vd.IMPROVED)),
                     key=lambda r: -abs(r.cmp.delta_pct))
    out = [f"{b.label} against {a.label}: {len(judged)} metrics judged: "
           + ", ".join(f"{count[o]} {o}" for o in (vd.REGRESSED, vd.IMPROVED, vd.SAME, vd.UNKNOWN))
           + (f"; {aside} not judged (information only, or another clock or host)" if aside else ""),
           *_clocks_line(a, b, rows),
           "", f"Every change beyond its floor, largest first ({len(changed)}):", "",
           f"| metric | {a.label} | {b.label} | delta | 95 % interval | floor | verdict | clock |",
           "|---|---:|---:|---:|---|---:|---|---|"]
    for r in changed:
        c = r.cmp
        out.append(f"| {r.spec.key} | {c.a:.5g} {r.spec.unit} (n={c.n[0]}) | {c.b:.5g} (n={c.n[1]}) | "
                   f"{c.delta_pct:+.2f} % | {_interval(c)} | {_floor(c, r.spec.unit)} | {c.outcome} | "
                   f"{figure_clock(a, r.spec)} |")
    unknown_rows = [r for r in judged if r.cmp.outcome == vd.UNKNOWN]
    if unknown_rows:
        out += ["", f"Left unknown ({len(unknown_rows)}), each with why and what would decide it:", ""]
        out += [f"- {r.spec.key}: {r.cmp.delta_pct:+.2f} % ({_interval(r.cmp)}): {r.cmp.why}"
                for r in unknown_rows]
    return "\n".join(out) + "\n"


def markdown(a, b, rows, where_went=None) -> str:
    out = [answer(a, b, rows), "Every metric:", "",
           f"| metric | unit | clock | {a.label} | {b.label} | delta | 95 % interval | verdict | why |",
           "|---|---|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        clock = figure_clock(a, r.spec)
        if r.cmp is None:
            out.append(f"| {r.spec.key} | {r.spec.unit} | {clock} | | | | | {r.note} | |")
            continue
        c = r.cmp
        out.append(f"| {r.spec.key} | {r.spec.unit} | {clock} | {c.a:.5g} (n={c.n[0]}) | {c.b:.5g} (n={c.n[1]}) | "
                   f"{c.delta_pct:+.2f} % | {_interval(c)} | {c.outcome} | {c.why} |")
    kernels = [f"{side.label}: {kernelid.describe(side.identity)}" for side in (a, b) if side.identity]
    return ("\n".join(out) + "\n" + ("\nkernels: " + "; ".join(kernels) + "\n" if kernels else "")
            + ("\n" + bootspans.markdown(where_went, a.label, b.label) if where_went else ""))
