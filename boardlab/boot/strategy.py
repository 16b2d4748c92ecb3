"""The one strategy every board uses, real or virtual: off -> uboot -> shell.

The boot itself is planned by boardlab.boot.bootplan from the board's facts (files to stage,
U-Boot commands, console patterns); this strategy executes the plan: stage, send the
commands one per line (every U-Boot dialect takes that), time the console from the
moment the load command is sent, log in. No systemd assumption: busybox/sysvinit
boards reach the shell when the login prompt has been answered and a prompt came back.

Failures raise BootError with the reason, the last milestone reached and the path of
the saved console log; the board is powered off first, so it is in a known state."""
from __future__ import annotations

import enum
import os
import re
import socket
import time

import attr
from pexpect import EOF, TIMEOUT
from serial import SerialException

from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy

from boardlab.boot import bootlog, bootplan, bootwatch, powerctl, staging
from boardlab.measure import clocks
from boardlab.boot.bootfailure import BootFailures
from boardlab.boot.boardlock import BoardLock
from boardlab.measure import console as con
from boardlab.boot.bootlog import BootError, BootRecord
from boardlab.facts.board import load_board
from boardlab.boot.serialdriver import TimestampingSerialDriver

# the environment files import this module: it registers both with labgrid
__all__ = ["BoardStrategy", "BootError", "Status", "TimestampingSerialDriver"]


# what a console whose ser2net restarted or whose lab host went away raises (not any
# OSError: a full disk or a permission is no reason to suspect ser2net)
CONSOLE_LOST = (EOF, EOFError, ConnectionError, socket.timeout, SerialException)


class Status(enum.Enum):
    unknown = 0
    off = 1
    uboot = 2
    shell = 3


