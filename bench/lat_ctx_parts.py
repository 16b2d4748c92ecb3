#!/usr/bin/env python3
"""lat_ctx taken apart: where the project's context-switch figure and lmbench's part, in
one boot. Each method's figure is a ring hop's time less an overhead loop's (a pipe to
itself and the data's sum); this prints both parts of each, per ring size, for three
programs run in turn --rounds times: Debian's lmbench 3.0-a9 lat_ctx, the project's
(target/measure/lmb.c), and the project's with its sum written as lmbench's (a hundred
words a loop, size/400 x 100 words: built here from a patched copy of the sources, never
kept), at 0 and 16 KB. On the deterministic clock every figure is instructions, so a
part that moves is code that ran, not noise.

Printed per program and ring size (medians of the rounds, us, guest-deterministic):
the figure, the ring hop, the overhead loop, and "hop beyond its 0k hop less the sum"
(16 KB: what summing in the ring costs beyond what the overhead loop says it costs).

    .venv/bin/python bench/lat_ctx_parts.py [--board qemu-arm] [--rounds 3]
        [--deterministic]   # a board on the realtime clock (qemu-arm-noisy) switched to
                            # the deterministic one for the run, and back
Brings the virtual lab up if it is not."""
import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.images import ownprograms as op  # noqa: E402
from boardlab.measure.clocks import clock_url, switch_clock, this_host  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

ONE_WORD = """    for (size_t i = 0; i < words; i++)
        s += data[i];"""
LMBENCH_SUM = """    const u32 *d = data;
#define TEN(a) a a a a a a a a a a
    for (size_t i = 0; i < words / 100; i++) {
        TEN(TEN(s += *d++;))
    }"""
QUICK = "ENOUGH=100000 TIMING_O=0 LOOP_O=0"   # the lmbench suite's quick timing, both sets
PROCS = (2, 4, 8, 16)


def lmbench_sum_build(isa: str, work: Path) -> Path:
    """The project's programs with lat_ctx's sum as lmbench's: a patched copy, built here."""
    src = work / "src"
    shutil.copytree(op.SOURCES, src)
    text = (src / "lmb.c").read_text()
    if ONE_WORD not in text:
        raise SystemExit("lat_ctx_parts: target/measure/lmb.c's sum is not the one-word loop this patches")
    (src / "lmb.c").write_text(text.replace(ONE_WORD, LMBENCH_SUM, 1))
    c = op.cpu(isa)
    out = work / op.BINARY
    subprocess.run([c.cc, *c.flags, *op.COMMON_FLAGS, "-o", str(out), *(str(src / f) for f in op.C_FILES), *c.libs],
                   check=True)
    return out


def parts(lines) -> dict:
    """{procs: (figure, hop, overhead)} of either program's output, us."""
    out, ovr = {}, None
    for ln in lines:
        m = re.match(r"@raw ctx size=\d+ procs=(\d+) hops=(\d+) ns=(\d+) ovr_hops=(\d+) ovr_ns=(\d+)", ln)
        if m:
            p, h, ns, oh, ons = map(int, m.groups())
            hop, o = ns / h / 1000, ons / oh / 1000
            out[p] = (hop - o, hop, o)
        m = re.match(r'^"size=\d+k ovr=([\d.]+)', ln.strip())
        if m:
            ovr = float(m.group(1))
        m = re.match(r"^(\d+) ([\d.]+)$", ln.strip())
        if m and ovr is not None:   # lmbench prints the figure; its hop is the figure plus ovr
            out[int(m.group(1))] = (float(m.group(2)), float(m.group(2)) + ovr, ovr)
    return out


def run(board_name: str, rounds: int, deterministic: bool) -> dict:
    board = load_board(board_name)
    with tempfile.TemporaryDirectory() as work, kept_up(board.lab_host):
        variant = lmbench_sum_build(board.isa, Path(work))
        before = switch_clock(board)
        if deterministic:
            urllib.request.urlopen(urllib.request.Request(clock_url(board), data=b"deterministic", method="PUT"),
                                   timeout=5).read()
        elif before != "deterministic":
            raise SystemExit(f"lat_ctx_parts: board {board_name} runs the {before} clock (--deterministic)")
        try:
            with board_session(ROOT / f"lab/{board_name}.yaml", ROOT / f"results/bench-lat-ctx-parts-{board_name}",
                               command="bench") as (strategy, shell):
                strategy.select(kernel="", root="", ramdisk="")
                strategy.reboot()
                sh = shell()
                op.onto_running_board(sh, board.isa)
                op.over_console(sh, variant.read_bytes(), "/tmp/lmbench-sum/blmeasure")
                debian = sh.run_check("command -v lat_ctx || ls /usr/lib/lmbench/bin/*/lat_ctx")[0]
                programs = {"Debian's": debian, "the project's": f"/{op.ON_BOARD_DIR}/{op.BINARY} lat_ctx",
                            "the project's, lmbench's sum": "/tmp/lmbench-sum/blmeasure lat_ctx"}
                got: dict = {}
                for r in range(rounds):
                    for name, cmd in programs.items():
                        for kb in (0, 16):
                            lines = sh.run(f"{QUICK} {cmd} -s {kb} {' '.join(map(str, PROCS))} 2>&1", timeout=900)[0]
                            got.setdefault((name, kb), []).append(parts(lines))
                    print(f"round {r + 1}/{rounds}", flush=True)
        finally:
            if deterministic:
                urllib.request.urlopen(urllib.request.Request(clock_url(board), data=(before or "realtime").encode(),
                                                              method="PUT"), timeout=5).read()
    return got


def table(got: dict) -> list[str]:
    lines = ["| program | ring | 0k figure | 16k figure | 16k hop | 16k overhead | 16k hop beyond the 0k hop, less the sum |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name in dict.fromkeys(n for n, _ in got):
        for p in PROCS:
            med = {kb: [statistics.median(r[p][i] for r in got[(name, kb)]) for i in range(3)] for kb in (0, 16)}
            summed = med[16][2] - med[0][2]          # the overhead loop's sum: 16k less 0k overhead
            beyond = med[16][1] - med[0][1] - summed
            lines.append(f"| {name} | {p} | {med[0][0]:.2f} | {med[16][0]:.2f} | {med[16][1]:.2f} | {med[16][2]:.2f} "
                         f"| {beyond:+.2f} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--deterministic", action="store_true",
                    help="switch a realtime-clock board to the deterministic clock for the run")
    args = ap.parse_args()
    got = run(args.board, args.rounds, args.deterministic)
    print(f"\nboard {args.board}, clock guest-deterministic, {args.rounds} rounds, host {this_host()['id']}; us\n")
    print("\n".join(table(got)))


if __name__ == "__main__":
    main()
