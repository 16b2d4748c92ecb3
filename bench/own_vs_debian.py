#!/usr/bin/env python3
"""The project's measurement programs (target/measure/) beside the tools they stand in
for (Debian's lmbench 3.0-a9, rt-tests' cyclictest and hackbench), in the same boots:
each boot of the board runs the lmbench suite's groups, the jitter suite's cyclictest
under its load and the hackbench run with both sets, the set that goes first turned boot
by boot (so what a run leaves behind hits both alike). Prints, per metric, both medians
and their ratio (project's / Debian's), and keeps every boot's figures in a JSON file
(`--out`; the page docs/own-programs.md is generated from the kept file by `boardlab
gen`).

    .venv/bin/python bench/own_vs_debian.py [--board qemu-arm] [--boots 3] [--jitter-s 30]
        [--out docs/data/own-programs/qemu-arm.json]

The board carries Debian's set in its image; the project's programs are written to it over
the console at the start of each boot (its image stays as its baselines know it). Its clock:
the board's facts' (qemu-arm: guest-deterministic, where both sets' figures repeat, so a
ratio is the methods' difference, not noise). Brings the virtual lab up if it is not."""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.images import ownprograms  # noqa: E402
from boardlab.measure import clocks, families, sample, workloads  # noqa: E402
from boardlab.measure.families import jitter, lmbench  # noqa: E402
from boardlab.pages import ownprograms_page  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

SETS = (families.DEBIAN, families.OWN)
MEASURED = ("lmbench", "jitter", "hackbench")   # the families with a set of programs


def one_set(sh, tools: str, jitter_s: int, small: bool) -> dict:
    """One set's figures on the running boot: {metric: value}."""
    figures = lmbench.measure_groups(sh, small, tools=tools)
    figures.update(jitter.run(sh, jitter_s, tools)[0])
    figures.update(sample.family("hackbench", sh, None, tools=tools))
    return figures


def run(board_name: str, boots: int, jitter_s: int) -> dict:
    board = load_board(board_name)
    kept = {"board": board_name, "isa": board.isa, "clock": clocks.guest_clock(board),
            "host": clocks.this_host()["id"], "jitter_s": jitter_s, "boots": []}
    with kept_up(board.lab_host), board_session(ROOT / f"lab/{board_name}.yaml",
                                                ROOT / f"results/bench-own-vs-debian-{board_name}",
                                                command="bench") as (strategy, shell):
        strategy.select(kernel="", root="", ramdisk="")
        small = workloads.small_board(board.ram_mb)
        for i in range(boots):
            order = SETS if i % 2 == 0 else SETS[::-1]
            t0 = time.monotonic()
            strategy.reboot()
            sh = shell()
            ownprograms.onto_running_board(sh, board.isa)
            for tools in order:
                missing = sample.why_not_measurable(sh, "lmbench", tools)
                if missing:
                    raise SystemExit(f"own_vs_debian: board {board_name}: {families.SET_WORDS[tools]}: {missing}")
            boot = {"order": list(order), "figures": {}}
            for tools in order:
                boot["figures"][tools] = one_set(sh, tools, jitter_s, small)
            kept["boots"].append(boot)
            print(f"boot {i + 1}/{boots} ({' then '.join(order)}): {time.monotonic() - t0:.0f} s "
                  f"(host clock, host {kept['host']})", flush=True)
    return kept


def medians(kept: dict) -> dict:
    """{metric: {set: median over the boots}} (the page's own reading of the kept boots)."""
    return {m: {t: v for t, (v, _) in by.items()} for m, by in ownprograms_page._medians(kept).items()}


def table(kept: dict) -> list[str]:
    lines = [f"{kept['board']} ({kept['isa']}), clock {kept['clock']}, {len(kept['boots'])} boots, "
             f"cyclictest {kept['jitter_s']} s a run; host {kept['host']}",
             f"{'metric':34} {'Debian':>12} {'project':>12} {'ratio':>7}"]
    for metric, by in sorted(medians(kept).items()):
        d, o = by.get(families.DEBIAN), by.get(families.OWN)
        ratio = f"{o / d:.3f}" if d and o is not None else "-"
        lines.append(f"{metric:34} {d if d is not None else '-':>12.6g} {o if o is not None else '-':>12.6g} {ratio:>7}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--boots", type=int, default=3, help="boots, each running both sets (default 3)")
    ap.add_argument("--jitter-s", type=int, default=30, help="cyclictest seconds a run (default 30)")
    ap.add_argument("--out", default=str(ROOT / "docs/data/own-programs/qemu-arm.json"))
    ap.add_argument("--table", action="store_true", help="only print the table of a kept file (--out)")
    args = ap.parse_args()
    if args.table:
        kept = json.loads(Path(args.out).read_text())
    else:
        t0 = time.monotonic()
        kept = run(args.board, args.boots, args.jitter_s)
        kept["date"] = time.strftime("%Y-%m-%d")
        kept["host_s"] = round(time.monotonic() - t0)
        Path(args.out).write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
        print(f"kept: {args.out} ({kept['host_s']} s, host clock)")
    print("\n".join(table(kept)))


if __name__ == "__main__":
    main()
