"""The virtual board's serial cable (boardlab.vlab.cable): what the board writes reaches the
line's reader whole and in order, however far behind the reader falls; only while nobody
reads the line at all is it dropped, as on a real one."""
import os
import socket
import threading
import time

import pytest

from boardlab.vlab import cable


@pytest.fixture
def plugged(tmp_path):
    """A cable running in a thread, and the board's end plugged into it."""
    c = cable.Cable(str(tmp_path / "uart.sock"), str(tmp_path / "line.tty"))
    stop = threading.Event()
    t = threading.Thread(target=c.run, args=(lambda: not stop.is_set(),), daemon=True)
    t.start()
    board = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    board.connect(str(tmp_path / "uart.sock"))
    try:
        yield board, tmp_path / "line.tty"
    finally:
        board.close()
        stop.set()
        t.join(timeout=10)


def read_line_until(link, end: bytes, timeout=10.0, once_open=lambda: None) -> bytes:
    """Open the line as ser2net does (then call once_open) and read until `end` has come."""
    fd = os.open(link, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    once_open()
    got, deadline = bytearray(), time.monotonic() + timeout
    try:
        while not got.endswith(end) and time.monotonic() < deadline:
            try:
                got += os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.01)
    finally:
        os.close(fd)
    return bytes(got)


def test_a_reader_that_falls_behind_gets_every_byte_in_order(plugged):
    """A boot's worth of output (300 kB, about a phase-log boot's) written at once while the
    line's reader is away for a second: the pty alone holds about 15 kB, and the rest once
    went missing mid-line (an A/A comparison of one kernel found initcalls in one boot only)."""
    board, link = plugged
    sent = b"".join(b"[%9.6f] calling  initcall_%05d+0x0/0x14 @ 1\r\n" % (i / 1e4, i) for i in range(6000))
    board.sendall(sent + b"END\r\n")
    time.sleep(1.0)                            # ser2net not scheduled, on a busy host
    assert read_line_until(link, b"END\r\n") == sent + b"END\r\n"


def test_while_nobody_reads_the_line_the_board_is_not_held_up(plugged, monkeypatch):
    """Nobody reads: what waits is dropped after NOBODY_READS_S, and what the board writes
    once a reader has come gets through. (The board's next line is written after the
    reader opens the line: written before, it waits in a pty still full of the dropped
    output, and a reader that a busy host lets in later than NOBODY_READS_S finds it
    dropped too, rightly; a first CI run on a fresh host once failed so.)"""
    monkeypatch.setattr(cable, "NOBODY_READS_S", 1.0)
    board, link = plugged
    board.sendall(b"x" * 200_000)
    time.sleep(3.0)         # dropped by 1.5 s (the cable looks every NOBODY_READS_S / 2)
    got = read_line_until(link, b"after\r\n", once_open=lambda: board.sendall(b"after\r\n"))
    assert got.endswith(b"after\r\n") and len(got) < 200_000


def test_a_new_power_on_drops_what_the_last_one_left_unread(plugged, tmp_path):
    """The last boot's output still waiting for a reader is not handed on as this boot's
    (the pty's own few kB may be: the strategy drains the console before power-on)."""
    board, link = plugged
    board.sendall(b"old" * 100_000)
    time.sleep(0.3)
    board.close()
    again = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    again.connect(str(tmp_path / "uart.sock"))
    try:
        time.sleep(0.3)
        again.sendall(b"U-Boot\r\n")
        got = read_line_until(link, b"U-Boot\r\n")
    finally:
        again.close()
    assert got.endswith(b"U-Boot\r\n") and len(got) < 300_000 - 100_000


def test_a_short_boot_nobody_read_is_gone_before_the_next_reader_comes(plugged, monkeypatch):
    """A person's power cycle with no console open: U-Boot's countdown and prompt, a few
    hundred bytes, fit in the pty itself. Nobody reads them for NOBODY_READS_S: dropped, as
    on a real line, so the next reader (LAVA, connecting before its own power-on) is not
    handed an old 'Hit any key to stop autoboot' to answer (the chaos bench saw LAVA type
    its first command into the real countdown, which took the 's' as its key)."""
    monkeypatch.setattr(cable, "NOBODY_READS_S", 1.0)
    board, link = plugged
    board.sendall(b"Hit any key to stop autoboot:  2  1  0 \r\n=> ")
    time.sleep(2.5)         # the cable looks at least once a second
    got = read_line_until(link, b"fresh\r\n", once_open=lambda: board.sendall(b"fresh\r\n"))
    assert got == b"fresh\r\n"
