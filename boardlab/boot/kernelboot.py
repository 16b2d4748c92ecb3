"""The kernel side of a boot, for BoardStrategy (a mixin: it needs the strategy's
console, shell driver, board facts, timeouts and failure handling): from `bootm` to a
logged-in shell. Wait for the login prompt while watching for a panic, an image U-Boot
refuses and a hang (a milestone overdue, when the strategy was told when they are due);
answer the login; read the guest's own milestone times."""
from __future__ import annotations

import time

from pexpect import TIMEOUT

from boardlab.boot import bootplan, milestonesdue
from boardlab.facts.board import KERNELS_DIR
from boardlab.measure import console as con


class KernelToShell:
    """The strategy provides console, shell, board, target, timeout(), milestones_due,
    last_boot, deadline, _stamps, _rx_lines, _reached, _check_hang, _timeout, _panic
    and _fail."""

    def _await_login(self, plan):
        """Wait for the login prompt; a panic or a U-Boot image error ends the boot."""
        kernel_patterns = plan.milestones[:-1]   # up to the login prompt
        self.deadline = time.monotonic() + self.timeout("boot_s")
        own = milestonesdue.milestones_due(self.board.name, plan.kernel.name,
                                           self.baselines_dir or KERNELS_DIR)
        expected = own.narrowed(self.milestones_due(self.board.name, plan.kernel.name)) \
            if self.milestones_due else own   # a caller only narrows the strategy's own
        faults = [f.pattern for f in plan.boot_faults]
        expect = [bootplan.PANIC, bootplan.LOADER_FAILURE] + faults + [self.board.shell.login_prompt]
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
            elif index == 1:
                line = match.group(0).decode("utf-8", "replace").strip()
                self._fail(f"the NFS root loader failed: {line!r} (the kernel {plan.kernel.name} was booted "
                           f"through the board's loader ramdisk; a kernel with its NFS root built in says so "
                           f"beside its uImage: nfs_root: built-in)",
                           self._reached(kernel_patterns), kernel_fault="NFS mount" not in line,
                           part="nfs")   # the mount failing is the NFS server's; the rest the kernel's
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
            if plan.phase_log:   # the whole kernel log: measure.phases reads it
                self.last_boot.dmesg = self.shell.run("dmesg", timeout=60)[0]
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
