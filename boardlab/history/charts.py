"""The history as pictures a person reads: per metric and environment (board and clock),
the series of builds with each build's samples as an error bar (as the Phoronix study
showed its kernels side by side), its change points marked where the new level begins,
and, where the bisect that starts itself ran, the first bad commit named (its report,
bisect.robot's, copied beside the page and linked). One page,
`history.html`, with every chart and the table of change points, each with what became
of it, whole (the watch's records, history.notes); SQUAD's own charts show the same
series (min..max bands), a pointer here on each build where a change point begins."""
from __future__ import annotations

import base64
import html
import re
import shutil
from pathlib import Path

from boardlab.history import changes, notes
from boardlab.history.server import HistoryServer
from boardlab.measure import catalogue, families
from boardlab.pages.plots import pyplot

plt = pyplot()

CULPRIT = re.compile(r"first bad commit [0-9a-f]+ .*?(?= \(bisect |$)")
CHANGE_COLOUR = "#c00"


def note(c: changes.ChangePoint, records: dict) -> str:
    """What became of this change point, whole, from the watch's records (notes.json): its
    culprit, why it was not bisected, or why it was given up ('' if the watch has not
    seen it)."""
    return records.get(notes.key(c), {}).get("note", "")


def culprit(c: changes.ChangePoint, records: dict) -> str:
    """The first bad commit its bisect found, as the chart labels it ('' if none)."""
    m = CULPRIT.search(note(c, records))
    return m.group(0) if m else ""


def report_link(record: dict, out_dir: Path) -> str:
    """The culprit's report (bisect.robot's report.txt) copied beside the page, linked
    there: the page is read where it is written, not where the bisect ran."""
    src = Path(record.get("report") or "")
    if not record.get("report") or not src.is_file():
        return ""
    dest = out_dir / "reports" / (re.sub(r"[^A-Za-z0-9_.-]", "_", src.parent.name) + ".txt")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return f' <a href="reports/{html.escape(dest.name)}">report</a>'


def chart(key: tuple, points: list, found: list, records: dict, path: Path) -> Path:
    """points: [(build, [samples])]; found: this series' change points."""
    metric, env = key
    xs = range(len(points))
    means = [sum(v) / len(v) for _, v in points]
    lo = [m - min(v) for m, (_, v) in zip(means, points)]
    hi = [max(v) - m for m, (_, v) in zip(means, points)]
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=100)
    for x, (_, v) in zip(xs, points):
        ax.plot([x] * len(v), v, ".", color="0.6", ms=3, zorder=1)
    ax.errorbar(list(xs), means, yerr=[lo, hi], fmt="o", color="C0", capsize=3, ms=4, zorder=2,
                label="mean; bar: the build's samples, min..max")
    index = {b: i for i, (b, _) in enumerate(points)}
    for c in found:
        x = index[c.build] - 0.5
        ax.axvline(x, color=CHANGE_COLOUR, ls="--", lw=1.2)
        who = culprit(c, records)
        ax.annotate(f"{c.change_pct:+.2f} % from {c.build}" + (f"\n{who[:60]}" if who else ""),
                    (x, 1.0), xycoords=("data", "axes fraction"), xytext=(4, -4),
                    textcoords="offset points", va="top", fontsize=8, color=CHANGE_COLOUR)
    ax.set_xticks(list(xs), [b for b, _ in points], rotation=45, ha="right", fontsize=7)
    spec = catalogue.METRICS.get(metric.replace("/", "."))
    ax.set_ylabel(spec.unit if spec else "")
    ax.set_title(f"{metric} on {env}", fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _order(key: tuple, found: dict):
    family = key[0].split("/")[0]
    return (not found.get(key), families.of_family(family),
            key[1], key[0])


def page(server: HistoryServer, out_dir: Path, board=None, metric=None, since=None) -> Path:
    """history.html in out_dir (and each chart as a PNG beside it): the series with change
    points first, then the others by family."""
    series, _ = changes.sample_series(server, board, metric, since)
    return render(out_dir, "history.html", f"boardlab history: {server.lab}",
                  f"series from {server.url}/{server.project}/", series,
                  changes.find(server, samples=series), notes.read(server.data))


def render(out_dir: Path, name: str, title: str, source: str, series: dict, points: list,
           records: dict) -> Path:
    """The page: series {(metric, environment): [(build, [samples])]} in build order, their
    change points (changes.ChangePoint) and the watch's records of them (notes.json)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    found = {}
    for c in points:
        found.setdefault((c.metric, c.environment), []).append(c)
    rows, charts = [], []
    for key in sorted((k for k, v in series.items() if len(v) > 1), key=lambda k: _order(k, found)):
        png = chart(key, series[key], found.get(key, []), records,
                    out_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", f"{key[0]}@{key[1]}") + ".png"))
        charts.append(f'<h3>{html.escape(key[0])} on {html.escape(key[1])}</h3>\n'
                      f'<img alt="{html.escape(key[0])} on {html.escape(key[1])}" '
                      f'src="data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}">')
        for c in found.get(key, []):
            cells = [html.escape(str(x)) for x in (
                c.metric, c.environment, c.build, c.before, f"{c.change_pct:+.2f} %",
                f"{c.interval_pct[0]:+.2f}..{c.interval_pct[1]:+.2f} %", f"{c.pvalue:.2g}",
                note(c, records) or "-")]
            cells[-1] += report_link(records.get(notes.key(c), {}), out_dir)
            rows.append("<tr>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("metric", "environment", "from build", "after",
                                             "change", "95 % interval", "p", "what became of it"))
    path = out_dir / name
    path.write_text(
        f"<!doctype html>\n<meta charset=utf-8>\n<title>{html.escape(title)}</title>\n"
        "<style>body{font-family:sans-serif;margin:2em} table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px}</style>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        f"<p>{len(charts)} {html.escape(source)}; change points by Apache "
        "Otava (E-divisive means, t-test)</p>\n"
        f'<h2 id="changes">{len(rows)} change point(s)</h2>\n'
        + (f"<table>\n<tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>\n" if rows else "")
        + "<h2>Series</h2>\n" + "\n".join(charts) + "\n")
    return path
