"""The figures of a run: latency over time (the realfeel figure of the 2005 article)
and the latency histogram with a log count axis (as OSADL plots it)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def latency_over_time(series, path: Path, title: str):
    """series: (seconds, max latency us in that slice)."""
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.plot([t for t, _ in series], [v for _, v in series], lw=0.8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("max latency [us]")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def latency_histogram(counts: dict, path: Path, title: str):
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    xs = sorted(counts)
    ax.bar(xs, [counts[x] for x in xs], width=max(1, (xs[-1] - xs[0]) / 200 if xs else 1))
    ax.set_yscale("log")
    ax.set_xlabel("latency [us]")
    ax.set_ylabel("samples (log)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