@target_factory.reg_driver
@attr.s(eq=False)
class BoardStrategy(BootFailures, Strategy):
    """Power-off to shell for any board, with the boot timed. `facts` names the
    board's facts file (boards/<name>.yaml); `kernel` and `root` select what to boot
    (empty: the board's defaults). A kernel is a name from the facts' images, a path
    to a uImage file (staged to the TFTP directory), or 'tftp:<name>' for a file
    already on the TFTP server."""

    bindings = {
        "power": "PowerProtocol",
        "console": "ConsoleProtocol",
        "uboot": "UBootDriver",   # or a subclass (SmallUBootDriver): only the prompt is used
        "shell": "ShellDriver",
        "tftp": {"TFTPProviderDriver", None},
    }

    facts = attr.ib(validator=attr.validators.instance_of(str))
    kernel = attr.ib(default="", validator=attr.validators.instance_of(str))
    root = attr.ib(default="", validator=attr.validators.instance_of(str))
    ramdisk = attr.ib(default="", validator=attr.validators.instance_of(str))
    log_dir = attr.ib(default="", validator=attr.validators.instance_of(str))
    uboot_timeout = attr.ib(default=0.0, converter=float)   # 0: the board's facts
    boot_timeout = attr.ib(default=0.0, converter=float)
    status = attr.ib(default=Status.unknown)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        path = self.facts
        if self.target.env and not os.path.isabs(path):
            path = self.target.env.config.resolve_path(path)
        self.board = load_board(path)
        self.lock = BoardLock(self.board.name)   # taken by the first transition
        self.booted = None        # the selection of the running kernel, when at shell
        self.last_boot = None     # BootRecord of the last boot attempt
        self.boot_count = 0
        self.deadline = 0.0       # of the boot in progress: load command + boot_s
        # (board, kernel) -> bootwatch.Expected, when each milestone is due: given by whoever
        # runs the boot (boardlab.judge.baselines.milestones_due); None: hangs end at boot_s
        self.milestones_due = None

    # ---- selection -------------------------------------------------------------------
    def select(self, kernel=None, root=None, ramdisk=None):
        """Choose what the next shell transition boots (None keeps the current,
        '' goes back to the board's default)."""
        if kernel is not None:
            self.kernel = kernel
        if root is not None:
            self.root = root
        if ramdisk is not None:
            self.ramdisk = ramdisk

    @property
    def selection(self) -> tuple:
        """(kernel, root, ramdisk) as asked for; empty kernel and root: $BOARDLAB_KERNEL
        and $BOARDLAB_ROOT, then the board's defaults."""
        return (self.kernel or os.environ.get("BOARDLAB_KERNEL") or None,
                self.root or os.environ.get("BOARDLAB_ROOT") or None, self.ramdisk or None)

    def plan(self) -> bootplan.BootPlan:
        """The boot of the current selection (bootplan.plan_boot)."""
        kernel, root, ramdisk = self.selection
        provider = self.tftp.provider if self.tftp is not None else None
        try:
            return bootplan.plan_boot(self.board, kernel, root, ramdisk,
                                      provider.external if provider is not None else None)
        except bootplan.PlanError as e:
            raise BootError(str(e)) from None

    @property
    def kernel_under_test(self) -> bootplan.KernelUnderTest:
        return self.plan().kernel

    def timeout(self, name) -> float:
        override = {"uboot_s": self.uboot_timeout, "boot_s": self.boot_timeout}.get(name)
        return override or float(getattr(self.board.timeouts, name))

    # ---- transitions -----------------------------------------------------------------
    @step(args=["status"])
    def transition(self, status, *, step):  # pylint: disable=redefined-outer-name
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.unknown:
            raise BootError(f"can not transition to {status}")
        # One run per board: BoardBusy before anything touches another run's board. The
        # lock is held while the board is on and let go once it is off.
        self.lock.acquire()
        try:
            self._go(status, step)
        finally:
            if self.status == Status.off:
                self.lock.release()

    def _go(self, status, step):
        if status == Status.shell and self.status == Status.shell \
                and self.booted == self.selection:
            step.skip("the running kernel is the one asked for")
            return
        if status == self.status and status != Status.shell:
            step.skip("nothing to do")
            return
        try:
            if status == Status.off:
                self._power_off()
            elif status == Status.uboot:
                self._to_uboot(self.plan())
            elif status == Status.shell:
                self._to_shell(self.plan())
        except BootError:
            raise
        except CONSOLE_LOST as e:
            self._fail(f"the console ({bootlog.console_where(self.console)}) failed: "
                       f"{type(e).__name__}: {e}. Is ser2net running there (did it restart, "
                       f"or the lab host go away)?", None)
        except OSError as e:   # this machine's own: a file, a permission, a full disk
            self._fail(f"board {self.board.name}: {type(e).__name__}: {e}", None)
        except BaseException:   # Ctrl-C, or any other error: never leave the board on
            self._abandon("interrupted" if status != Status.off else "power-off interrupted")
            raise
        self.status = status

    def release_board(self):
        """Let other runs have the board, left as it is (a test session that keeps the
        board at its shell for the next test, before a subprocess uses the board)."""
        self.lock.release()

    def force(self, status):
        if not isinstance(status, Status):
            status = Status[status]
        driver = {Status.off: self.power, Status.uboot: self.uboot, Status.shell: self.shell}
        self.target.activate(driver[status])
        self.status = status

    def reboot(self):
        """A fresh boot of the selected kernel, even if it is running already."""
        self.booted = None
        self.transition(Status.shell)
        return self.last_boot

    # ---- steps -----------------------------------------------------------------------
    @step()
    def _power_off(self):
        self.target.deactivate(self.shell)
        self.target.deactivate(self.uboot)
        self.target.activate(self.power)
        self.booted = None
        try:
            powerctl.switch(self.power, False, self.board)
        except powerctl.PowerError as e:
            self.status = Status.unknown
            raise BootError(f"{e} (POWER-OFF FAILED, the board may still be on)") from None
        self.status = Status.off

    def _flush_console(self):
        """Drop whatever the console had buffered (an earlier boot's output)."""
        while True:
            try:
                self.console.read(size=65536, timeout=0.01)
            except TIMEOUT:
                break
        self.console._expect.buffer = b""  # pylint: disable=protected-access

    @step()
    def _to_uboot(self, plan):
        self._power_off()
        # this boot's record first: whatever fails from here is logged as this boot's,
        # never over the last (good) boot's log
        self.boot_count += 1
        self.last_boot = BootRecord(self.board.name, plan.kernel, plan.root, ramdisk=plan.ramdisk)
        self.target.activate(self.console)
        if hasattr(self.console, "reconnect"):   # ser2net may have restarted since the last boot
            self.console.reconnect()
        self._flush_console()
        self._stamps.clear()
        t_on = time.monotonic()
        self._stamps.mark("power on", t_on)
        self.status = Status.unknown   # from here, only a power-off makes it known again
        try:
            powerctl.switch(self.power, True, self.board)
        except powerctl.PowerError as e:
            self._fail(str(e), None)
        self.last_boot.qemu_clock = clocks.switch_clock(self.board)
        uboot_s = self.timeout("uboot_s")
        self.uboot.login_timeout = int(uboot_s)   # the facts', or this strategy's override
        error = no_countdown = self._stop_autoboot(uboot_s)
        for attempt in range(3 if no_countdown is None else 0):
            try:
                self.target.activate(self.uboot)
                break
            except Exception as e:  # noqa: BLE001 - labgrid raises TIMEOUT or Exception
                error = e
                if self.board.uboot.prompt.strip() not in "\n".join(self._rx_lines()) or attempt == 2:
                    break
                # U-Boot is there but lost a character of the prompt check (typed while
                # it was leaving the autoboot countdown): ask again
                self.target.deactivate(self.uboot)
                self.console.sendline("")
        if not self.uboot.get_status():
            got = [t for t in self._rx_lines() if t.strip()]
            if not got:
                reason = (f"no U-Boot prompt: nothing at all came from the console within "
                          f"{uboot_s:.0f} s of power-on. Suspects: {bootlog.wiring(self.power, self.console, self.board)}")
            elif no_countdown is not None:
                reason = (f"no autoboot countdown {self.board.uboot.autoboot!r} within "
                          f"{uboot_s:.0f} s of power-on, although the board printed "
                          f"{len(got)} lines (last {got[-1]!r}): wrong uboot.autoboot in "
                          f"{self.board.path}, or the board's bootdelay is 0")
            else:
                reason = (f"no U-Boot prompt {self.board.uboot.prompt!r} within "
                          f"{uboot_s:.0f} s of power-on, although the board "
                          f"printed {len(got)} lines: wrong prompt in the facts, or U-Boot did "
                          f"not stop autoboot ({type(error).__name__})")
            self._fail(reason, None)
        self._stamps.mark("uboot prompt", time.monotonic())
        self.last_boot.power_on_to_uboot_s = round(time.monotonic() - t_on, 4)

    def _stop_autoboot(self, uboot_s: float):
        """Wait for this power cycle's autoboot countdown and stop it, before anything
        may count as a U-Boot prompt: a prompt left over from the last boot (a bad image
        ends at U-Boot's prompt; a console server may hand on what it still held) would
        else be taken for this one's, and the prompt check typed into the countdown.
        Returns the error when the countdown never came (None: stopped, or the board's
        facts name no autoboot message)."""
        autoboot = self.board.uboot.autoboot
        if not autoboot:
            return None
        try:
            self.console.expect(re.escape(autoboot), timeout=uboot_s)
        except TIMEOUT as e:
            return e
        self.console.write(self.uboot.interrupt.encode("ascii"))
        return None

    def _uboot_cmd(self, cmd, timeout=10.0):
        """Send one U-Boot command and wait for the prompt; returns the output."""
        self.console.sendline(cmd)
        try:
            _, before, _, _ = self.console.expect(re.escape(self.board.uboot.prompt), timeout=timeout)
        except TIMEOUT:
            self._stop_uboot_command()
            self._fail(f"U-Boot command {cmd!r} did not come back to the prompt "
                       f"{self.board.uboot.prompt!r} within {timeout:.0f} s", None)
        return before.decode("utf-8", "replace")

    def stage(self, local) -> str:
        """Put a file into the board's TFTP directory on its lab host (boardlab.boot.staging);
        returns the name U-Boot asks for."""
        provider = self.tftp.provider if self.tftp is not None else None
        internal = provider.internal if provider is not None else self.board.tftp.dir
        external = provider.external if provider is not None else self.board.tftp.prefix
        try:
            staging.stage(local, internal, getattr(provider, "host", None), self.logger.info)
        except (staging.StagingError, OSError) as e:
            self._fail(f"board {self.board.name}: cannot stage {local}: {e}", None)
        return external + local.name

    @step()
    def _to_shell(self, plan):
        self._to_uboot(plan)
        for local, _ in plan.stage:
            self.stage(local)
        for cmd in plan.setup_commands:
            self._uboot_cmd(cmd)
        for n, load in enumerate(plan.loads):
            self._load(load, origin=n == 0)
        self.console.sendline(plan.boot_command)
        self._await_login(plan)
        self._login(plan)
        self.booted = self.selection

    def _load(self, load, origin: bool):
        """One TFTP load. The first one's command is the origin of boot time: the
        moment U-Boot has all of it, its characters' time on the line after sending.
        A TFTP error ends the load at once: old U-Boot retries forever ('Starting
        again'), so Ctrl-C stops it before the board is powered off."""
        load_s = self.timeout("load_s")
        server = self.board.network.server_ip
        t_sent = time.monotonic()
        self.console.sendline(load.command)
        if origin:
            self._stamps.mark("load command sent", t_sent)
            self._stamps.mark("load", t_sent + con.line_time_s(load.command, self.board.console.baud))
        expect = [re.escape(self.board.uboot.prompt)] + [f.pattern for f in bootplan.LOAD_FAULTS]
        try:
            index, before, match, _ = self.console.expect(expect, timeout=load_s)
        except TIMEOUT:
            self._stop_uboot_command()
            self._fail(f"loading {load.file} from the TFTP server {server} did not finish "
                       f"within {load_s:.0f} s", None)
        out = before.decode("utf-8", "replace")
        if index > 0:
            out += match.group(0).decode("utf-8", "replace")
            self._stop_uboot_command()
        problem = bootplan.uboot_fault(out, bootplan.LOAD_FAULTS, load.file, server)
        if problem:
            self._fail(problem, None)

    def _stop_uboot_command(self):
        """Ctrl-C to U-Boot (a TFTP retry loop), and its prompt back if it comes."""
        self.console.write(b"\x03")
        try:
            self.console.expect(re.escape(self.board.uboot.prompt), timeout=2.0)
        except TIMEOUT:
            pass

    def _await_login(self, plan):
        """Wait for the login prompt; a panic or a U-Boot image error ends the boot."""
        kernel_patterns = plan.milestones[:-1]   # up to the login prompt
        self.deadline = time.monotonic() + self.timeout("boot_s")
        expected = (self.milestones_due(self.board.name, plan.kernel.name)
                    if self.milestones_due else bootwatch.Expected())
        faults = [f.pattern for f in plan.boot_faults]
        expect = [bootplan.PANIC] + faults + [self.board.shell.login_prompt]
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self._timeout(kernel_patterns)
            try:
                index, _, match, _ = self.console.expect(expect, timeout=min(remaining, 1.0))
            except TIMEOUT:
                self._check_hang(plan, kernel_patterns, expected)
                continue
            if index == 0:
                self._panic(kernel_patterns)
            elif index < len(expect) - 1:
                problem = bootplan.uboot_fault(match.group(0).decode("utf-8", "replace"),
                                               plan.boot_faults, plan.loads[0].file,
                                               self.board.network.server_ip)
                self._fail(problem, self._reached(kernel_patterns), kernel_fault=True)
            return

    def _login(self, plan):
        """The login prompt was consumed: answer it; the shell driver handles a password
        prompt and checks the shell prompt. Then the guest's own milestone times."""
        self.console.sendline(self.board.shell.username)
        try:
            self.shell.login_timeout = max(1, int(self.timeout("shell_s")))
            self.target.activate(self.shell)
            self.shell.run("dmesg -n 1")   # kernel messages off the console: clean command output
            out, _, _ = self.shell.run(con.GUEST_GREP)
            self.last_boot.guest_milestones = con.guest_milestones(out)
        except Exception as e:  # noqa: BLE001
            got = [t for t in self._rx_lines() if t.strip()]
            self._fail(f"no shell after the login prompt: expected the prompt "
                       f"{self.board.shell.prompt!r} (shell.prompt in {self.board.path}), "
                       f"the board printed {got[-1] if got else 'nothing'!r} last "
                       f"({type(e).__name__})", self._reached(plan.milestones), kernel_fault=True)
        rec = self.last_boot
        rec.lines = self._stamps.snapshot()
        rec.milestones = con.find_milestones(rec.lines, plan.milestones)
        rec.log_path = self._save_log("ok")
