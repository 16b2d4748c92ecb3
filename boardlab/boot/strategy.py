"""The one strategy every board uses, real or virtual: off -> uboot -> shell.

The boot itself is planned by boardlab.boot.bootplan from the board's facts (files to stage,
U-Boot commands, console patterns); this strategy executes the plan through parts it
makes of its bound drivers, each given what it needs: the U-Boot dialogue (ubootdialog:
stop autoboot, stage, one command per line, the loads timed from the moment the load
command is sent), the kernel's way to a shell (kernelboot: login, hang watch) and a
failed boot's end (bootfailure). No systemd assumption: busybox/sysvinit boards reach
the shell when the login prompt has been answered and a prompt came back.

Failures raise BootError with the reason, the last milestone reached and the path of
the saved console log; the board is powered off first, so it is in a known state."""
from __future__ import annotations

import enum
import functools
import os
import time

import attr

from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy

from boardlab.boot import bootlog, bootplan, milestonesdue, powerctl
from boardlab.sharing.boardlock import BoardLock
from boardlab.boot.bootfailure import CONSOLE_LOST, BootFailures, unwind_steps
from boardlab.boot.bootlog import BootError, BootInputError, Boots, LabBootError
from boardlab.boot.kernelboot import KernelToShell
from boardlab.boot.serialdriver import TimestampingSerialDriver, timestamps
from boardlab.boot.ubootdialog import UBootDialog
from boardlab.facts.board import load_board
from boardlab.measure import clocks, kernelid

# the environment files import this module: it registers both with labgrid
__all__ = ["BoardStrategy", "BootError", "Status", "TimestampingSerialDriver"]


