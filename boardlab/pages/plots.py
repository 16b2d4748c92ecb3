"""The figures of a run: latency over time (the realfeel figure of the 2005 article)
and the latency histogram with a log count axis (as OSADL plots it)."""
from __future__ import annotations

from pathlib import Path

import matplotlib


def pyplot():
    """matplotlib's pyplot, set up to draw into files only (the Agg backend: no display,
    no GUI toolkit): the one place boardlab sets matplotlib up; every plot, here and in
    history.charts, is drawn with what this returns."""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


plt = pyplot()


def _finish(fig, ax, path: Path, title: str, xlabel: str, ylabel: str | None = None,
            grid="both"):
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis=grid, which="both")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def latency_over_time(series, path: Path, title: str):
    """series: (seconds, max latency us in that slice)."""
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.plot([t for t, _ in series], [v for _, v in series], lw=0.8)
    return _finish(fig, ax, path, title, "time [s]", "max latency [us]")


def latency_histogram(counts: dict, path: Path, title: str):
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    xs = sorted(counts)
    ax.bar(xs, [counts[x] for x in xs], width=max(1, (xs[-1] - xs[0]) / 200 if xs else 1))
    ax.set_yscale("log")
    return _finish(fig, ax, path, title, "latency [us]", "samples (log)")


def deltas_with_intervals(rows, path: Path, title: str):
    """Each compared metric's delta (B against A, %) with its 95 % interval as an error bar;
    the floor as a grey band. rows: (label, delta %, (lo %, hi %) or None, floor %)."""
    rows = list(rows)
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.28 * len(rows) + 1)), dpi=100)
    ys = range(len(rows))
    for y, (_, d, ci, floor) in zip(ys, rows):
        ax.fill_betweenx([y - 0.4, y + 0.4], -floor, floor, color="0.9")
        err = [[d - ci[0]], [ci[1] - d]] if ci else None
        ax.errorbar([d], [y], xerr=err, fmt="o", color="C0" if ci else "C1", capsize=3, ms=4)
    ax.set_yticks(list(ys), [r[0] for r in rows], fontsize=7)
    ax.axvline(0, color="0.5", lw=0.8)
    return _finish(fig, ax, path, title, "delta B vs A [%] (grey: the floor; orange: exact, "
                   "no interval)", grid="x")


def milestones_per_boot(sides, path: Path, title: str):
    """Every boot's milestones (s from the load command), one row of dots per side."""
    fig, ax = plt.subplots(figsize=(8, 2.8), dpi=100)
    for i, (label, boots) in enumerate(sides):
        for boot in boots:
            for name, t in boot.items():
                ax.plot(t, i, "|", ms=14, color=f"C{list(boot).index(name) % 10}")
        ax.text(0, i + 0.25, label, fontsize=8)
    names = sorted({n for _, boots in sides for b in boots for n in b})
    ax.set_yticks([])
    return _finish(fig, ax, path, title, "s from the load command (host arrival); colour: "
                   + ", ".join(names), grid="x")
