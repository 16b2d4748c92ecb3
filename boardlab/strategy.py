"""The one strategy every board uses, real or virtual: off -> uboot -> shell.

The boot itself is planned by boardlab.bootplan from the board's facts (files to stage,
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
import time

import attr
from pexpect import TIMEOUT

from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy

from . import bootlog, bootplan, clocks, staging
from . import console as con
from .bootlog import BootError, BootRecord
from .facts import load_board
from .serialdriver import TimestampingSerialDriver

# the environment files import this module: it registers both with labgrid
__all__ = ["BoardStrategy", "BootError", "Status", "TimestampingSerialDriver"]


class Status(enum.Enum):
    unknown = 0
    off = 1
    uboot = 2
    shell = 3


@target_factory.reg_driver
@attr.s(eq=False)
class BoardStrategy(Strategy):
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
        self.booted = None        # the selection of the running kernel, when at shell
        self.last_boot = None     # BootRecord of the last boot attempt
        self.boot_count = 0
        self.deadline = 0.0       # of the boot in progress: load command + boot_s

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
        if status == Status.shell and self.status == Status.shell \
                and self.booted == self.selection:
            step.skip("the running kernel is the one asked for")
            return
        if status == self.status and status != Status.shell:
            step.skip("nothing to do")
            return
        if status == Status.off:
            self._power_off()
        elif status == Status.uboot:
            self._to_uboot(self.plan())
        elif status == Status.shell:
            self._to_shell(self.plan())
        self.status = status

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
            self.power.off()
        except Exception as e:  # noqa: BLE001 - any power driver's error
            self.status = Status.unknown
            raise BootError(f"power off of {self.board.name} failed: the power switch "
                            f"({self.board.power.url}) did not answer: "
                            f"{type(e).__name__}: {e}") from None
        self.status = Status.off

    def _flush_console(self):
        """Drop whatever the console had buffered (an earlier boot's output)."""
        while True:
            try:
                self.console.read(size=65536, timeout=0.01)
            except TIMEOUT:
                break
        self.console._expect.buffer = b""  # pylint: disable=protected-access

    @property
    def _stamps(self) -> con.ConsoleTimestamper:
        ts = getattr(self.console, "timestamper", None)
        if ts is None:
            raise BootError("the console driver keeps no timestamps: use "
                            "TimestampingSerialDriver in the environment file")
        return ts

    def _rx_lines(self) -> list[str]:
        return [ln.text for ln in self._stamps.snapshot() if ln.kind == con.RX]

    @step()
    def _to_uboot(self, plan):
        self._power_off()
        self.target.activate(self.console)
        self._flush_console()
        self._stamps.clear()
        self.boot_count += 1
        self.last_boot = BootRecord(self.board.name, plan.kernel, plan.root, ramdisk=plan.ramdisk)
        t_on = time.monotonic()
        self._stamps.mark("power on", t_on)
        try:
            self.power.on()
        except Exception as e:  # noqa: BLE001 - any power driver's error
            self._fail(f"power on failed: {type(e).__name__}: {e}", None)
        self.last_boot.qemu_clock = clocks.switch_clock(self.board)
        uboot_s = self.timeout("uboot_s")
        self.uboot.login_timeout = int(uboot_s)   # the facts', or this strategy's override
        error = None
        for attempt in range(3):
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
            else:
                reason = (f"no U-Boot prompt {self.board.uboot.prompt!r} within "
                          f"{uboot_s:.0f} s of power-on, although the board "
                          f"printed {len(got)} lines: wrong prompt in the facts, or U-Boot did "
                          f"not stop autoboot ({type(error).__name__})")
            self._fail(reason, None)
        self._stamps.mark("uboot prompt", time.monotonic())
        self.last_boot.power_on_to_uboot_s = round(time.monotonic() - t_on, 4)

    def _uboot_cmd(self, cmd, timeout=10.0):
        """Send one U-Boot command and wait for the prompt; returns the output."""
        self.console.sendline(cmd)
        _, before, _, _ = self.console.expect(re.escape(self.board.uboot.prompt), timeout=timeout)
        return before.decode("utf-8", "replace")

    def stage(self, local) -> str:
        """Put a file into the board's TFTP directory on its lab host (boardlab.staging);
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
        load_s = self.timeout("load_s")
        self._stamps.mark("load", time.monotonic())  # the origin of boot time
        for load in plan.loads:
            try:
                out = self._uboot_cmd(load.command, timeout=load_s)
            except TIMEOUT:
                self._fail(f"loading {load.file} by TFTP did not finish within {load_s:.0f} s", None)
            problem = bootplan.uboot_fault(out, bootplan.LOAD_FAULTS, load.file,
                                           self.board.network.server_ip)
            if problem:
                self._fail(problem, None)
        self.console.sendline(plan.boot_command)
        self._await_login(plan)
        self._login(plan)
        self.booted = self.selection

    def _await_login(self, plan):
        """Wait for the login prompt; a panic or a U-Boot image error ends the boot."""
        kernel_patterns = plan.milestones[:-1]   # up to the login prompt
        self.deadline = time.monotonic() + self.timeout("boot_s")
        faults = [f.pattern for f in plan.boot_faults]
        expect = [bootplan.PANIC] + faults + [self.board.shell.login_prompt]
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self._timeout(kernel_patterns)
            try:
                index, _, match, _ = self.console.expect(expect, timeout=min(remaining, 5.0))
            except TIMEOUT:
                continue
            if index == 0:
                self._panic(kernel_patterns)
            elif index < len(expect) - 1:
                problem = bootplan.uboot_fault(match.group(0).decode("utf-8", "replace"),
                                               plan.boot_faults, plan.loads[0].file,
                                               self.board.network.server_ip)
                self._fail(problem, self._reached(kernel_patterns))
            return

    def _login(self, plan):
        """The login prompt was consumed: answer it; the shell driver handles a password
        prompt and checks the shell prompt. Then the guest's own milestone times."""
        self.console.sendline(self.board.shell.username)
        try:
            self.shell.login_timeout = max(10, int(self.deadline - time.monotonic()))
            self.target.activate(self.shell)
            self.shell.run("dmesg -n 1")   # kernel messages off the console: clean command output
            out, _, _ = self.shell.run(con.GUEST_GREP)
            self.last_boot.guest_milestones = con.guest_milestones(out)
        except Exception as e:  # noqa: BLE001
            self._fail(f"no shell after the login prompt: {type(e).__name__}: {e}",
                       self._reached(plan.milestones))
        rec = self.last_boot
        rec.lines = self._stamps.snapshot()
        rec.milestones = con.find_milestones(rec.lines, plan.milestones)
        rec.log_path = self._save_log("ok")

    def _reached(self, patterns):
        return con.reached(self._stamps.snapshot(), patterns)

    def _timeout(self, patterns):
        self._fail(f"timeout: no {con.next_milestone(self._stamps.snapshot(), patterns)!r} within "
                   f"{self.timeout('boot_s'):.0f} s of the load command", self._reached(patterns))

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
        self._fail(f"kernel panic:\n{text}", self._reached(patterns), tail_lines=0)

    def _save_log(self, outcome) -> str:
        return bootlog.save_log(self.last_boot, bootlog.log_dir(self.log_dir), self.boot_count,
                                outcome)

    def _fail(self, reason, milestone, tail_lines=12):
        """Save the console log, power the board off, raise BootError."""
        log_path = None
        if self.last_boot is not None:
            self.last_boot.lines = self._stamps.snapshot()
            log_path = self.last_boot.log_path = self._save_log(
                f"FAILED: {reason.splitlines()[0]}")
        try:
            self._power_off()
        finally:
            self.status = Status.off
        tail = self._rx_lines()[-tail_lines:] if tail_lines else []
        raise BootError(reason, milestone=milestone, log_path=log_path, tail=tail)
