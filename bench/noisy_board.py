#!/usr/bin/env python3
"""The judge's error rates on the noisy board (boards/qemu-arm-noisy.yaml: qemu-arm with the
deterministic clock off, the real board's stand-in), per family, from boots measured on it.

Measures (the real path: power switch, U-Boot, TFTP, ser2net, the strategy; figures by
boardlab.measure.sample): --boots boots of boot_time and memory, then --slow-boots of every
family (lmbench quick, jitter --jitter-s s under load; their boot_time and memory count
too). Every boot is kept (--out, JSON: host, date, each boot's clock) and written as one
run (results/bench-noisy-<board>/run) that `boardlab baselines update` pools.

Then judges, per family, from those samples only (resampled: the pool bounds how
independent the rounds are): --rounds A/A rounds, a stored baseline of the pool's other
boots against boots drawn one at a time without replacement through the gate's own loop
(boardlab.judge.gate.Gate.sample: verdict.sample_until_decided, out_of_reach and the
judge, boardlab.judge.decide), up to --max-repeats boots; a false alarm is any metric of
the family regressed or improved. Then as many rounds with every metric of B shifted by
twice its floor in its worse direction: found when the metric is called regressed. Each
round's boots are the verdict's cost. Three ways side by side: 'this board' (a virtual
board: its realtime figures are bound to the host, and a change against a stored
baseline stays unknown, judge rule 7), 'this board, paired' (as `boardlab compare` judges
it: boots next to each other in time taken as A and B in turn, compare's own stopping
rule; both sides' boots counted) and 'a real board' (the stored-baseline rounds judged
with the board's facts without their qemu section: how the judge treats a real board's
own clock). --samples judges a saved file again, no boots.
    .venv/bin/python bench/noisy_board.py [--boots 30] [--slow-boots 12] [--jitter-s 10]
        [--rounds 20] [--max-repeats 5] [--samples FILE] [--families boot_time,memory,...]
        [--board qemu-arm --load perboot:1]   # the known-noise stand-in at one level
--load sets the board's load at its power switch for every boot (boardlab vlab load; none
again at the end): the known-noise stand-in is qemu-arm on its deterministic clock with a
load whose spread is stated (boardlab/facts/loads.py).
Goals (issue "Answers that hold on a real board", item 2): A/A false alarms at most 1 of 20
per family; shifts of twice the floor found in at least 19 of 20; the boots each costs."""
import argparse
import concurrent.futures
import contextlib
import dataclasses
import os
import json
import random
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.board import load_board
from boardlab.judge import verdict as vd
from boardlab.judge.gate import Gate
from boardlab.judge.results import RunResults
from boardlab.measure import catalogue, clocks, hostload

FAMILIES = ("boot_time", "memory", "lmbench", "jitter", "hackbench")
FAST = ("boot_time", "memory")
TARGET = {"boot_time": "boot_time.guest_login", "memory": "memory.free_free_kb",
          "lmbench": "lmbench.lat_pipe_us", "jitter": "jitter.p99_us", "hackbench": "hackbench.time_s"}
KERNEL = "armmp"
PROGRESS = ("boot_time.guest_login", "lmbench.lat_pipe_us", "jitter.p99_us")   # a boot's progress line
WAYS = ("this board", "this board, paired", "a real board")


# ---- the pure core: rounds through the gate from saved boots -------------------------------
def judged_keys(boots: list, family: str) -> list:
    """The family's metrics that every one of `boots` has and the judge judges."""
    return [s.key for s in catalogue.of_suite(family)
            if not s.not_judged and boots and all(s.key in b for b in boots)]


def worse_by(key: str, floors: float, a_values) -> float:
    """`floors` times the metric's floor (at A's median) in its worse direction."""
    spec = catalogue.spec(key)
    step = floors * spec.floor(statistics.median(a_values))
    return step if spec.direction == "lower" else -step


def settings_of(family: str, jitter_s) -> dict | None:
    """How the suite says it measured (a jitter run's length changes its max)."""
    return {"run_s": jitter_s} if family == "jitter" and jitter_s else None


