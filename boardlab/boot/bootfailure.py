"""What a failed boot leaves behind and says, for BoardStrategy (a mixin: it needs the
strategy's console, power and last boot record): the console log saved, the board
powered off whatever failed (or the failure to do so said loudly), and a reason that
names the cause - a panic quoted, a hang with the milestone that was due, a timeout
with the milestone waited for."""
from __future__ import annotations

import time

from pexpect import TIMEOUT

from boardlab.boot import bootlog, bootwatch
from boardlab.boot.bootlog import BootError
from boardlab.errors import INPUT
from boardlab.measure import console as con


class BootFailures:
    """Failure handling of BoardStrategy; it provides _power_off, timeout(), console,
    last_boot, boot_count, log_dir and logger."""

    @property
    def _stamps(self) -> con.ConsoleTimestamper:
        ts = getattr(self.console, "timestamper", None)
        if ts is None:
            raise BootError("the console driver keeps no timestamps: use "
                            "TimestampingSerialDriver in the environment file", party=INPUT)
        return ts

    def _rx_lines(self) -> list[str]:
        return [ln.text for ln in self._stamps.snapshot() if ln.kind == con.RX]

    def _check_hang(self, plan, patterns, expected):
        if not expected:
            return
        lines = self._stamps.snapshot()
        t0 = con.origin_time(lines)
        rx = [ln for ln in lines if ln.kind == con.RX and ln.t >= t0]
        hang = bootwatch.overdue(expected, con.find_milestones(lines, patterns), patterns,
                                 time.monotonic() - t0, rx[-1].t - t0 if rx else None,
                                 rx[-1].text if rx else "the load command")
        if hang:
            self._fail(hang.reason(plan.kernel.name), self._reached(patterns), kernel_fault=True)

    def _reached(self, patterns):
        return con.reached(self._stamps.snapshot(), patterns)

    def _timeout(self, patterns):
        self._fail(f"timeout: no {con.next_milestone(self._stamps.snapshot(), patterns)!r} within "
                   f"{self.timeout('boot_s'):.0f} s of the load command", self._reached(patterns),
                   kernel_fault=True)

    def _panic(self, patterns):
        end = time.monotonic() + 1.5   # let the panic report finish, then quote it
        while time.monotonic() < end:
            try:
                self.console.read(size=4096, timeout=0.3)
            except TIMEOUT:
                break
        lines = self._rx_lines()
        first = next(i for i, t in enumerate(lines) if "Kernel panic" in t)
        text = "\n".join(lines[max(0, first - 3):first + 1])
        self._fail(f"kernel panic:\n{text}", self._reached(patterns), tail_lines=0, kernel_fault=True)

    def _save_log(self, outcome) -> str:
        return bootlog.save_log(self.last_boot, bootlog.log_dir(self.log_dir), self.boot_count,
                                outcome)

    def _abandon(self, outcome) -> str:
        """Save the console log and power the board off, whatever failed; returns
        the state the board is left in, in words."""
        if self.last_boot is not None:
            try:
                self.last_boot.lines = self._stamps.snapshot()
                self.last_boot.log_path = self._save_log(outcome)
            except OSError as e:
                self.logger.warning("could not save the console log: %s", e)
        try:
            self._power_off()
            return "the board is powered off"
        except BootError as e:
            return e.reason

    def _fail(self, reason, milestone, tail_lines=12, kernel_fault=False, part=""):
        """Save the console log, power the board off, raise BootError (kernel_fault: the
        kernel under test failed by itself, not the lab; part: the lab's that did)."""
        state = self._abandon(f"FAILED: {reason.splitlines()[0]}")
        tail = self._rx_lines()[-tail_lines:] if tail_lines else []
        log_path = self.last_boot.log_path if self.last_boot is not None else None
        raise BootError(f"{reason}\n({state})", milestone=milestone, log_path=log_path,
                        tail=tail, kernel_fault=kernel_fault, part=part)
