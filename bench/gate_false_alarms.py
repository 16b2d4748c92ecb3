#!/usr/bin/env python3
"""A figure that takes two values from boot to boot, through the gate: how often an
unchanged kernel is called regressed, left unknown or same, and the boots it takes. No
board: every run of up to --max-repeats boots (each boot one value or the other) goes
through the gate (boardlab.judge.gate, the judge, the loop that samples until decided)
against the stored baseline's samples, and is weighed by how often the second value comes
(q; q = 1: a kernel that reads it on every boot, which should be called). Two rules side
by side: 'before' (until 2026-11-28: a change the rank test calls from all the samples)
and 'after' (a change must be seen twice: on the first half of the samples and on all).
    .venv/bin/python bench/gate_false_alarms.py [--board qemu-ppc] [--kernel virt-nfs]
        [--metric memory.mem_eat_kb] [--q 0.13,0.2,1] [--max-repeats 5]
Figures are exact for the baseline and rule given; how often the second value really
comes is measured on the board (docs/powerpc.md)."""
import argparse
import collections
import contextlib
import itertools
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.board import load_board
from boardlab.judge import verdict
from boardlab.measure import baselines
from boardlab.judge.gate import Gate
from boardlab.judge.results import RunResults


@contextlib.contextmanager
def rule(name: str):
    """'after': the rule as it is; 'before': compare() without the seen-twice step."""
    if name == "after":
        yield
        return
    kept = verdict.compare
    verdict.compare = lambda a, b, spec, alpha=verdict.ALPHA, effort=1.0: verdict._compare(
        [float(x) for x in a], [float(x) for x in b], spec, alpha, effort)
    try:
        yield
    finally:
        verdict.compare = kept


def runs_through_the_gate(board, kernel, key, base, values, max_repeats, work: Path) -> dict:
    """{the samples a run took: its verdict}, for every run of up to max_repeats boots, each
    boot one of `values`, judged against the Baseline `base` (written under work)."""
    suite, name = key.split(".", 1)
    baselines.write(kernel, board.name, {key: base}, work / "kernels")
    strategy = SimpleNamespace(board=board, last_boot=None, kernel_under_test=SimpleNamespace(name=kernel),
                               kernel_identity=dict)
    runs = {}
    for i, boots in enumerate(itertools.product(values, repeat=max_repeats)):
        if any(boots[:len(s)] == s for s in runs):   # the gate stopped before this one differs
            continue
        gate = Gate(RunResults(work / f"run{i}", baselines_root=work / "kernels"), strategy, "bench::run",
                    max_repeats=max_repeats)
        it = iter(boots)
        (m,) = gate.sample(suite, lambda: {name: next(it)})
        runs[tuple(m.samples)] = m.verdict
    return runs


def weighed(runs: dict, usual: float, second: float, q: float) -> dict:
    """{outcome: how often it comes, 'boots': the mean boots}, the second value on q of boots."""
    weight = {s: q ** s.count(second) * (1 - q) ** s.count(usual) for s in runs}
    out = {o: sum(w for s, w in weight.items() if runs[s] == o) for o in verdict.OUTCOMES}
    out["boots"] = sum(w * len(s) for s, w in weight.items())
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="qemu-ppc")
    ap.add_argument("--kernel", default="virt-nfs")
    ap.add_argument("--metric", default="memory.mem_eat_kb")
    ap.add_argument("--q", default="0.13,0.2,1", help="how often the second value comes (comma separated)")
    ap.add_argument("--max-repeats", type=int, default=5)
    args = ap.parse_args()
    base = baselines.load(args.kernel, args.board).get(args.metric)
    counts = collections.Counter(base.values()) if base else {}
    if len(counts) != 2:
        print(f"kernels/{args.kernel}/{args.board}.yaml: {args.metric} has {len(counts)} values in its "
              f"samples, not two", file=sys.stderr)
        return 2
    (usual, _), (second, seen) = counts.most_common()
    print(f"{args.board} {args.kernel} {args.metric}: baseline {usual:g} on {counts[usual]} boots, "
          f"{second:g} on {seen}; runs of up to {args.max_repeats} boots through the gate")
    print("| rule | q | regressed | unknown | same | improved | boots (mean) |\n|---|---:|---:|---:|---:|---:|---:|")
    qs = [float(q) for q in args.q.split(",")]
    for name in ("before", "after"):
        with rule(name), tempfile.TemporaryDirectory() as work:
            runs = runs_through_the_gate(load_board(args.board), args.kernel, args.metric, base,
                                         (usual, second), args.max_repeats, Path(work))
        for q in qs:
            rate = weighed(runs, usual, second, q)
            print(f"| {name} | {q:g} | {rate['regressed']:.4%} | {rate['unknown']:.2%} | {rate['same']:.2%} "
                  f"| {rate['improved']:.2%} | {rate['boots']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