def gate_round(board, family, keys, a_boots, b_boots, shift_floors, max_repeats, work: Path,
               clock: str, settings=None) -> tuple[dict, int]:
    """One comparison through the gate: the baseline pooled from a_boots (as `baselines
    update` pools a run), then b_boots taken one at a time by Gate.sample until decided or
    max_repeats, each figure of B shifted by shift_floors of its floor (worse) -> ({metric:
    verdict}, boots taken)."""
    kernels = work / "kernels"
    base = RunResults(work / "a", baselines_root=kernels)
    for key in keys:
        suite, name = key.split(".", 1)
        values = [b[key] for b in a_boots]
        base.record(board, KERNEL, suite, name, statistics.median(values), samples=values,
                    qemu_clock=clock, settings=settings)
    base.update_baselines()
    shift = {k: worse_by(k, shift_floors, [b[k] for b in a_boots]) if shift_floors else 0.0 for k in keys}
    strategy = SimpleNamespace(board=board, last_boot=SimpleNamespace(qemu_clock=clock),
                               kernel_under_test=SimpleNamespace(name=KERNEL), kernel_identity=dict)
    gate = Gate(RunResults(work / "b", baselines_root=kernels), strategy, "bench::round",
                max_repeats=max_repeats)
    drawn = iter(b_boots)

    def one_boot():
        boot = next(drawn)
        return {k: boot[k] + shift[k] for k in keys}

    recorded = gate.sample(family, one_boot, settings=settings)
    return {m.key: m.verdict for m in recorded}, max(len(m.samples) for m in recorded)


def as_real_board(board):
    """The board's facts as a real board's (no qemu section): its clock is its own."""
    return dataclasses.replace(board, qemu=None)


def rounds(board, boots: list, family: str, n_rounds: int, max_repeats: int, shift_floors: float,
           seed: int = 1, clock: str = "realtime", jitter_s=None, stored: int | None = None) -> dict:
    """n_rounds comparisons of one family: each draws max_repeats boots for B and keeps the
    rest (or `stored` of them, as many as the lab's baseline holds) as the stored baseline
    (disjoint: A/A, or B shifted by shift_floors floors) ->
    {"verdicts": [{metric: verdict}], "boots": [boots taken], "keys": [...]}."""
    keys = judged_keys(boots, family)
    rng = random.Random(seed)
    out = {"verdicts": [], "boots": [], "keys": keys}
    if not keys or len(boots) <= max_repeats + 2:   # a baseline of 3 boots at least
        return out
    for i in range(n_rounds):
        order = rng.sample(boots, len(boots))
        b_boots, a_boots = order[:max_repeats], order[max_repeats:][:stored]
        with tempfile.TemporaryDirectory() as work:
            verdicts, taken = gate_round(board, family, keys, a_boots, b_boots, shift_floors, max_repeats,
                                         Path(work), clock, settings_of(family, jitter_s))
        out["verdicts"], out["boots"] = out["verdicts"] + [verdicts], out["boots"] + [taken]
        _progress(family, "stored baseline" if board.virtual else "a real board", shift_floors, i, n_rounds)
    return out


COMPARE_AT_LEAST = 5   # boardlab compare's --repeats default: rounds before it may stop


