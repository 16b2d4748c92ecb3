"""The virtual board's serial cable: a pty that outlives QEMU.

ser2net holds the pty's slave end like a USB serial adapter; the board (QEMU) plugs
into a Unix socket each time it is powered on. Bytes from the board go to the pty;
bytes typed into the pty go to the board. While the board is off, input is dropped.
The pty holds about 15 kB, and QEMU writes a boot's output far faster than any line
rate: a reader that falls behind (ser2net on a busy host) gets every byte, held here up
to LINE_BUFFER; while nobody reads the pty at all (NOBODY_READS_S), output is dropped -
as on a real line, where what a board prints while no one has the port open is gone:
that includes what waits in the pty itself (a person's power cycle with no console
open must not greet the next reader with an old U-Boot countdown, which LAVA took for
this boot's and typed into the real one). With a baud rate,
what is typed reaches the board at the line's pace (10 bits a character, 8N1), as
through a real UART: a 40-character U-Boot command takes 3.5 ms at 115200 baud."""
from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import os
import pty
import selectors
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
import tty
from pathlib import Path


LINE_BUFFER = 1 << 20    # bytes from the board waiting for the pty's reader (a boot's output is ~200 kB)
NOBODY_READS_S = 5.0     # the pty unwritable this long: nobody reads it, what waits is dropped


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

    def __init__(self, sock_path: str, link: str, baud: int = 0):
        self.sock_path, self.link = sock_path, link
        self.char_s = 10.0 / baud if baud else 0.0
        self.typed = bytearray()     # to the board, not yet delivered at the line's pace
        self.line_free_at = 0.0
        self.to_line = bytearray()   # from the board, not yet taken by the pty
        self.line_stuck_since = None
        self.watching_write = False  # the pty registered for EVENT_WRITE (to_line waits)
        self.master, self.slave = make_pty(link)
        self.unread, self.unread_since = 0, None   # bytes in the pty nobody has read, since when
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(sock_path)
        self.listener.listen(1)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, self._accept)
        self.sel.register(self.master, selectors.EVENT_READ, self._pty_ready)
        self.board = None

    def _accept(self, mask=0):
        conn, _ = self.listener.accept()
        if self.board is not None:   # a new power-on replaces a stale connection
            self._unplug()
        self.to_line.clear()         # what the last power-on left unread: not this boot's
        self.line_stuck_since = None
        self.board = conn
        self.sel.register(conn, selectors.EVENT_READ, self._from_board)
        print("cable: board connected (powered on)", flush=True)

    def _unplug(self):
        self.sel.unregister(self.board)
        self.board.close()
        self.board = None

    def _from_board(self, mask=0):
        try:
            data = self.board.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._unplug()
            print("cable: board disconnected (powered off)", flush=True)
            return
        self.to_line += data[:max(LINE_BUFFER - len(self.to_line), 0)]   # beyond: an overrun
        self._write_line()

    def _write_line(self):
        """Give the pty what it takes of the board's bytes; the rest waits for it to be
        writable (its reader catching up), unless nobody has read for NOBODY_READS_S."""
        while self.to_line:
            try:
                n = os.write(self.master, self.to_line[:65536])
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EIO):
                    raise
                break
            del self.to_line[:n]
            self.line_stuck_since = None
        now = time.monotonic()
        if not self.to_line:
            self.line_stuck_since = None
        elif self.line_stuck_since is None:
            self.line_stuck_since = now
        elif now - self.line_stuck_since > NOBODY_READS_S:
            self.to_line.clear()      # nobody reads the line: lost, as on a real one
            self.line_stuck_since = None
        if bool(self.to_line) != self.watching_write:   # a system call only on a change
            self.watching_write = bool(self.to_line)
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.to_line else 0)
            self.sel.modify(self.master, events, self._pty_ready)

    def _drop_unread(self):
        """What waits in the pty while nobody reads it (its count not falling) for
        NOBODY_READS_S is dropped, as a real line drops what no open port takes."""
        n = struct.unpack("i", fcntl.ioctl(self.slave, termios.FIONREAD, b"\0" * 4))[0]
        now = time.monotonic()
        if n == 0 or n < self.unread or self.unread_since is None:
            self.unread_since = now if n else None   # read from (or new): the clock starts again
        elif now - self.unread_since > NOBODY_READS_S:
            termios.tcflush(self.slave, termios.TCIFLUSH)
            self.unread_since, n = None, 0
        self.unread = n

    def _pty_ready(self, mask):
        if mask & selectors.EVENT_WRITE:
            self._write_line()
        if mask & selectors.EVENT_READ:
            self._from_pty()

    def _from_pty(self):
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return
        if self.board is None or not data:
            return
        if not self.char_s:
            self._to_board(data)
            return
        self.line_free_at = max(self.line_free_at, time.monotonic())
        self.typed.extend(data)

    def _deliver_typed(self) -> float:
        """Hand the board the typed characters whose time on the line is over; returns
        the seconds until the next one is due (1.0 when none is waiting)."""
        if not self.typed:
            return 1.0
        due = int((time.monotonic() - self.line_free_at) / self.char_s)
        if due > 0:
            n = min(due, len(self.typed))
            self._to_board(bytes(self.typed[:n]))
            del self.typed[:n]
            self.line_free_at += n * self.char_s
        return self.char_s if self.typed else 1.0

    def _to_board(self, data: bytes):
        if self.board is None:
            self.typed.clear()
            return
        try:
            self.board.sendall(data)
        except OSError:
            pass

    def run(self, running):
        """Pass bytes both ways while running() says so."""
        while running():
            wait = self._deliver_typed()
            self._drop_unread()
            if self.unread:
                wait = min(wait, 1.0)
            if self.to_line:   # to see when nobody has read the line for long enough
                self._write_line()
                wait = min(wait, NOBODY_READS_S / 2)
            try:
                events = self.sel.select(timeout=wait)
            except InterruptedError:
                continue
            for key, mask in events:
                key.data(mask)
        self.listener.close()
        os.unlink(self.sock_path)
        if os.path.islink(self.link):
            os.unlink(self.link)


