"""The sweep's answers between neighbouring versions, decided. The sweep boots each
version once (its figures for the series); one boot a side decides only what the judge
finds shown to repeat (decide.exactness: three samples that agree), and leaves the rest
unknown. For each pair of neighbours (and any pair asked for, e.g.
the two ends of the series) the families whose figures one boot left unknown are then
measured again by `boardlab compare`: both kernels booted in turn, A, B, A, B, so host
drift hits both, until every metric is decided or the budget (boots a side) is spent.
Each pair's answer is <out>/pairs/<A>..<B>/answer.md: every metric, from the interleaved
boots where they measured it, else from the single boots; every change beyond its floor,
largest first; every unknown with why and what would decide it (the interleaved boots'
own page beside it, compare.md). sweep.json remembers which pairs are decided, so a
resumed sweep does not boot them again."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from boardlab.sharing.placehold import PlaceHoldError
from boardlab.errors import BoardlabError
from boardlab.files import atomic_write
from boardlab.judge import verdict as vd
from boardlab.judge.decide import EXACT_SHOWN
from boardlab.log import progress
from boardlab.measure import clocks, sample, workloads

DEFAULT_BUDGET = 10      # boots a side: the rank test needs 5 to reach p < 0.01


@dataclass
class Pair:
    a: str                   # kernel names (registered)
    b: str
    status: str = "pending"  # judged (from the sweep's single boots), decided, failed
    open_families: tuple = ()
    counts: dict | None = None
    dir: str = ""
    why: str = ""
    budget: int = 0          # boots a side it was given (0: not kept, an older sweep)


def one_boot_answer(board, run_a: str, run_b: str):
    """The pair judged from the sweep's own runs on the board (their boots): rows, and the
    families whose metrics it left unknown (one boot each decides only where the judge
    finds exactness shown)."""
    from boardlab.ab import compare
    a, b = compare.stored_side(run_a), compare.stored_side(run_b)
    rows = compare.judge(a, b, clocks.this_host()["id"], board)
    open_families = sorted({r.spec.suite for r in rows if r.cmp and r.cmp.outcome == vd.UNKNOWN}
                           & set(sample.FAMILIES))
    return rows, tuple(open_families)


def combined(one_boot_rows, booted_rows) -> list:
    """The pair's whole answer: each metric from the interleaved boots where they measured
    it, else from the single boots (an exact figure one boot each decides)."""
    booted = {r.spec.key: r for r in booted_rows}
    return list(booted_rows) + [r for r in one_boot_rows if r.spec.key not in booted]


def write_answer(out: Path, run_a: str, run_b: str, rows) -> Path:
    """<out>/answer.md: the counts, every change beyond its floor largest first, every
    unknown with why (compare_page.answer over the combined rows)."""
    from boardlab.ab import compare
    from boardlab.pages.compare_page import answer
    a, b = compare.stored_side(run_a), compare.stored_side(run_b)
    path = Path(out) / "answer.md"
    atomic_write(path, answer(a, b, rows))
    return path


def _counts(rows) -> dict:
    judged = [r.cmp.outcome for r in rows if r.cmp is not None]
    return {o: judged.count(o) for o in vd.OUTCOMES}


def decide(board, pair: Pair, run_a: str, run_b: str, out: Path, budget: int = DEFAULT_BUDGET,
           jitter_s: int = workloads.JITTER_RUN_S) -> Pair:
    """The pair decided: from the single boots where they decide, by interleaved boots of
    the families they leave unknown otherwise."""
    from boardlab.ab import compare
    from boardlab.vlab.host import prepare_if_virtual
    rows, open_families = one_boot_answer(board, run_a, run_b)
    pair.open_families, pair.counts, pair.budget = open_families, _counts(rows), budget
    if not open_families:
        pair.status, pair.dir = "decided", str(out / "pairs" / f"{pair.a}..{pair.b}")
        write_answer(Path(pair.dir), run_a, run_b, rows)
        return pair
    pair.dir = str(out / "pairs" / f"{pair.a}..{pair.b}")
    progress(f"{pair.a} .. {pair.b}: unknown after one boot each in {', '.join(open_families)}: "
             f"booted in turn until decided, at most {budget} a side")
    try:
        _, rows, files = compare.compare(str(board_env(board)), [pair.a, pair.b], families=open_families,
                                         repeats=EXACT_SHOWN, max_repeats=max(budget, EXACT_SHOWN), jitter_s=jitter_s,
                                         out_dir=Path(pair.dir), prepare_board=prepare_if_virtual)
    except PlaceHoldError:   # the board not had at the coordinator: every pair would wait; stop
        raise
    except BoardlabError as e:
        pair.status, pair.why = "failed", str(e).splitlines()[0]
        return pair
    rows = combined(one_boot_answer(board, run_a, run_b)[0], rows)
    write_answer(Path(pair.dir), run_a, run_b, rows)
    pair.counts = _counts(rows)
    pair.status = "decided" if not pair.counts[vd.UNKNOWN] else "unknown at the budget"
    progress(f"{pair.a} .. {pair.b}: " + ", ".join(f"{n} {o}" for o, n in pair.counts.items())
             + f": {files['markdown']}")
    return pair


def board_env(board) -> Path:
    from boardlab.facts.board import env_path
    return env_path(board.name)


def load(path: Path) -> dict[tuple, Pair]:
    data = json.loads(path.read_text()) if path.exists() else {}
    return {(p["a"], p["b"]): Pair(**{**p, "open_families": tuple(p.get("open_families", ()))})
            for p in data.get("pairs", [])}


def save(path: Path, pairs: dict[tuple, Pair]) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data["pairs"] = [asdict(p) for p in pairs.values()]
    atomic_write(path, json.dumps(data, indent=1) + "\n")


def decide_all(board, measured: list, out: Path, budget: int, ends: bool = True,
               jitter_s: int | None = None) -> dict[tuple, Pair]:
    """measured: [(name, run_dir)] in version order. Every neighbouring pair, and the two
    ends, decided (pairs decided before are kept)."""
    path = out / "sweep.json"
    pairs = load(path)
    wanted = list(zip(measured, measured[1:]))
    if ends and len(measured) > 2:
        wanted.append((measured[0], measured[-1]))
    for (a, run_a), (b, run_b) in wanted:
        pair = pairs.get((a, b)) or Pair(a, b)
        if pair.status in ("decided", "unknown at the budget"):
            continue
        pairs[(a, b)] = decide(board, pair, run_a, run_b, out, budget, jitter_s or workloads.JITTER_RUN_S)
        save(path, pairs)
    return pairs


def summary(pairs: dict[tuple, Pair]) -> str:
    lines = ["| A | B | status | regressed | improved | same | unknown | answer |", "|---|---|---|---:|---:|---:|---:|---|"]
    for p in pairs.values():
        c = p.counts or {}
        lines.append(f"| {p.a} | {p.b} | {p.status}{': ' + p.why if p.why else ''} | "
                     + " | ".join(str(c.get(o, '-')) for o in (vd.REGRESSED, vd.IMPROVED, vd.SAME, vd.UNKNOWN))
                     + f" | {Path(p.dir, 'answer.md') if p.dir else '-'} |")
    return "\n".join(lines) + "\n"
