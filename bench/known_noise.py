#!/usr/bin/env python3
"""The known-noise stand-in's goals, per family and level, from boots kept by
bench/noisy_board.py (--board qemu-arm --load perboot:L: one pool of boots a level):

- the MDC: the smallest change the board decides in the budget (judge/mdc.py, from the
  pool's own spread, as `lab status --mdc` states it from a baseline's), and a shift of
  exactly that found in how many of --rounds rounds (goal: at least 16 of 20; an exact
  figure's MDC is a bound, a change beyond it decided in one boot: shifted 0.1 % past it);
- A/A false alarms and a shift of twice the floor found, through the gate's own loop
  (noisy_board.rounds: boots drawn one at a time until decided, at most the budget);
- boots per decided answer against a fixed count: the smallest n that, judging exactly n
  boots once, reaches the same rates (A/A alarms no more, A/A rounds decided `same` in
  every metric no fewer: an unknown is no answer, 2 x floor found no fewer), and what the
  loop saves against it (goal: at least 30 % fewer); then the same with every rate the
  goals name, a shift of the MDC found no fewer too, against the loop's boots over all
  three kinds of round (A/A, the MDC, 2 x floor).

Runs of one level (board, load size, clock, host, kernel) are pooled: a level measured
again with other seeds (`--load perboot:1@3807`) adds its boots to the first run's.
Rounds are resampled from one pool (B drawn, the rest, or --stored boots of it, the stored
baseline), so they are
not independent of each other: the pool bounds them, and the bench says its size.

    .venv/bin/python bench/known_noise.py bench/data/noisy-qemu-arm-perboot1-2026-12-07.json ...
        [--rounds 20] [--max-repeats 5] [--families lmbench,jitter,hackbench,memory,boot_time]"""
import argparse
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import noisy_board as nb  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.judge import mdc  # noqa: E402
from boardlab.judge import verdict as vd  # noqa: E402
from boardlab.judge.decide import Figures, decide  # noqa: E402
from boardlab.measure import catalogue, clocks  # noqa: E402


def target_mdc(board, pool: list, family: str, budget: int, clock: str, host: str,
               stored: int | None = None) -> mdc.Detectable:
    """The family's target metric's MDC from the pool's spread (its first `stored` boots: a
    baseline of the lab's size), as lab status states it."""
    key, pool = nb.TARGET[family], pool[:stored]
    spec = catalogue.spec(key)
    stored = Figures([b[key] for b in pool], clocks.metric_clock(family, spec.name, spec.unit, board, clock), host)
    return mdc.detectable(spec, stored, budget, board)


def fixed_count(board, pool: list, family: str, n: int, n_rounds: int, shift_floors: float, clock: str,
                budget: int, host: str, stored: int | None = None,
                mdc_floors: float | None = None) -> tuple[int, int, int, int]:
    """(A/A rounds with a false alarm in the family, A/A rounds every metric same, shifted
    rounds whose target is found, MDC-shifted rounds whose target is found)
    judging exactly n boots of B once, by the one judge, against the loop's stored baseline:
    the fixed count's error rates on the loop's own rounds (the same draws: seed 1 the A/A
    rounds, seed 2 the shifted ones, seed 3 the MDC's, as level() asks noisy_board.rounds),
    so the two are compared round by round, not across two resamplings."""
    keys = nb.judged_keys(pool, family)
    alarms = same = 0
    found = {2: 0, 3: 0}   # by the rounds' seed: the MDC may be twice the floor too
    for shift, seed in ((0, 1), (shift_floors, 2)) + (((mdc_floors, 3),) if mdc_floors else ()):
        rng = random.Random(seed)
        for _ in range(n_rounds):
            order = rng.sample(pool, len(pool))
            b_boots, a_boots = order[:n], order[budget:][:stored]
            outcomes = {}
            for key in keys:
                spec = catalogue.spec(key)
                clk = clocks.metric_clock(family, spec.name, spec.unit, board, clock)
                a = [x[key] for x in a_boots]
                moved = nb.worse_by(key, shift, a) if shift else 0.0
                outcomes[key] = decide(spec, Figures(a, clk, host), Figures([x[key] + moved for x in b_boots], clk, host),
                                       board).outcome
            if shift:
                found[seed] += outcomes.get(nb.TARGET[family]) == vd.REGRESSED
            else:
                alarms += any(v in (vd.REGRESSED, vd.IMPROVED) for v in outcomes.values())
                same += all(v == vd.SAME for v in outcomes.values())
    return alarms, same, found[2], found[3]


def _level_of(data: dict) -> tuple:
    """What must match for two runs' boots to be one pool: board, load (its size, not its
    seed: a later run takes other seeds), clock, host and kernel."""
    load = data.get("load", "none").split("@")[0]
    return data["board"], load, data["clock"], data["host"], data.get("identity", {}).get("uimage_sha256")


