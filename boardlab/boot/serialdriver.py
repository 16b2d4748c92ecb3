"""The console driver every board's environment uses: labgrid's SerialDriver that
stamps each console line with the host arrival time of its first character; and the
stamps of a bound console, as the strategy's parts read them."""
from __future__ import annotations

import os
import time

import attr

from labgrid.driver import SerialDriver
from labgrid.factory import target_factory

from boardlab.boot.bootlog import BootInputError
from boardlab.measure import console as con


@target_factory.reg_driver
@attr.s(eq=False)
class TimestampingSerialDriver(SerialDriver):
    """SerialDriver that stamps every console line with the host arrival time of its
    first character, and records what is sent. The strategy reads .timestamper."""

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.timestamper = con.ConsoleTimestamper()
        # BOARDLAB_RAW_CONSOLE=FILE: also record every chunk as read (for parser tests)
        self.raw_capture = os.environ.get("BOARDLAB_RAW_CONSOLE")

    def _read(self, size: int = 1, timeout: float = 0.0, max_size: int = None):
        data = super()._read(size=size, timeout=timeout, max_size=max_size)
        if data:
            now = time.monotonic()
            self.timestamper.feed(data, now)
            if self.raw_capture:
                con.append_raw_chunk(self.raw_capture, now, data)
        return data

    def _write(self, data: bytes):
        self.timestamper.sent(data, time.monotonic())
        return super()._write(data)

    def reconnect(self):
        """A fresh connection to the port (ser2net may have restarted since the last
        boot); the pexpect buffer goes with the old one."""
        self.close()
        self.open()
        self._expect.buffer = b""  # pylint: disable=protected-access


def timestamps(console) -> con.ConsoleTimestamper:
    """The stamped lines of a console driver (TimestampingSerialDriver's); BootError
    naming the driver to use when the environment binds another."""
    ts = getattr(console, "timestamper", None)
    if ts is None:
        raise BootInputError("the console driver keeps no timestamps: use "
                             "TimestampingSerialDriver in the environment file")
    return ts


def received(console) -> list[str]:
    """The text of every line the console received since its stamps were last cleared."""
    return [ln.text for ln in timestamps(console).snapshot() if ln.kind == con.RX]
