"""The study's own 2.4.25 -> 2.6.11.7 changes beside a pair of today's kernels: what
moved then on the real PowerPC boards, and what moves now. A virtual e500mc is not an
MPC860: the table compares changes (signs and sizes), never absolute figures, and each
column says its boards and its clock."""
from __future__ import annotations

from pathlib import Path

from boardlab.judge import reference
from boardlab.measure import families

STUDY_COLUMN = ("the study, 2.4.25 -> 2.6.11.7: TQM860L (MPC860T, 50 MHz) and Sandpoint (MPC8240, "
                "132 MHz), real boards, their own time" + "".join(
                    f" ({f.study_note})" for f in families.FAMILIES if f.study_note))


def _pct(v: float) -> str:
    return f"{v:+.0f} %"


def study_changes(path: Path = reference.REFERENCE) -> dict[str, str]:
    """{catalogue key: the study's 2.4.25 -> 2.6.11.7 change, in words}: per board where it
    measured each board (build, boot, memory), and as a family's record reads the study's
    pooled figures (its `study_changes`)."""
    data = reference._load_reference(path)
    out: dict[str, list[str]] = {}
    for board, kernels in data["results"].items():
        if board not in data["boards"] or not {"2.4.25", "2.6.11.7"} <= set(kernels):
            continue
        old, new = (reference.study_metrics(kernels[k]) for k in ("2.4.25", "2.6.11.7"))
        for key in sorted(set(old) & set(new)):
            if old[key]:
                out.setdefault(key, []).append(f"{board} {_pct(100 * (new[key] - old[key]) / old[key])}")
    words = {}
    for f in families.FAMILIES:
        if f.study_changes:
            words.update(f.study_changes(data["results"]))
    return {**{k: ", ".join(v) for k, v in out.items()}, **words}


def table(rows, board: str, pair: str, clock_of) -> str:
    """Every metric of the pair the study also measured: this pair's change and verdict
    beside the study's. rows: compare's; clock_of(spec): a row's clock, in words."""
    study = study_changes()
    out = ["| metric | " + f"{board}, {pair} (change, verdict, clock) | {STUDY_COLUMN} |", "|---|---|---|"]
    for r in rows:
        if r.spec.key not in study:
            continue
        now = (f"{r.cmp.delta_pct:+.1f} %, {r.cmp.outcome}, {clock_of(r.spec)}" if r.cmp is not None
               else f"not judged: {r.note}")
        out.append(f"| {r.spec.key} | {now} | {study[r.spec.key]} |")
    return "\n".join(out) + "\n"
