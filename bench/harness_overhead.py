#!/usr/bin/env python3
"""Harness overhead: power-on -> shell prompt through BoardStrategy (labgrid), divided
by the same path driven by a minimal expect loop on the same board (pyserial RFC2217,
HTTP power, the same U-Boot commands). Runs alternate (A B A B ...) so host noise hits
both alike; prints each run, the medians and the ratio (goal <= 1.05).

    .venv/bin/python bench/harness_overhead.py [--runs 3] [--kernel armmp]

Brings the virtual lab up if it is not (and down again at the end)."""
import argparse
import contextlib
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import serial

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.board import env_path, bootargs, load_board
from boardlab.measure.clocks import this_host
from boardlab.vlab.lab import kept_up


def power(board, value):
    url = board.power.url
    urllib.request.urlopen(urllib.request.Request(url, data=value, method="PUT"), timeout=10).read()


class MinimalConsole:
    """The smallest thing that can drive a boot: read into a buffer, search it."""

    def __init__(self, port):
        self.ser = serial.serial_for_url(f"rfc2217://127.0.0.1:{port}?ign_set_control",
                                         baudrate=115200, timeout=0.05)
        self.buf = b""

    def expect(self, pattern, timeout=120):
        regex = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = regex.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            self.buf += self.ser.read(4096)
        raise TimeoutError(f"no {pattern!r} within {timeout} s; last: {self.buf[-200:]!r}")

    def send(self, line):
        self.ser.write(line.encode() + b"\n")

    def drain(self):
        self.ser.reset_input_buffer()
        while self.ser.read(65536):
            pass
        self.buf = b""


def minimal_boot(board, con, kfile, rdfile):
    """Returns (total, power-on -> load, load -> login prompt, login -> shell prompt)."""
    ub = board.uboot
    prompt = re.escape(ub.prompt)
    power(board, b"0")
    con.drain()
    t0 = time.monotonic()
    power(board, b"1")
    con.expect(ub.autoboot)
    con.send("")
    con.expect(prompt)
    net = board.network
    for cmd in (f"setenv ipaddr {net.ip}", f"setenv serverip {net.server_ip}",
                f"setenv bootargs {bootargs(board, 'ramdisk')}"):
        con.send(cmd)
        con.expect(prompt)
    t_load = time.monotonic()
    for cmd in (ub.load_command.format(addr=ub.kernel_addr, file=kfile),
                ub.load_command.format(addr=ub.ramdisk_addr, file=rdfile)):
        con.send(cmd)
        con.expect(prompt, timeout=60)
    con.send(ub.boot_command.format(kernel=ub.kernel_addr, ramdisk=ub.ramdisk_addr,
                                       fdt=ub.fdt_addr or ""))
    con.expect(board.shell.login_prompt)
    t_login = time.monotonic()
    con.send(board.shell.username)
    con.expect(board.shell.prompt)
    t_end = time.monotonic()
    power(board, b"0")
    return t_end - t0, t_load - t0, t_login - t_load, t_end - t_login


def strategy_boot(strategy):
    """The same phases, from the strategy's own marks and milestones."""
    strategy.transition("off")
    strategy.target.activate(strategy.console)   # connected before timing, like the other
    t0 = time.monotonic()
    strategy.transition("shell")
    t_end = time.monotonic()
    rec = strategy.last_boot
    marks = {ln.text: ln.t for ln in rec.lines if ln.kind == "mark"}
    t_load = marks["load"]
    t_login = t_load + rec.milestones["login"]
    strategy.transition("off")
    return t_end - t0, t_load - t0, t_login - t_load, t_end - t_login


def fmt(t):
    return (f"power-on -> shell {t[0]:7.3f} s  (to load {t[1]:.3f}, load -> login {t[2]:.3f}, "
            f"login -> shell {t[3]:.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--kernel", default="armmp")
    args = ap.parse_args()
    lab_stack = contextlib.ExitStack()   # through the lab and its leases: every host up
    lab_stack.enter_context(kept_up("vlab", boards=("qemu-arm",)))
    board = load_board("qemu-arm")
    from labgrid import Environment
    env = Environment(str(env_path("qemu-arm")))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    strategy.select(kernel=args.kernel, root="ramdisk")
    strategy.log_dir = "/tmp/boardlab-bench-logs"
    times = {"strategy": [], "minimal": []}
    phases = {"strategy": [], "minimal": []}
    try:
        # stage the files once, the way the strategy does, so both load the same ones
        kfile = strategy.stage(Path(board.images.dir) / board.images.kernels[args.kernel].uimage)
        rdfile = strategy.stage(Path(board.images.dir) / board.images.ramdisk)
        for i in range(args.runs):
            t = strategy_boot(strategy)
            times["strategy"].append(t[0])
            phases["strategy"].append(t)
            print(f"run {i + 1}: strategy  " + fmt(t), flush=True)
            target.deactivate(strategy.console)   # free the console port for the other
            con = MinimalConsole(board.console.ser2net_port)
            try:
                t = minimal_boot(board, con, kfile, rdfile)
            finally:
                con.ser.close()
            times["minimal"].append(t[0])
            phases["minimal"].append(t)
            print(f"run {i + 1}: minimal   " + fmt(t), flush=True)
    finally:
        strategy.transition("off")
        env.cleanup()
        lab_stack.close()
    for k, rows in phases.items():
        print(f"median {k:9s}" + fmt([statistics.median(col) for col in zip(*rows)]))
    harness = {k: statistics.median(r[1] + r[3] for r in rows) for k, rows in phases.items()}
    print(f"harness phases only (power-on -> load + login -> shell): strategy "
          f"{harness['strategy']:.3f} s, minimal {harness['minimal']:.3f} s")
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"median strategy {med['strategy']:.3f} s, minimal expect loop {med['minimal']:.3f} s "
          f"({args.runs} runs each, interleaved)")
    print(f"harness overhead ratio: {med['strategy'] / med['minimal']:.3f} (goal <= 1.05)")
    print(f"host {this_host()['id']}, {time.strftime('%F')}, host clock")


if __name__ == "__main__":
    main()
