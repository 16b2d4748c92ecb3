#!/usr/bin/env python3
"""Console latency: how late a board's line reaches the host through the lab's serial
path (cable pty -> ser2net RFC2217 -> TCP), with ser2net's chardelay off (the lab's
generated config) and on (ser2net's default), side by side. A "board" writes lines into
the cable like a booting kernel (a burst of 80 characters, then a pause); the host
side reads ser2net's port and stamps the first character of each line, as the
strategy's console does. Both sides use CLOCK_MONOTONIC, so the difference is the
transport. Rounds alternate (off on off on ...) so host noise hits both alike; prints
median, p95 and max lateness in ms.

    .venv/bin/python bench/console_latency.py [--lines 100] [--rounds 3] [--baud 115200]

Needs ser2net; starts its own cable and ser2net on 127.0.0.1 and stops them by PID."""
import argparse
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.measure.clocks import this_host
from boardlab.net import free_port
from boardlab.vlab.cable import serial_line


def one_round(tmp: Path, chardelay: bool, lines: int, baud: int, length: int) -> list[float]:
    """Lateness (s) of each line through a fresh cable + ser2net."""
    port = free_port()
    with serial_line(tmp, "bench", port, baud, chardelay=chardelay) as sock_path:
        host = socket.create_connection(("127.0.0.1", port))
        board = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        board.connect(str(sock_path))
        time.sleep(0.3)                      # telnet/RFC2217 negotiation settles
        arrived = {}

        def read():
            buf, first = b"", None
            while len(arrived) < lines:
                data = host.recv(4096)
                now = time.monotonic()
                if not data:
                    return
                for byte in data:            # the first character of each line
                    if first is None:
                        first = now
                    buf += bytes([byte])
                    if byte == 0x0a:
                        text = buf.decode("latin-1", "replace")
                        if text.startswith("L") and text[1:6].isdigit():
                            arrived[int(text[1:6])] = first
                        buf, first = b"", None

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        board.sendall(b"warm-up\r\n")      # takes the telnet negotiation bytes before it
        time.sleep(0.1)
        written = {}
        filler = "x" * max(0, length - 9)
        for n in range(lines):
            written[n] = time.monotonic()
            board.sendall(f"L{n:05d} {filler}\r\n".encode())
            time.sleep(0.02)
        reader.join(timeout=10)
        board.close()
        host.close()
        return [arrived[n] - written[n] for n in sorted(arrived)]


def lateness_ms(late: list[float]) -> tuple[float, float, float]:
    """(median, p95, max) in ms of the lines' lateness in seconds."""
    v = sorted(late)
    return statistics.median(v) * 1e3, v[int(0.95 * (len(v) - 1))] * 1e3, v[-1] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("--length", type=int, default=40, help="characters per line (a kernel's are 30-100)")
    args = ap.parse_args()
    late = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for chardelay in (False, True):
                d = Path(tmp) / f"{r}-{int(chardelay)}"
                d.mkdir()
                got = one_round(d, chardelay, args.lines, args.baud, args.length)
                if len(got) < args.lines:
                    raise SystemExit(f"round {r + 1}: {len(got)} of {args.lines} lines arrived")
                late[chardelay] += got
                print(f"round {r + 1} chardelay {'on ' if chardelay else 'off'}: "
                      f"median {statistics.median(got) * 1e3:6.2f} ms", flush=True)
    for chardelay in (False, True):
        median, p95, most = lateness_ms(late[chardelay])
        print(f"chardelay {'on  (ser2net default)' if chardelay else 'off (boardlab)       '}: "
              f"{len(late[chardelay])} lines at {args.baud} baud, late by median {median:.2f} ms, "
              f"p95 {p95:.2f} ms, max {most:.2f} ms")
    ratio = statistics.median(late[True]) / statistics.median(late[False])
    print(f"ratio of medians on/off: {ratio:.1f}")
    print(f"host {this_host()['id']}, {time.strftime('%F')}, host clock")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
