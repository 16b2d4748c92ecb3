"""The kernel side of a boot, a part of BoardStrategy: from `bootm` to a logged-in shell.
Wait for the login prompt while watching for a panic, an image U-Boot refuses and a
hang (a milestone overdue, when it is known when they are due); answer the login; read
the guest's own milestone times; the boot's record and log complete."""
from __future__ import annotations

import time

import attr
from pexpect import TIMEOUT

from boardlab.boot import bootplan
from boardlab.boot.bootfailure import BootFailures
from boardlab.boot.bootlog import Boots, KernelBootError, LabBootError
from boardlab.boot.serialdriver import received, timestamps
from boardlab.measure import console as con


@attr.s(eq=False, kw_only=True)
class KernelToShell:
    """One boot's way from U-Boot's hand-over to the shell, over the drivers it is given."""
    plan = attr.ib(validator=attr.validators.instance_of(bootplan.BootPlan))   # the boot: patterns, faults
    board = attr.ib()     # the facts: the login prompt, user and shell prompt, the TFTP server
    console = attr.ib()   # the console driver: what the kernel prints, the user name answered
    shell = attr.ib()     # labgrid's ShellDriver: the login checked, commands run
    activate = attr.ib()  # the target's: the shell driver on, once the login prompt came
    boots = attr.ib(validator=attr.validators.instance_of(Boots))   # this boot's record: boots.last
    failures = attr.ib(validator=attr.validators.instance_of(BootFailures))
    boot_s = attr.ib(converter=float)    # load command to login prompt, at most
    shell_s = attr.ib(converter=float)   # login prompt to shell, at most
    expected = attr.ib()  # bootwatch.Expected: when each milestone is due (empty: no hang watch)

    def await_login(self):
        """Wait for the login prompt; a panic or a U-Boot image error ends the boot."""
        plan = self.plan
        kernel_patterns = plan.milestones[:-1]   # up to the login prompt
        deadline = time.monotonic() + self.boot_s
        faults = [f.pattern for f in plan.boot_faults]
        expect = [bootplan.PANIC, bootplan.LOADER_FAILURE] + faults + [self.board.shell.login_prompt]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.failures.timeout(kernel_patterns, self.boot_s)
            try:
                index, _, match, _ = self.console.expect(expect, timeout=min(remaining, 1.0))
            except TIMEOUT:
                self.failures.check_hang(plan, kernel_patterns, self.expected)
                continue
            if index == 0:
                self.failures.panic(kernel_patterns)
            elif index == 1:
                line = match.group(0).decode("utf-8", "replace").strip()
                self.failures.fail(
                    f"the NFS root loader failed: {line!r} (the kernel {plan.kernel.name} was booted "
                    f"through the board's loader ramdisk; a kernel with its NFS root built in says so "
                    f"beside its uImage: nfs_root: built-in)",
                    self.failures.reached(kernel_patterns),
                    kind=LabBootError if "NFS mount" in line else KernelBootError,
                    part="nfs")   # the mount failing is the NFS server's; the rest the kernel's
            elif index < len(expect) - 1:
                problem = bootplan.uboot_fault(match.group(0).decode("utf-8", "replace"),
                                               plan.boot_faults, plan.loads[0].file,
                                               self.board.network.server_ip)
                self.failures.fail(problem, self.failures.reached(kernel_patterns), kind=KernelBootError)
            return

    def login(self):
        """The login prompt was consumed: answer it; the shell driver handles a password
        prompt and checks the shell prompt. Then the guest's own milestone times, and the
        boot's record completed and its log saved."""
        plan, rec = self.plan, self.boots.last
        self.console.sendline(self.board.shell.username)
        try:
            self.shell.login_timeout = max(1, int(self.shell_s))
            self.activate(self.shell)
            self.shell.run("dmesg -n 1")   # kernel messages off the console: clean command output
            out, _, _ = self.shell.run(con.GUEST_GREP)
            rec.guest_milestones = con.guest_milestones(out)
            if plan.phase_log:   # the whole kernel log: measure.phases reads it
                rec.dmesg = self.shell.run("dmesg", timeout=60)[0]
        except Exception as e:  # noqa: BLE001
            got = [t for t in received(self.console) if t.strip()]
            self.failures.fail(f"no shell after the login prompt: expected the prompt "
                               f"{self.board.shell.prompt!r} (shell.prompt in {self.board.path}), "
                               f"the board printed {got[-1] if got else 'nothing'!r} last "
                               f"({type(e).__name__})", self.failures.reached(plan.milestones),
                               kind=KernelBootError)
        rec.lines = timestamps(self.console).snapshot()
        rec.milestones = con.find_milestones(rec.lines, plan.milestones)
        self.boots.save("ok")
