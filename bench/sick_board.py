#!/usr/bin/env python3
"""The sick board: is a board slowed by a steady load of a stated size quarantined within
two health checks, and is a well board never quarantined?

Live checks first: `boardlab lab check`'s own check (judge.health.check_board, through
labgrid as a user's script) on the board, WELL of them with no load, then SICK with the
load (`boardlab vlab load steady:P`, from the next power-on: a process on the board busy P
ms of every 100 ms of its time), the load taken off again at the end, also on an error.
Their figures are kept (`--out`). Then trials, resampled from the kept checks with a
seeded generator and judged by the board-health rule (judge.boardhealth.judge, what
`lab check` runs): a trial is a level of REFERENCE_MIN + RECENT well checks followed by
sick checks, quarantined within two if the rule says drifting after the first or the
second; a steady series is a level followed by well checks, one judgement each. Prints the
live figures per load, the detection count of TRIALS trials and the false alarms over
STEADY checks, with the clock of each figure and this host.

    .venv/bin/python bench/sick_board.py [--board qemu-arm] [--well 10] [--sick 10]
        [--load steady:10] [--trials 20] [--steady 100] [--seed 1] [--out FILE]
    .venv/bin/python bench/sick_board.py --out FILE --replay   # the trials of a kept file

Goal (issue "The board, not the kernel"): quarantined within 2 checks in at least 19 of
20 trials; 0 quarantines over 100 steady checks (at least 10 of them live)."""
import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.board import env_path, load_board  # noqa: E402
from boardlab.judge import boardhealth  # noqa: E402
from boardlab.judge.health import CheckFailed, check_board  # noqa: E402
from boardlab.measure import clocks  # noqa: E402
from boardlab.vlab.boardload import at_switch  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402


def live(board_name: str, well: int, sick: int, load: str, logs: Path) -> list[dict]:
    """The live checks: [{"load", "kernel", "figures", "clocks", "host_s"}], well ones first."""
    board = load_board(board_name)
    kept = []
    with kept_up(board.lab_host, boards=(board_name,)):
        try:
            for n, setting in enumerate(["none"] * well + [load] * sick):
                at_switch(board, setting)
                t0 = time.monotonic()
                try:
                    check = check_board(env_path(board_name), logs / f"check-{n:02d}", echo=lambda *a: None)
                except CheckFailed as e:   # out of its bands: LAVA sets such a board Bad
                    kept.append({"load": setting, "failed": str(e), "host_s": round(time.monotonic() - t0, 1)})
                    print(f"check {n + 1}/{well + sick} ({setting}): {e}", flush=True)
                    continue
                entry = boardhealth.record(board, check.kernel, check.measured, directory=logs / "history")
                kept.append({"load": setting, "kernel": check.kernel, "figures": check.measured,
                             "clocks": boardhealth.load(board_name, logs / "history")[-1]["clocks"],
                             "host_s": round(time.monotonic() - t0, 1)})
                print(f"check {n + 1}/{well + sick} ({setting}): "
                      + ", ".join(f"{k} = {v:g}" for k, v in check.measured.items())
                      + f"; {entry.line()}; {kept[-1]['host_s']} s (host clock)", flush=True)
        finally:
            at_switch(board, "none")
    return kept


def trials(kept: list[dict], load: str, n_trials: int, n_steady: int, seed: int, board) -> dict:
    """Detection within two checks over n_trials, quarantines over n_steady well checks."""
    rng = random.Random(seed)
    well = [c for c in kept if c["load"] == "none"]
    sick = [c for c in kept if c["load"] == load]
    level_n = boardhealth.REFERENCE_MIN + boardhealth.RECENT

    def entry(c, i):
        return {"at": f"t{i:04d}", "kernel": c["kernel"], "figures": c["figures"], "clocks": c["clocks"]}

    def quarantined(history, c) -> bool:
        """The check's board quarantined: out of its bands (Bad), or drifting from its level."""
        if "failed" in c:
            return True
        history.append(entry(c, len(history)))
        return boardhealth.judge(history, board).state == boardhealth.DRIFTING

    passed = [c for c in well if "failed" not in c]
    found = []
    for _ in range(n_trials):
        history = [entry(rng.choice(passed), i) for i in range(level_n)]
        found.append(next((k for k in (1, 2) if quarantined(history, rng.choice(sick))), None))
    alarms = 0
    history = [entry(rng.choice(passed), i) for i in range(level_n)]
    for _ in range(n_steady):
        if quarantined(history, rng.choice(well)):
            alarms += 1
            history = history[:level_n]   # as `lab accept` would start its level again
    return {"quarantined_within_2": sum(1 for w in found if w), "trials": n_trials,
            "first_check": sum(1 for w in found if w == 1), "steady_checks": n_steady,
            "steady_quarantines": alarms, "live_well": len(well), "live_sick": len(sick)}


def table(kept: list[dict], load: str) -> list[str]:
    lines = []
    for setting in ("none", load):
        failed = [c for c in kept if c["load"] == setting and "failed" in c]
        if failed:
            lines.append(f"  {setting:12} {len(failed)} checks out of their bands: {failed[0]['failed']}")
        checks = [c for c in kept if c["load"] == setting and "failed" not in c]
        if not checks:
            continue
        for key in sorted({k for c in checks for k in c["figures"]}):
            vals = [c["figures"][key] for c in checks if c["figures"].get(key) is not None]
            clock = checks[0]["clocks"].get(key)
            lines.append(f"  {setting:12} {key:30} median {statistics.median(vals):12g}  "
                         f"range {min(vals):g}..{max(vals):g}  n={len(vals)}  "
                         + (f"({clock} clock)" if clock and clock != "none" else "(a size: no clock)"))
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--well", type=int, default=10, help="live checks with no load (default 10)")
    ap.add_argument("--sick", type=int, default=10, help="live checks with the load (default 10)")
    ap.add_argument("--load", default="steady:10", help="the sick board's load (default steady:10)")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--steady", type=int, default=100, help="well checks judged one by one (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="the live checks kept (JSON); --replay reads it")
    ap.add_argument("--replay", action="store_true", help="no live checks: the trials of --out's")
    args = ap.parse_args()
    board = load_board(args.board)
    if args.replay:
        kept = json.loads(Path(args.out).read_text())["checks"]
    else:
        t0 = time.monotonic()
        kept = live(args.board, args.well, args.sick, args.load, Path(tempfile.mkdtemp(prefix="bench-sick-board-")))
        if args.out:
            Path(args.out).write_text(json.dumps({"board": args.board, "load": args.load, "checks": kept,
                                                  "host": clocks.this_host()["id"], "date": time.strftime("%F %T"),
                                                  "host_s": round(time.monotonic() - t0)}, indent=1) + "\n")
    r = trials(kept, args.load, args.trials, args.steady, args.seed, board)
    print(f"{args.board}, load {args.load}; host {clocks.this_host()['id']}")
    print("\n".join(table(kept, args.load)))
    print(f"quarantined within 2 checks: {r['quarantined_within_2']} of {r['trials']} trials "
          f"({r['first_check']} at the first; goal >= 19)")
    print(f"quarantines over {r['steady_checks']} steady checks: {r['steady_quarantines']} (goal 0; "
          f"resampled from {r['live_well']} live well checks, {r['live_sick']} live sick)")
    ok = r["quarantined_within_2"] >= 19 * r["trials"] / 20 and r["steady_quarantines"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