def pooled(paths) -> list[tuple[str, dict]]:
    """The runs' boots, one pool per level (_level_of): a level measured again with other
    seeds (noisy_board.py --load perboot:L@SEED) joins the first run's boots."""
    levels: dict[tuple, tuple[list, dict]] = {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        names, first = levels.setdefault(_level_of(data), ([], {**data, "boots": []}))
        names.append(Path(path).name)
        first["boots"] = first["boots"] + data["boots"]
        first["load"] = _level_of(data)[1]
    return [(" + ".join(names), data) for names, data in levels.values()]


def level(name: str, data: dict, families, n_rounds: int, budget: int, stored: int | None) -> list[str]:
    board = load_board(data["board"])
    clock, host = data["clock"], data["host"]
    lines = [f"{name}: board {data['board']}, load {data.get('load', 'none')}, {len(data['boots'])} boots, "
             f"clock {clock} (QEMU; figures guest-deterministic), host {host}, measured {data['date']}; "
             f"{n_rounds} rounds resampled from the pool, budget {budget} boots, stored baseline "
             + (f"{stored} boots" if stored else "the pool's other boots"), "",
             "| family | target | floor | MDC | MDC shift found | A/A alarms | A/A all same | 2 x floor found "
             "| loop boots A/A, shift | fixed n for the same rates | boots saved "
             "| loop boots A/A, MDC, 2 x floor | fixed n for every rate | boots saved |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for family in families:
        pool = [b["figures"] for b in data["boots"] if family in b["families"]]
        if len(pool) <= budget + 2:
            continue
        d = target_mdc(board, pool, family, budget, clock, host, stored)
        floors, r, hit = None, {"boots": []}, 0
        if d.mdc_pct is None:
            mdc_cell, found_mdc = "none in budget", "-"
        else:
            floors = d.mdc_pct / d.floor_pct * (1.001 if d.how.startswith("exact") else 1)
            r = nb.rounds(board, pool, family, n_rounds, budget, floors, 3, clock, stored=stored)
            hit = sum(v.get(nb.TARGET[family]) == vd.REGRESSED for v in r["verdicts"])
            mdc_cell, found_mdc = f"{d.mdc_pct:.3g} %", f"{hit} of {len(r['verdicts'])}"
        aa = nb.rounds(board, pool, family, n_rounds, budget, 0, 1, clock, stored=stored)
        sh = nb.rounds(board, pool, family, n_rounds, budget, 2, 2, clock, stored=stored)
        t = nb.tally(aa, sh, family)
        loop_mean = statistics.mean(aa["boots"] + sh["boots"])
        loop_same = sum(all(v == vd.SAME for v in r.values()) for r in aa["verdicts"])
        rates = {n: fixed_count(board, pool, family, n, n_rounds, 2, clock, budget, host, stored=stored,
                                mdc_floors=floors)
                 for n in range(1, budget + 1)}
        fixed = next((n for n, (a, s_, f, _) in rates.items()
                      if a <= t["alarms"] and s_ >= loop_same and f >= t["found"][nb.TARGET[family]]), None)
        every = next((n for n, (a, s_, f, fm) in rates.items() if a <= t["alarms"] and s_ >= loop_same
                      and f >= t["found"][nb.TARGET[family]] and fm >= hit), None)
        loop_every = statistics.mean(aa["boots"] + r["boots"] + sh["boots"])
        mdc_boots = f"{statistics.mean(r['boots']):.1f}" if r["boots"] else "-"
        notes.append(f"- {family}, a fixed count of n boots (A/A alarms, A/A all same, 2 x floor found, MDC found, "
                     f"of {n_rounds}): " + "; ".join(f"n={n}: {a}, {s_}, {f}, {fm if floors else '-'}"
                                                     for n, (a, s_, f, fm) in rates.items()))
        lines.append(f"| {family} | {nb.TARGET[family]} | {d.floor_pct:.3g} % | {mdc_cell} | {found_mdc} | "
                     f"{t['alarms']} of {t['rounds']} | {loop_same} of {t['rounds']} | "
                     f"{t['found'][nb.TARGET[family]]} of {t['shifted_rounds']} | "
                     f"{statistics.mean(aa['boots']):.1f}, {statistics.mean(sh['boots']):.1f} | "
                     f"{fixed if fixed else 'none up to the budget'} | {_saved(loop_mean, fixed)} | "
                     f"{statistics.mean(aa['boots']):.1f}, {mdc_boots}, {statistics.mean(sh['boots']):.1f} | "
                     f"{every if every else 'none up to the budget'} | {_saved(loop_every, every)} |")
    return lines + [""] + notes


def _saved(loop_mean: float, fixed: int | None) -> str:
    return f"{100 * (1 - loop_mean / fixed):.0f} %" if fixed else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pools", nargs="+", help="boots kept by bench/noisy_board.py (its --out)")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--max-repeats", type=int, default=mdc.DEFAULT_BUDGET, help="the budget of boots")
    ap.add_argument("--families", default="boot_time,memory,lmbench,jitter,hackbench")
    ap.add_argument("--stored", type=int, default=None,
                    help="boots of the stored baseline a round judges against (the lab's hold 10: "
                         "kernels/armmp/qemu-arm.yaml); default: the pool less the budget")
    args = ap.parse_args()
    for name, data in pooled(args.pools):
        print("\n".join(level(name, data, args.families.split(","), args.rounds, args.max_repeats, args.stored)) + "\n",
              flush=True)


if __name__ == "__main__":
    main()
