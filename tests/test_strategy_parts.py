"""The strategy's parts on a fake console, without a board: each is made of what it is
given (the drivers, the plan, the boots, the timeouts) and nothing else. The same parts
on a scripted console behind ser2net: test_scripted_boards."""
import logging
import time
from pathlib import Path

import attr
import pytest
from labgrid import Target
from labgrid.driver.fake import FakeConsoleDriver
from labgrid.step import step, steps
from pexpect import TIMEOUT

from boardlab.boot import bootplan
from boardlab.boot.bootfailure import BootFailures, unwind_steps
from boardlab.boot.bootlog import BootError, Boots, KernelBootError, LabBootError
from boardlab.boot.bootwatch import Expected
from boardlab.boot.kernelboot import KernelToShell
from boardlab.boot.strategy import BoardStrategy
from boardlab.boot.ubootdialog import UBootDialog
from boardlab.errors import KERNEL
from boardlab.facts.board import load_board
from boardlab.measure import console as con

BOARD = load_board("tqm860l")
LOG = logging.getLogger("test_strategy_parts")


@attr.s(eq=False)
class StampingFakeConsole(FakeConsoleDriver):
    """labgrid's FakeConsoleDriver with line stamps, as TimestampingSerialDriver keeps
    them, a serial port's read (TIMEOUT when nothing came) and an answer to each line
    sent that starts with one of `answers`."""
    answers = attr.ib(factory=dict)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.timestamper = con.ConsoleTimestamper()

    def _read(self, size=1, timeout=0.0, max_size=None):
        if not self.rxq:
            time.sleep(min(timeout, 0.02))
            raise TIMEOUT("nothing came")
        data = self.rxq.pop()
        self.timestamper.feed(data, time.monotonic())
        return data

    def _write(self, data, *_):
        self.timestamper.sent(data, time.monotonic())
        self.txq.append(data)
        self.rxq[:0] = [answer for start, answer in self.answers.items() if data.startswith(start)]
        return len(data)

    def board_prints(self, text: bytes):
        self.rxq.insert(0, text)


@pytest.fixture
def console():
    target = Target("parts")
    console = StampingFakeConsole(target, "console")
    target.activate(console)
    # A board prints before it is spoken to. Without a first read, labgrid's step logger
    # (SerialLoggingReporter.flush) raises KeyError for a console that only wrote, and
    # labgrid turns that into a warning in whichever later test of the session flushes.
    console.board_prints(b"\r\n")
    console.read()
    return console


def failures_of(console, plan, tmp_path, power_off=None):
    boots = Boots(BOARD.name)
    boots.begin(plan, str(tmp_path))
    offs = []
    return BootFailures(console=console, boots=boots,
                        power_off=power_off or (lambda: offs.append("off")), logger=LOG), offs


PLAN = bootplan.plan_boot(BOARD, "tftp:tqm860l/uImage-2.4.25", "nfs")


def test_the_strategy_inherits_only_labgrids_and_each_part_names_what_it_needs():
    assert [c for c in BoardStrategy.__mro__[1:] if c.__module__.startswith("boardlab")] == []
    for part in (UBootDialog, KernelToShell, BootFailures):
        assert part.__mro__[1:] == (object,), part
        with pytest.raises(TypeError, match="missing"):
            part()


