#!/usr/bin/env python3
"""Regenerate tests/data/captured/: boot the virtual board (lab up) and save the raw
output of each tool the parsers read. Run by hand when a tool's output changes:
    .venv/bin/python tests/data/capture.py [--kernel rt-armmp]"""
import argparse
import subprocess
from pathlib import Path

from labgrid import Environment

from boardlab.measure import target_load, workloads
from boardlab.measure.families import lmbench

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "captured"


def lm(cmd: str) -> str:
    """An lmbench line in the suite's quick mode, every command of it (as the suite runs it)."""
    return lmbench.quick_line(cmd)


COMMANDS = {
    "free": "free",
    "kernel-memory": "dmesg | grep 'Memory:'",
    "mem_eat": "mem_eat > /tmp/me.log 2>&1; tail -n 3 /tmp/me.log",
    "lat_syscall": lm("lat_syscall null; lat_syscall read"),
    "lat_proc": lm("lat_proc fork"),
    "lat_pipe": lm("lat_pipe"),
    "lat_unix": lm("lat_unix"),
    "lat_udp": lm("lat_udp -s; sleep 0.2; lat_udp 127.0.0.1; lat_udp -S 127.0.0.1"),
    "lat_tcp": lm("lat_tcp -s; sleep 0.2; lat_tcp 127.0.0.1; lat_tcp -S 127.0.0.1"),
    "lat_connect": lm("lat_connect -s; sleep 0.2; lat_connect 127.0.0.1; lat_connect -S 127.0.0.1"),
    "lat_select": lm("lat_select -n 100 file"),
    "lat_mmap": "dd if=/dev/zero of=/tmp/f bs=1024 count=1024 2>/dev/null; " + lm("lat_mmap 1m /tmp/f"),
    "lat_pagefault": lm("lat_pagefault /tmp/f"),
    "lat_fs": lm("lat_fs -s 0 /tmp"),
    "lat_ctx": lm("lat_ctx -s 0 2 4 8 16; lat_ctx -s 16 2 4"),
    "bw_pipe": lm("bw_pipe"),
    "bw_unix": lm("bw_unix"),
    "bw_tcp": lm("bw_tcp -s; sleep 0.2; bw_tcp -m 65536 127.0.0.1; bw_tcp -S 127.0.0.1"),
    "bw_file_rd": lm("bw_file_rd 1m io_only /tmp/f"),
    # the project's program (put on the board first: its image carries Debian's set), as the
    # mem_bw suite's runs.sh runs it on this board (8 MB: a sixteenth of its RAM, at most 8 MB)
    "bw_mem": lm("PATH=/usr/lib/boardlab/bin:$PATH; for op in rd wr cp; do bw_mem 8192k $op; done"),
    "cyclictest-json": "cyclictest -q -m -p 80 -i 1000 -D 3 --json=/tmp/c.json >/dev/null; cat /tmp/c.json",
    # the suite's run under its load, 1 s: every cycle's latency line (-v)
    "cyclictest-verbose": f"{target_load.install_command()}; " + target_load.under_load(
        workloads.cyclictest(1, "> /tmp/c.v 2>/dev/null")) + " > /dev/null; cat /tmp/c.v",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="armmp")
    ap.add_argument("--only", nargs="+", choices=COMMANDS, help="capture these outputs alone")
    args = ap.parse_args()
    env = Environment(str(ROOT / "lab" / "qemu-arm.yaml"))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    strategy.select(kernel=args.kernel, root="ramdisk")
    strategy.log_dir = "/tmp/boardlab-capture"
    strategy.transition("shell")
    shell = target.get_driver("ShellDriver")
    OUT.mkdir(exist_ok=True)
    if not args.only or "bw_mem" in args.only:
        from boardlab.images import ownprograms
        ownprograms.onto_running_board(shell, strategy.board.isa)
    try:
        for name, cmd in COMMANDS.items():
            if args.only and name not in args.only:
                continue
            out, _, rc = shell.run(cmd, timeout=120)
            (OUT / f"{args.kernel}.{name}.txt").write_text("\n".join(out) + "\n")
            print(f"{name:16s} rc={rc} {len(out)} lines")
    finally:
        strategy.transition("off")
        env.cleanup()
    if args.only:
        return
    img = ROOT / "tests/data/captured"
    uimage = Path(strategy.board.images.dir) / f"{args.kernel}.uImage"
    (img / f"{args.kernel}.mkimage-l.txt").write_text(
        subprocess.run(["mkimage", "-l", str(uimage)], capture_output=True, text=True).stdout)


if __name__ == "__main__":
    main()