def serve(sock_path: str, link: str, baud: int = 0):
    cable = Cable(sock_path, link, baud)
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopped.append(1))
    print(f"cable: {link} -> {os.readlink(link)}, board socket {sock_path}", flush=True)
    cable.run(lambda: not stopped)


@contextlib.contextmanager
def serial_line(workdir: Path, name: str, port: int, baud: int, chardelay: bool = False):
    """A serial line of one's own (tests, benchmarks): a cable pty (a board plugs into
    workdir/uart.sock, which is yielded) behind ser2net on 127.0.0.1:port, configured as
    the lab's. Both stopped by PID after. A port something else listens on is refused:
    waiting for it to open would take that listener for this line's ser2net."""
    from boardlab.errors import BoardlabError
    from boardlab.facts import hostconfigs
    from boardlab.net import tcp_open, wait_for
    if tcp_open(port):
        raise BoardlabError(f"serial line {name}: port {port} on 127.0.0.1 is taken by another "
                            f"listener; choose a free port (boardlab.net.free_port)")
    link = workdir / f"{name}.tty"
    procs = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "boardlab.vlab.cable", "--socket",
                                       str(workdir / "uart.sock"), "--link", str(link),
                                       "--baud", str(baud)],
                                      stdout=subprocess.DEVNULL))
        wait_for(link.exists, what=f"cable pty {link}")
        cfg = workdir / "ser2net.yaml"
        cfg.write_text(hostconfigs.ser2net_yaml([(name, port, str(link), baud, "127.0.0.1")],
                                            chardelay=chardelay))
        procs.append(subprocess.Popen(["ser2net", "-n", "-u", "-c", str(cfg), "-P",
                                       str(workdir / "ser2net.pid")], stderr=subprocess.DEVNULL))
        ser2net = procs[-1]

        def listening():
            if ser2net.poll() is not None:
                raise BoardlabError(f"serial line {name}: ser2net exited with {ser2net.returncode} "
                                    f"before it listened on port {port} ({cfg})")
            return tcp_open(port)
        wait_for(listening, what=f"ser2net on port {port}")
        yield workdir / "uart.sock"
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=10)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="Unix socket QEMU's UART connects to")
    ap.add_argument("--link", required=True, help="symlink to the pty, for ser2net")
    ap.add_argument("--baud", type=int, default=0,
                    help="deliver typed characters at this line rate (0: at once)")
    args = ap.parse_args(argv)
    serve(args.socket, args.link, args.baud)
    return 0


if __name__ == "__main__":
    sys.exit(main())
