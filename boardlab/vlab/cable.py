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


class Cable:
    """The pty end (ser2net's serial device) and the board's socket end, joined."""

    def __init__(self, sock_path: str, link: str):
        self.sock_path, self.link = sock_path, link
        self.master, _slave = make_pty(link)
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(sock_path)
        self.listener.listen(1)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, self._accept)
        self.sel.register(self.master, selectors.EVENT_READ, self._from_pty)
        self.board = None

    def _accept(self):
        conn, _ = self.listener.accept()
        if self.board is not None:   # a new power-on replaces a stale connection
            self._unplug()
        self.board = conn
        self.sel.register(conn, selectors.EVENT_READ, self._from_board)
        print("cable: board connected (powered on)", flush=True)

    def _unplug(self):
        self.sel.unregister(self.board)
        self.board.close()
        self.board = None

    def _from_board(self):
        try:
            data = self.board.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._unplug()
            print("cable: board disconnected (powered off)", flush=True)
            return
        try:
            os.write(self.master, data)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EIO):
                raise   # EAGAIN: nobody reads the line; the bytes are lost

    def _from_pty(self):
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return
        if self.board is not None and data:
            try:
                self.board.sendall(data)
            except OSError:
                pass

    def run(self, running):
        """Pass bytes both ways while running() says so."""
        while running():
            try:
                events = self.sel.select(timeout=1.0)
            except InterruptedError:
                continue
            for key, _ in events:
                key.data()
        self.listener.close()
        os.unlink(self.sock_path)
        if os.path.islink(self.link):
            os.unlink(self.link)


def serve(sock_path: str, link: str):
    cable = Cable(sock_path, link)
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopped.append(1))
    print(f"cable: {link} -> {os.readlink(link)}, board socket {sock_path}", flush=True)
    cable.run(lambda: not stopped)


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
