"""Both boots as timelines, one above the other (like the kernel's bootgraph.pl): the
phases as bands, then a row per initcall or script that matters, bars from its start
for its duration on the boot's own clock. A span that changed beyond its floor is
drawn in CHANGED and labelled with its change; the rows are the same in both panels, so
the eye goes straight down from A's bar to B's. Plain SVG, no script."""
from __future__ import annotations

from html import escape

CHANGED, SPAN, PHASE_COLOURS = "#d62728", "#4c78a8", ("#e8e8e8", "#d0dff0", "#f0e0c8", "#d8f0d0")
WIDTH, LEFT, ROW, BAND, TOP = 1100, 260, 14, 18, 40   # TOP: title and phase band
SHOWN_SHARE = 0.01     # a span this share of the boot or longer gets a row of its own


def _rows(a_spans, b_spans, changed: set) -> list:
    """The leaf spans worth a row in both panels: long ones and changed ones, by start."""
    total = max([s["start_s"] + s["dur_s"] for s in a_spans + b_spans] or [1.0])
    starts = {}
    for s in a_spans + b_spans:
        if ".." in s["key"] or s["key"].startswith("phase."):
            continue
        if s["key"] in changed or s["dur_s"] >= SHOWN_SHARE * total:
            starts[s["key"]] = min(starts.get(s["key"], s["start_s"]), s["start_s"])
    return sorted(starts, key=lambda k: starts[k])


def _panel(label, spans, rows, changed: dict, y0, scale, total) -> list:
    out = [f'<text x="4" y="{y0 + 12}" font-weight="bold">{escape(label)}</text>']
    phases = [s for s in spans if ".." in s["key"]]
    for i, s in enumerate(phases):
        x, w = LEFT + s["start_s"] * scale, max(1.0, s["dur_s"] * scale)
        out.append(f'<rect class="phase" data-key="{escape(s["key"])}" x="{x:.1f}" y="{y0 + BAND}" width="{w:.1f}" '
                   f'height="{ROW}" fill="{PHASE_COLOURS[i % len(PHASE_COLOURS)]}">'
                   f'<title>{escape(s["key"])}: {s["dur_s"] * 1000:.1f} ms</title></rect>')
        if w > 80:   # a label where it fits; the tooltip names every band
            out.append(f'<text x="{x + 2:.1f}" y="{y0 + BAND + 11}" font-size="10">'
                       f'{escape(s["key"].split(".", 1)[1])} {s["dur_s"] * 1000:.0f} ms</text>')
    by_key = {s["key"]: s for s in spans}
    for n, key in enumerate(rows):
        y = y0 + TOP + n * ROW
        out.append(f'<text x="{LEFT - 6}" y="{y + 10}" font-size="10" text-anchor="end">{escape(key)}</text>')
        s = by_key.get(key)
        if s is None:
            continue
        x, w = LEFT + s["start_s"] * scale, max(1.5, s["dur_s"] * scale)
        colour = CHANGED if key in changed else SPAN
        cls = "span changed" if key in changed else "span"
        out.append(f'<rect class="{cls}" data-key="{escape(key)}" data-ms="{s["dur_s"] * 1000:.3f}" '
                   f'x="{x:.1f}" y="{y + 1}" width="{w:.1f}" height="{ROW - 3}" fill="{colour}">'
                   f'<title>{escape(key)}: {s["dur_s"] * 1000:.3f} ms from {s["start_s"]:.3f} s</title></rect>')
        if key in changed:
            out.append(f'<text x="{x + w + 4:.1f}" y="{y + 10}" font-size="10" fill="{CHANGED}">'
                       f'{escape(changed[key])}</text>')
    return out


def svg(a, b, where_went) -> str:
    """a, b: the compare sides (their first phase-log boot's timeline)."""
    changed = {r.key: f"{r.delta_s * 1000:+.1f} ms ({r.cmp.outcome})" for r in where_went.changed}
    rows = _rows(a.timeline, b.timeline, set(changed))
    total = max([s["start_s"] + s["dur_s"] for s in a.timeline + b.timeline] or [1.0])
    scale = (WIDTH - LEFT - 120) / total
    panel_h = TOP + ROW * len(rows) + 16
    height = 2 * panel_h + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{WIDTH}" height="{height}" '
           f'font-family="sans-serif" font-size="11">']
    for i, side in enumerate((a, b)):
        out += _panel(f"{'AB'[i]}: {side.label}", side.timeline, rows, changed, i * panel_h, scale, total)
    y = 2 * panel_h + 4
    for t in range(0, int(total * 10) + 1, max(1, int(total * 10) // 10)):   # ticks every 0.1 s or so
        x = LEFT + t / 10 * scale
        out.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{y}" stroke="#ccc" stroke-width="0.5"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 12}" font-size="10" text-anchor="middle">{t / 10:.1f} s</text>')
    out.append("</svg>")
    return "\n".join(out)