def test_the_first_load_is_the_origin_and_a_tftp_error_is_stopped_and_named(console, tmp_path):
    console.answers = {b"tftpboot": b"TFTP error: 'File not found' (1)\r\nStarting again\r\n",
                       b"\x03": b"\r\nAbort\r\n=> "}
    failures, offs = failures_of(console, PLAN, tmp_path)
    dialog = UBootDialog(board=BOARD, console=console, uboot=None, activate=console.target.activate,
                         deactivate=console.target.deactivate, power=None, failures=failures, logger=LOG,
                         timeout={"uboot_s": 1, "load_s": 5}.get)
    with pytest.raises(BootError) as failed:
        dialog.load(PLAN.loads[0], origin=True)
    marks = {ln.text: ln.t for ln in console.timestamper.snapshot() if ln.kind == con.MARK}
    assert marks["load"] - marks["load command sent"] == \
        pytest.approx(con.line_time_s(PLAN.loads[0].command, BOARD.console.baud))
    assert console.txq[-1] == b"\x03", "Ctrl-C did not stop U-Boot's retry"
    assert "tqm860l/uImage-2.4.25 is not on the TFTP server 192.168.20.1" in str(failed.value)
    assert failed.value.part == "tftp" and isinstance(failed.value, LabBootError)
    assert offs == ["off"] and "(the board is powered off)" in str(failed.value)
    assert "outcome FAILED" in Path(failed.value.log_path).read_text().splitlines()[0]


def test_a_panic_is_the_kernels_fault_quoted_with_the_last_milestone(console, tmp_path):
    failures, offs = failures_of(console, PLAN, tmp_path)
    kernel = KernelToShell(plan=PLAN, board=BOARD, console=console, shell=None, activate=console.target.activate,
                           boots=failures.boots, failures=failures,
                           boot_s=5, shell_s=1, expected=Expected())
    console.timestamper.mark("load", time.monotonic())
    console.board_prints(b"Linux version 2.4.25 (wd@pollux) #1\r\nVFS: Cannot open root device\r\n"
                         b"Kernel panic: VFS: Unable to mount root fs on 02:00\r\n")
    with pytest.raises(BootError) as failed:
        kernel.await_login()
    assert isinstance(failed.value, KernelBootError) and failed.value.party == KERNEL
    assert failed.value.milestone.startswith("Linux version at ")
    assert "kernel panic:\n" in str(failed.value) and "Unable to mount root fs on 02:00" in str(failed.value)
    assert offs == ["off"]


def test_a_power_off_that_fails_is_said_not_claimed(console, tmp_path):
    def power_off():
        raise LabBootError("power off of tqm860l failed (POWER-OFF FAILED, the board may still be on)",
                           part="power")
    failures, _ = failures_of(console, PLAN, tmp_path, power_off)
    with pytest.raises(BootError) as failed:
        failures.fail("U-Boot command 'setenv' did not come back", None, part="uboot")
    assert "(power off of tqm860l failed (POWER-OFF FAILED" in str(failed.value)
    assert "powered off" not in str(failed.value)
    assert failed.value.part == "uboot" and failed.value.log_path == failures.boots.last.log_path


@pytest.mark.parametrize("lands_in", ["start", "stop"])
def test_ctrl_c_while_a_nested_step_logs_stays_a_ctrl_c(lands_in):
    """A Ctrl-C while labgrid logs a nested step's start or stop (the power switch's, inside
    the transition) leaves that step on labgrid's stack; the transition's handler unwinds it,
    so the interrupt reaches the caller as itself, not as labgrid's AssertionError."""
    @step(title="power-switch")
    def switch():
        pass

    def transition(unwind):
        @step(title="transition")
        def go(step):
            try:
                switch()
            except BaseException:   # as BoardStrategy._go: never leave the board on
                if unwind:
                    unwind_steps(step)
                raise
        go()

    def ctrl_c(event):
        if event.step.title == "power-switch" and event.data.get("state", "") == lands_in:
            raise KeyboardInterrupt   # labgrid's notify passes on what is not an Exception

    steps.subscribe(ctrl_c)
    try:
        with pytest.raises(AssertionError):   # what labgrid gives without the unwind
            transition(unwind=False)
        while (stale := steps.get_current()) is not None:   # what that left on labgrid's stack
            stale.stop() if stale.is_active else steps.pop(stale)
        with pytest.raises(KeyboardInterrupt):
            transition(unwind=True)
        assert steps.get_current() is None, "steps left on labgrid's stack"
    finally:
        steps.unsubscribe(ctrl_c)
