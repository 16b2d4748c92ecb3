"""The virtual board's serial cable: a pty that outlives QEMU.

ser2net holds the pty's slave end like a USB serial adapter; the board (QEMU) plugs
into a Unix socket each time it is powered on. Bytes from the board go to the pty;
bytes typed into the pty go to the board. While the board is off, input is dropped;
while nobody reads the pty, output is dropped - as on a real line."""
from __future__ import annotations

import argparse
import contextlib
import errno
import os
import pty
import selectors
import signal
import socket
import subprocess
import sys
import termios
import tty
from pathlib import Path


def make_pty(link: str):
    master, slave = pty.openpty()
    tty.setraw(slave, termios.TCSANOW)   # no echo, no CR/LF translation
    os.set_blocking(master, False)
    tmp = link + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.ttyname(slave), tmp)
    os.replace(tmp, link)
    return master, slave   # keep slave open: the pty lives as long as the cable


def serve(sock_path: str, link: str):
    master, _slave = make_pty(link)
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(1)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(master, selectors.EVENT_READ, "pty")
    board = None
    running = True

    def stop(*_):
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"cable: {link} -> {os.readlink(link)}, board socket {sock_path}", flush=True)
    while running:
        try:
            events = sel.select(timeout=1.0)
        except InterruptedError:
            continue
        for key, _ in events:
            if key.data == "accept":
                conn, _ = listener.accept()
                if board is not None:   # a new power-on replaces a stale connection
                    sel.unregister(board)
                    board.close()
                board = conn
                sel.register(board, selectors.EVENT_READ, "board")
                print("cable: board connected (powered on)", flush=True)
            elif key.data == "board":
                try:
                    data = board.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(board)
                    board.close()
                    board = None
                    print("cable: board disconnected (powered off)", flush=True)
                    continue
                try:
                    os.write(master, data)
                except OSError as e:
                    if e.errno not in (errno.EAGAIN, errno.EIO):
                        raise   # EAGAIN: nobody reads the line; the bytes are lost
            elif key.data == "pty":
                try:
                    data = os.read(master, 65536)
                except OSError:
                    continue
                if board is not None and data:
                    try:
                        board.sendall(data)
                    except OSError:
                        pass
    listener.close()
    os.unlink(sock_path)
    if os.path.islink(link):
        os.unlink(link)


@contextlib.contextmanager
def serial_line(workdir: Path, name: str, port: int, baud: int, chardelay: bool = False):
    """A serial line of one's own (tests, benchmarks): a cable pty (a board plugs into
    workdir/uart.sock, which is yielded) behind ser2net on 127.0.0.1:port, configured as
    the lab's. Both stopped by PID after."""
    from .. import labhost
    from ..net import tcp_open, wait_for
    link = workdir / f"{name}.tty"
    procs = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "boardlab.vlab.cable", "--socket",
                                       str(workdir / "uart.sock"), "--link", str(link)],
                                      stdout=subprocess.DEVNULL))
        wait_for(link.exists, what=f"cable pty {link}")
        cfg = workdir / "ser2net.yaml"
        cfg.write_text(labhost.ser2net_yaml([(name, port, str(link), baud, "127.0.0.1")],
                                            chardelay=chardelay))
        procs.append(subprocess.Popen(["ser2net", "-n", "-u", "-c", str(cfg), "-P",
                                       str(workdir / "ser2net.pid")], stderr=subprocess.DEVNULL))
        wait_for(lambda: tcp_open(port), what=f"ser2net on port {port}")
        yield workdir / "uart.sock"
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=10)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="Unix socket QEMU's UART connects to")
    ap.add_argument("--link", required=True, help="symlink to the pty, for ser2net")
    args = ap.parse_args(argv)
    serve(args.socket, args.link)
    return 0


if __name__ == "__main__":
    sys.exit(main())