def _input(planning, *args, **kwargs):
    """What bootplan works out; its PlanError a BootError of the input."""
    try:
        return planning(*args, **kwargs)
    except bootplan.PlanError as e:
        raise BootInputError(str(e)) from None


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
    phase_log = attr.ib(default=False, converter=bool)   # boot with the kernel's phase log
    kernel_args = attr.ib(default="", validator=attr.validators.instance_of(str))   # appended to bootargs
    # where the stored baselines are, which say when each boot milestone is due ('': kernels/)
    baselines_dir = attr.ib(default="", validator=attr.validators.instance_of(str))
    status = attr.ib(default=Status.unknown)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        path = self.facts
        if self.target.env and not os.path.isabs(path):
            path = self.target.env.config.resolve_path(path)
        self.board = load_board(path)
        self.lock = BoardLock(self.board.name)   # taken by the first transition
        self.booted = None        # the selection of the running kernel, when at shell
        self.boots = Boots(self.board.name)   # how many boots began, the last one's record
        # the strategy knows when each milestone is due from the baselines (boot.milestonesdue);
        # a caller may narrow it: (board, kernel) -> bootwatch.Expected, the earlier time wins
        self.milestones_due = None

    @property
    def last_boot(self) -> bootlog.BootRecord | None:   # the one in progress, once it began
        return self.boots.last

    @property
    def boot_count(self) -> int:
        return self.boots.count

    # ---- selection -------------------------------------------------------------------
    def select(self, kernel=None, root=None, ramdisk=None, phase_log=None, kernel_args=None):
        """Choose what the next shell transition boots (None keeps the current,
        '' goes back to the board's default); phase_log: with the kernel's phase log
        (initcall_debug: where the boot time went; not for milestone figures)."""
        asked = {"phase_log": phase_log, "kernel_args": kernel_args, "kernel": kernel, "root": root,
                 "ramdisk": ramdisk}
        for name, value in asked.items():
            if value is not None:
                setattr(self, name, value)

    @property
    def selection(self) -> tuple:
        """(kernel, root, ramdisk) as asked for; empty kernel and root: $BOARDLAB_KERNEL
        and $BOARDLAB_ROOT, then the board's defaults."""
        return (self.kernel or os.environ.get("BOARDLAB_KERNEL") or None,
                self.root or os.environ.get("BOARDLAB_ROOT") or None, self.ramdisk or None)

    @property
    def _booting(self) -> tuple:
        """What a running kernel must have been booted with to be reused."""
        return self.selection + (self.phase_log, self.kernel_args)

    def plan(self) -> bootplan.BootPlan:
        """The boot of the current selection (bootplan.plan_boot)."""
        kernel, root, ramdisk = self.selection
        provider = self.tftp.provider if self.tftp is not None else None
        return _input(bootplan.plan_boot, self.board, kernel, root, ramdisk,
                      provider.external if provider is not None else None,
                      phase_log=self.phase_log, kernel_args=self.kernel_args)

    def require_files(self, plan: bootplan.BootPlan):
        """Every file the boot stages is there (bootplan.require_files)."""
        _input(bootplan.require_files, self.board, plan.stage)

    @property
    def kernel_under_test(self) -> bootplan.KernelUnderTest:
        return self.plan().kernel

    def kernel_identity(self) -> dict:
        """What the kernel under test is: its uImage's identity (measure.kernelid) and what
        the last boot printed of it."""
        k = self.kernel_under_test
        boot = self.last_boot if self.last_boot is not None and self.last_boot.kernel == k else None
        return kernelid.merge(kernelid.of_image(k.local), kernelid.from_console(boot.lines) if boot else {})

    def timeout(self, name) -> float:
        override = {"uboot_s": self.uboot_timeout, "boot_s": self.boot_timeout}.get(name)
        return override or float(getattr(self.board.timeouts, name))

    # ---- transitions -----------------------------------------------------------------
    @step(args=["status"])
    def transition(self, status, *, step):  # pylint: disable=redefined-outer-name
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.unknown:
            raise BootInputError(f"can not transition to {status}")
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
                and self.booted == self._booting:
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
            self._failures.console_lost(e)
        except OSError as e:   # this machine's own: a file, a permission, a full disk
            self._failures.fail(f"board {self.board.name}: {type(e).__name__}: {e}", None, part="host")
        except BaseException:   # Ctrl-C, or any other error: never leave the board on
            unwind_steps(step)
            self._failures.abandon("interrupted" if status != Status.off else "power-off interrupted")
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

    def stage(self, local) -> str:
        """A file into the board's TFTP directory: the name U-Boot asks for."""
        return self._uboot_dialog.stage(local)

    # ---- the parts: made once, on first use (once labgrid bound the drivers) ------------
    @functools.cached_property
    def _failures(self) -> BootFailures:
        return BootFailures(console=self.console, boots=self.boots, power_off=self._power_off,
                            logger=self.logger)

    @functools.cached_property
    def _uboot_dialog(self) -> UBootDialog:
        return UBootDialog(board=self.board, console=self.console, uboot=self.uboot,
                           activate=self.target.activate, deactivate=self.target.deactivate,
                           power=self.power, tftp=self.tftp, failures=self._failures, logger=self.logger,
                           timeout=self.timeout)

    def _kernel_to_shell(self, plan) -> KernelToShell:
        """This boot's way from bootm to a shell: its plan, when each milestone is due."""
        return KernelToShell(plan=plan, board=self.board, console=self.console, shell=self.shell,
                             activate=self.target.activate, boots=self.boots,
                             failures=self._failures, boot_s=self.timeout("boot_s"),
                             shell_s=self.timeout("shell_s"),
                             expected=milestonesdue.for_boot(self.board.name, plan.kernel.name,
                                                             self.baselines_dir, self.milestones_due))

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
            raise LabBootError(f"{e} (POWER-OFF FAILED, the board may still be on)", part="power") from None
        self.status = Status.off

    @step()
    def _to_uboot(self, plan):
        self._power_off()
        # this boot's record first: whatever fails from here is logged as this boot's,
        # never over the last (good) boot's log
        record = self.boots.begin(plan, self.log_dir)
        self.target.activate(self.console)
        if hasattr(self.console, "reconnect"):   # ser2net may have restarted since the last boot
            self.console.reconnect()
        dialog = self._uboot_dialog
        dialog.flush()
        stamps = timestamps(self.console)
        stamps.clear()
        t_on = time.monotonic()
        stamps.mark("power on", t_on)
        self.status = Status.unknown   # from here, only a power-off makes it known again
        try:
            powerctl.switch(self.power, True, self.board)
        except powerctl.PowerError as e:
            self._failures.fail(str(e), None, part="power")
        record.qemu_clock = clocks.switch_clock(self.board)
        dialog.reach_prompt()
        stamps.mark("uboot prompt", time.monotonic())
        record.power_on_to_uboot_s = round(time.monotonic() - t_on, 4)

    @step()
    def _to_shell(self, plan):
        self.require_files(plan)   # a file that is not there: before the board is touched
        self._to_uboot(plan)
        dialog = self._uboot_dialog
        for local, _ in plan.stage:
            dialog.stage(local)
        for cmd in plan.setup_commands:
            dialog.command(cmd)
        for n, load in enumerate(plan.loads):
            dialog.load(load, origin=n == 0)
        self.console.sendline(plan.boot_command)
        kernel = self._kernel_to_shell(plan)   # when each milestone is due: read after bootm, as before
        kernel.await_login()
        kernel.login()
        self.booted = self._booting