def paired_rounds(board, boots: list, family: str, n_rounds: int, max_repeats: int, shift_floors: float,
                  seed: int = 1, clock: str = "realtime", jitter_s=None) -> dict:
    """n_rounds comparisons as `boardlab compare` judges this board (both sides booted in
    turn, judge rule 7 satisfied): round i of a comparison takes two boots next to each other
    in time (the pool's order; which is A drawn at random), B's shifted by shift_floors
    floors, until compare.still_open finds nothing more rounds could decide, at least
    COMPARE_AT_LEAST and at most max_repeats rounds (fewer if the pool is short) ->
    rounds()'s record, boots counting both sides."""
    from boardlab.ab.compare import Side, judge, still_open
    keys, rng = judged_keys(boots, family), random.Random(seed)
    out = {"verdicts": [], "boots": [], "keys": keys}
    most = min(max_repeats, len(boots) // 2)
    if not keys or most < COMPARE_AT_LEAST:
        return out
    host, settings = clocks.this_host()["id"], settings_of(family, jitter_s)
    shift = {k: worse_by(k, shift_floors, [b[k] for b in boots]) for k in keys}
    for i in range(n_rounds):
        sides = [Side(label, kernel=label, host=host, settings={k: settings for k in keys}, clocks={
            k: clocks.metric_clock(*k.split(".", 1), catalogue.spec(k).unit, board, clock) for k in keys})
            for label in "AB"]
        start, taken = rng.randrange(len(boots)), 0

        def one_round():
            nonlocal taken
            pair = [boots[(start + 2 * taken + j) % len(boots)] for j in (0, 1)]
            a, b = pair if rng.random() < 0.5 else pair[::-1]
            sides[0].add({k: a[k] for k in keys})
            sides[1].add({k: b[k] + shift[k] for k in keys})
            taken += 1

        rounds_taken = vd.sample_until_decided(one_round, lambda: not still_open(sides, host, board, most)[1],
                                               COMPARE_AT_LEAST, most)
        verdicts = {r.spec.key: r.cmp.outcome if r.cmp else r.note for r in judge(*sides, host, board)}
        out["verdicts"], out["boots"] = out["verdicts"] + [verdicts], out["boots"] + [2 * rounds_taken]
        _progress(family, "paired", shift_floors, i, n_rounds)
    return out


def _progress(family, way, shift_floors, i, n_rounds):
    if (i + 1) % 5 == 0 or i + 1 == n_rounds:
        print(f"  judged {family}, {way}, {'shifted' if shift_floors else 'A/A'}: {i + 1} of {n_rounds} rounds",
              flush=True)


def tally(aa: dict, shifted: dict, family: str) -> dict:
    """The figures of a family's rounds: false alarms, A/A verdicts, found per metric, boots."""
    alarms = sum(any(v in (vd.REGRESSED, vd.IMPROVED) for v in r.values()) for r in aa["verdicts"])
    found = {k: sum(r.get(k) == vd.REGRESSED for r in shifted["verdicts"]) for k in shifted["keys"]}
    target = TARGET[family] if TARGET[family] in found else next(iter(found), None)
    every = sum(all(v == vd.REGRESSED for v in r.values()) for r in shifted["verdicts"])
    aa_same = {k: sum(r.get(k) == vd.SAME for r in aa["verdicts"]) for k in aa["keys"]}
    aa_alarms = {k: sum(r.get(k) in (vd.REGRESSED, vd.IMPROVED) for r in aa["verdicts"]) for k in aa["keys"]}

    def cost(b): return (statistics.mean(b), max(b)) if b else (float("nan"), 0)  # noqa: E704
    return {"rounds": len(aa["verdicts"]), "alarms": alarms, "aa_same": aa_same, "aa_alarms": aa_alarms,
            "aa_boots": cost(aa["boots"]), "found": found, "target": target,
            "every": every, "shift_boots": cost(shifted["boots"]), "shifted_rounds": len(shifted["verdicts"])}


def way_of(way: str):
    """The rounds function a way is judged by."""
    return paired_rounds if way == WAYS[1] else rounds


def _call(judged_by, *args):
    return judged_by(*args)


def judge_all(board, data: dict, n_rounds: int, max_repeats: int, families, jobs: int = 1) -> dict:
    """{way: {family: tally}} for every way of judging the board's samples (jobs: processes)."""
    pools = {f: [b["figures"] for b in data["boots"] if f in b["families"]] for f in families}
    tasks = [(w, f, floors) for f in sorted(families, key=lambda f: f != "lmbench") for w in WAYS for floors in (0, 2)]
    args = [(way_of(w), board if w != WAYS[2] else as_real_board(board), pools[f], f, n_rounds, max_repeats,
             floors, 1 + floors // 2, data["clock"], data.get("jitter_s")) for w, f, floors in tasks]
    # the workers leave Ctrl-C to this process, which says what is kept (main)
    with concurrent.futures.ProcessPoolExecutor(jobs, initializer=signal.signal,
                                                initargs=(signal.SIGINT, signal.SIG_IGN)) \
            if jobs > 1 else contextlib.nullcontext() as ex:
        done = dict(zip(tasks, (ex.map if ex else map)(_call, *zip(*args))))
    return {w: {f: tally(done[(w, f, 0)], done[(w, f, 2)], f) | {"pool": len(pools[f])}
                for f in families if done[(w, f, 0)]["verdicts"]} for w in WAYS}


def spread_table(data: dict, families) -> list[str]:
    """Per metric: the pool, median, min-max and CV (stdev / mean): the noise stated."""
    lines = ["| metric | boots | median | min - max | CV |", "|---|---:|---:|---:|---:|"]
    for family in families:
        have = [b["figures"] for b in data["boots"] if family in b["families"]]
        for key in judged_keys(have, family):
            v = [b[key] for b in have]
            cv = statistics.stdev(v) / abs(statistics.mean(v)) * 100 if len(v) > 1 and statistics.mean(v) else 0.0
            lines.append(f"| {key} | {len(v)} | {statistics.median(v):.6g} | {min(v):.6g} - {max(v):.6g} | "
                         f"{cv:.2f} % |")
    return lines


def table(results: dict, data: dict, rounds_n: int, max_repeats: int) -> list[str]:
    """The bench's table: per way and family, A/A false alarms, shifts found, boots."""
    lines = [f"board {data['board']}, clock {data['clock_words']}, host {data['host']}, measured "
             f"{data['date']}: {len(data['boots'])} boots ({data['summary']})",
             f"{rounds_n} rounds a family and way, B drawn boot by boot through the gate's loop, at most "
             f"{max_repeats} boots, the rest of the pool the stored baseline (resampled rounds); paired: rounds "
             f"of two boots next to each other in time, {COMPARE_AT_LEAST} to {max_repeats}, both sides' boots "
             f"counted", "",
             "| judged as | family | pool | A/A false alarms | A/A boots mean / max | shift 2 x floor: target found "
             "| every metric found | shift boots mean / max |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for way, fams in results.items():
        for family, t in fams.items():
            lines.append(
                f"| {way} | {family} | {t['pool']} | {t['alarms']} of {t['rounds']} | "
                f"{t['aa_boots'][0]:.1f} / {t['aa_boots'][1]} | {t['target']}: {t['found'].get(t['target'], 0)} "
                f"of {t['shifted_rounds']} | {t['every']} of {t['shifted_rounds']} | "
                f"{t['shift_boots'][0]:.1f} / {t['shift_boots'][1]} |")
    lines += ["", "per metric: shifted rounds found (regressed), A/A rounds 'same' and A/A false alarms "
                  "(regressed or improved), by way", "",
              "| metric | " + " | ".join(f"found ({w}) | A/A same ({w}) | A/A alarms ({w})" for w in results) + " |",
              "|---|" + "---:|" * (3 * len(results))]
    for key in [k for t in next(iter(results.values()), {}).values() for k in t["found"]]:
        fam = key.split(".")[0]
        cells = []
        for t in results.values():
            f = t.get(fam)
            cells += [f"{f[col].get(key, 0)}" if f else "-" for col in ("found", "aa_same", "aa_alarms")]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return lines


# ---- the measurement: boots of the noisy board ----------------------------------------------
def measure(args, board) -> dict:
    """Boots of the board -> the saved data: every boot's figures and the clock it ran on."""
    from boardlab.boot.session import board_session
    from boardlab.measure import sample
    from boardlab.vlab.lab import kept_up
    run_dir = ROOT / f"results/bench-noisy-{board.name}"
    boots, t_start = [], time.monotonic()
    data = {"board": board.name, "kernel": KERNEL, "host": clocks.this_host()["id"], "host_info": clocks.this_host(),
            "date": time.strftime("%Y-%m-%d"), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "jitter_s": args.jitter_s, "clock": board.qemu.clock, "load": args.load, "boots": boots}
    out = Path(args.out)
    with kept_up("vlab", boards=[board.name]), _load_at_switch(board, args.load), \
            board_session(ROOT / f"lab/{board.name}.yaml", run_dir) as (strategy, shell):
        strategy.select(kernel="", root="ramdisk", ramdisk="")
        strategy.transition("shell")
        families, lacking = sample.measurable(shell(), list(args.families.split(",")))
        print("".join(f"{board.name}: no {fam} figures: {why}\n" for fam, why in lacking.items()), end="")
        data["identity"] = strategy.kernel_identity()
        plan = [[f for f in families if f in FAST]] * args.boots + [families] * args.slow_boots
        for i, fams in enumerate(plan):
            t0, ticks = time.monotonic(), hostload.cpu_ticks()
            figures, extras = sample.one_sample(strategy, shell, fams, args.jitter_s)
            clock = extras["boot"].qemu_clock
            if clock != board.qemu.clock:
                raise SystemExit(f"boot {i + 1} ran on the {clock} clock, not {board.qemu.clock}: "
                                 f"`boardlab vlab clock` switched the lab's boards (set it back)")
            boots.append({"families": fams, "clock": clock, "host_s": round(time.monotonic() - t0, 1),
                          "host": hostload.share(ticks, hostload.cpu_ticks()), "figures": figures})
            data["measure_min"] = round((time.monotonic() - t_start) / 60, 1)
            out.write_text(json.dumps(data, indent=1) + "\n")   # every boot kept as it comes
            print(f"  boot {i + 1}/{len(plan)} ({','.join(fams)}): {time.monotonic() - t0:.0f} s, "
                  + ", ".join(f"{k.split('.')[1]} {figures[k]:.4g}" for k in PROGRESS if k in figures)
                  + ", host {busy_pct} % busy, {steal_pct} % stolen".format(**boots[-1]["host"]), flush=True)
    write_run(board, data, run_dir / "run")
    return data


@contextlib.contextmanager
def _load_at_switch(board, load: str):
    """The board's load for every boot of the bench, none again after it."""
    from boardlab.vlab.boardload import at_switch
    if load == "none":
        yield
        return
    at_switch(board, load)
    try:
        yield
    finally:
        at_switch(board, "none")


def write_run(board, data: dict, run: Path) -> Path:
    """The boots as one run (results.json, every sample of every metric) for `boardlab
    baselines update`: the baseline's source then says host, date, clock and runs."""
    results = RunResults(run)
    if data.get("identity"):
        results.identify(board.name, KERNEL, data["identity"])
    for family in FAMILIES:
        have = [b["figures"] for b in data["boots"] if family in b["families"]]
        for key in judged_keys(have, family) + [s.key for s in catalogue.of_suite(family) if s.not_judged]:
            values = [b[key] for b in have if key in b]
            if values:
                suite, name = key.split(".", 1)
                results.record(board, KERNEL, suite, name, statistics.median(values), samples=values,
                               test=f"bench/noisy_board.py::{family}", qemu_clock=data["clock"],
                               settings=settings_of(family, data.get("jitter_s")))
    return print(f"run: {run} (boardlab baselines update {run})") or run


def describe(data: dict, board) -> dict:
    """The clock in words and what was measured, for the table's head."""
    clock = data["boots"][0]["clock"] if data["boots"] else board.qemu.clock
    data["clock"] = clock
    data["clock_words"] = (f"QEMU {clock}: guest-time figures {clocks.guest_clock(board, clock)}, "
                           f"boot milestones host arrival (host), memory none")
    fast = sum(1 for b in data["boots"] if set(b["families"]) <= set(FAST))
    data["summary"] = (f"{fast} of boot_time and memory, {len(data['boots']) - fast} of every family "
                       f"(lmbench quick, jitter {data.get('jitter_s')} s); "
                       f"{sum(b['host_s'] for b in data['boots']) / 60:.1f} min of boots")
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm-noisy", help="the noisy virtual board (lab/<board>.yaml)")
    ap.add_argument("--boots", type=int, default=30, help="boots of boot_time and memory")
    ap.add_argument("--slow-boots", type=int, default=12, help="boots of every family (lmbench, jitter too)")
    ap.add_argument("--jitter-s", type=int, default=10, help="cyclictest seconds a boot")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--max-repeats", type=int, default=5, help="the gate's budget of boots (the suites' default)")
    ap.add_argument("--out", help="where the boots are kept (default bench/data/noisy-<board>-<date>.json)")
    ap.add_argument("--samples", help="judge boots a former run kept (its --out), no boots")
    ap.add_argument("--load", default="none", help="the board's load for every boot (none, perboot:L, "
                                                   "bursts:L, steady:P: boardlab/facts/loads.py)")
    args = ap.parse_args()
    board = load_board(args.board)
    if args.samples:
        data = json.loads(Path(args.samples).read_text())
    else:
        load = "" if args.load == "none" else "-" + args.load.replace(":", "")
        args.out = args.out or str(ROOT / f"bench/data/noisy-{board.name}{load}-{time.strftime('%Y-%m-%d')}.json")
        started = time.time()
        try:
            data = measure(args, board)
        except KeyboardInterrupt:   # the session has switched the board off and the lab down
            out = Path(args.out)
            kept = len(json.loads(out.read_text())["boots"]) if out.exists() and out.stat().st_mtime >= started else 0
            print(f"\nstopped: {kept} boots kept in {args.out}; judge them with --samples {args.out}",
                  file=sys.stderr)
            sys.exit(130)
        print(f"boots kept: {args.out}")
    describe(data, board)
    families = [f for f in args.families.split(",") if any(f in b["families"] for b in data["boots"])]
    t0 = time.monotonic()
    try:
        results = judge_all(board, data, args.rounds, args.max_repeats, families, os.cpu_count() or 1)
    except KeyboardInterrupt:
        print(f"\nstopped while judging; the boots are kept in {args.samples or args.out}", file=sys.stderr)
        sys.exit(130)
    print("\n" + "\n".join(table(results, data, args.rounds, args.max_repeats)))
    print("\nthe noise: each metric over the boots that measured it\n")
    print("\n".join(spread_table(data, families)))
    print(f"\njudged in {time.monotonic() - t0:.0f} s on {clocks.this_host()['id']}")


if __name__ == "__main__":
    main()
