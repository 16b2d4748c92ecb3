"""What a failed boot leaves behind and says, a part of BoardStrategy: the console log
saved, the board powered off whatever failed (or the failure to do so said loudly), and
a reason that names the cause - a panic quoted, a hang with the milestone that was due,
a timeout with the milestone waited for."""
from __future__ import annotations

import socket
import time

import attr
from labgrid.step import steps
from pexpect import EOF, TIMEOUT
from serial import SerialException

from boardlab.boot import bootlog, bootwatch
from boardlab.boot.bootlog import BootError, Boots, KernelBootError, LabBootError
from boardlab.boot.serialdriver import received, timestamps
from boardlab.measure import console as con

# what a console whose ser2net restarted or whose lab host went away raises (not any
# OSError: a full disk or a permission is no reason to suspect ser2net)
CONSOLE_LOST = (EOF, EOFError, ConnectionError, socket.timeout, SerialException)


def unwind_steps(to) -> None:
    """labgrid's step stack back to the step `to` (the transition's own), the steps above
    it stopped. A Ctrl-C that lands while a nested step logs its start or stop (labgrid's
    notify) leaves that step on the stack, and the transition's own stop would then fail
    labgrid's assertion in place of the KeyboardInterrupt (a traceback, exit 1)."""
    if to is None or not to.is_active:
        return
    while (top := steps.get_current()) is not None and top is not to:
        if top.is_active:
            top.stop()   # said and popped
        else:
            steps.pop(top)   # interrupted in its stop, after it was said


@attr.s(eq=False, kw_only=True)
class BootFailures:
    """A failed boot's end. It holds nothing of its own: what it saves is the record of
    the boot in progress (boots.last), what it quotes is the console's."""
    console = attr.ib()     # the console driver: its stamped lines, the rest of a panic report
    boots = attr.ib(validator=attr.validators.instance_of(Boots))   # the boot that failed
    power_off = attr.ib()   # the strategy's power-off (it keeps the strategy's status): BootError if it fails
    logger = attr.ib()

    def reached(self, patterns):
        """The last milestone of patterns the console has shown."""
        return con.reached(timestamps(self.console).snapshot(), patterns)

    def check_hang(self, plan, patterns, expected):
        """Fail the boot when the console has been silent past the next milestone's due time
        (expected: a bootwatch.Expected; empty, no judgement)."""
        if not expected:
            return
        lines = timestamps(self.console).snapshot()
        t0 = con.origin_time(lines)
        rx = [ln for ln in lines if ln.kind == con.RX and ln.t >= t0]
        hang = bootwatch.overdue(expected, con.find_milestones(lines, patterns), patterns,
                                 time.monotonic() - t0, rx[-1].t - t0 if rx else None,
                                 rx[-1].text if rx else "the load command")
        if hang:
            self.fail(hang.reason(plan.kernel.name), self.reached(patterns), kind=KernelBootError)

    def timeout(self, patterns, boot_s: float):
        self.fail(f"timeout: no {con.next_milestone(timestamps(self.console).snapshot(), patterns)!r} "
                  f"within {boot_s:.0f} s of the load command", self.reached(patterns), kind=KernelBootError)

    def panic(self, patterns):
        end = time.monotonic() + 1.5   # let the panic report finish, then quote it
        while time.monotonic() < end:
            try:
                self.console.read(size=4096, timeout=0.3)
            except TIMEOUT:
                break
        lines = received(self.console)
        first = next(i for i, t in enumerate(lines) if "Kernel panic" in t)
        text = "\n".join(lines[max(0, first - 3):first + 1])
        self.fail(f"kernel panic:\n{text}", self.reached(patterns), tail_lines=0, kind=KernelBootError)

    def console_lost(self, e: BaseException):
        self.fail(f"the console ({bootlog.console_where(self.console)}) failed: "
                  f"{type(e).__name__}: {e}. Is ser2net running there (did it restart, "
                  f"or the lab host go away)?", None, part="console")

    def abandon(self, outcome) -> str:
        """Save the console log and power the board off, whatever failed; returns
        the state the board is left in, in words."""
        if self.boots.last is not None:
            try:
                self.boots.last.lines = timestamps(self.console).snapshot()
                self.boots.save(outcome)
            except OSError as e:
                self.logger.warning("could not save the console log: %s", e)
        try:
            self.power_off()
            return "the board is powered off"
        except BootError as e:
            return e.reason

    def fail(self, reason, milestone, tail_lines=12, kind=LabBootError, part=""):
        """Save the console log, power the board off, raise kind (KernelBootError: the
        kernel under test failed by itself; LabBootError: the lab did, part says where)."""
        state = self.abandon(f"FAILED: {reason.splitlines()[0]}")
        tail = received(self.console)[-tail_lines:] if tail_lines else []
        log_path = self.boots.last.log_path if self.boots.last is not None else None
        raise kind(f"{reason}\n({state})", milestone=milestone, log_path=log_path, tail=tail, part=part)
