"""The U-Boot side of a boot, a part of BoardStrategy: stop the autoboot countdown of
this power cycle and have labgrid's U-Boot driver take the prompt, send one command per
prompt, stage a file to TFTP and load it, and stop a command that does not come back.
Every U-Boot dialect, 1.1.x to 2023, takes one line per command."""
from __future__ import annotations

import re
import time

import attr
from pexpect import TIMEOUT

from boardlab.boot import bootlog, bootplan, staging
from boardlab.boot.bootfailure import BootFailures
from boardlab.boot.serialdriver import received, timestamps
from boardlab.measure import console as con


@attr.s(eq=False, kw_only=True)
class UBootDialog:
    """The strategy's conversation with U-Boot, over the drivers it is given."""
    board = attr.ib()     # the facts: U-Boot's prompt and autoboot message, TFTP, the console's baud
    console = attr.ib()   # the console driver: what is sent, what comes back
    uboot = attr.ib()     # labgrid's UBootDriver (or SmallUBootDriver): its interrupt, its prompt check
    activate = attr.ib()     # the target's: the U-Boot driver on, once the countdown is stopped
    deactivate = attr.ib()   # and off, to ask for the prompt again
    power = attr.ib()     # the power driver, named when nothing came from the console
    tftp = attr.ib(default=None)   # TFTPProviderDriver; None: the facts' TFTP directory
    failures = attr.ib(validator=attr.validators.instance_of(BootFailures))
    logger = attr.ib()
    timeout = attr.ib()   # name -> s, as the strategy has it at the moment: uboot_s (power-on to
    #                       U-Boot's prompt, at most), load_s (one TFTP load, at most)

    @property
    def uboot_s(self) -> float:
        return float(self.timeout("uboot_s"))

    @property
    def load_s(self) -> float:
        return float(self.timeout("load_s"))

    def flush(self):
        """Drop whatever the console had buffered (an earlier boot's output)."""
        while True:
            try:
                self.console.read(size=65536, timeout=0.01)
            except TIMEOUT:
                break
        self.console._expect.buffer = b""  # pylint: disable=protected-access

    def stop_autoboot(self):
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
            self.console.expect(re.escape(autoboot), timeout=self.uboot_s)
        except TIMEOUT as e:
            return e
        self.console.write(self.uboot.interrupt.encode("ascii"))
        return None

    def reach_prompt(self):
        """This power cycle's U-Boot prompt, taken by labgrid's U-Boot driver; the boot
        fails naming what the console did print when it does not come."""
        self.uboot.login_timeout = int(self.uboot_s)   # the facts', or the strategy's override
        error = no_countdown = self.stop_autoboot()
        for attempt in range(3 if no_countdown is None else 0):
            try:
                self.activate(self.uboot)
                break
            except Exception as e:  # noqa: BLE001 - labgrid raises TIMEOUT or Exception
                error = e
                if self.board.uboot.prompt.strip() not in "\n".join(received(self.console)) or attempt == 2:
                    break
                # U-Boot is there but lost a character of the prompt check (typed while
                # it was leaving the autoboot countdown): ask again
                self.deactivate(self.uboot)
                self.console.sendline("")
        if not self.uboot.get_status():
            self.failures.fail(self.no_prompt_reason(no_countdown, error), None,
                               part="console")   # no U-Boot: its reason names the power and the wiring

    def command(self, cmd, timeout=10.0):
        """Send one U-Boot command and wait for the prompt; returns the output."""
        self.console.sendline(cmd)
        try:
            _, before, _, _ = self.console.expect(re.escape(self.board.uboot.prompt), timeout=timeout)
        except TIMEOUT:
            self.stop_command()
            self.failures.fail(f"U-Boot command {cmd!r} did not come back to the prompt "
                               f"{self.board.uboot.prompt!r} within {timeout:.0f} s", None, part="uboot")
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
            self.failures.fail(f"board {self.board.name}: cannot stage {local}: {e}", None, part="tftp")
        return external + local.name

    def load(self, load, origin: bool):
        """One TFTP load. The first one's command is the origin of boot time: the
        moment U-Boot has all of it, its characters' time on the line after sending.
        A TFTP error ends the load at once: old U-Boot retries forever ('Starting
        again'), so Ctrl-C stops it before the board is powered off."""
        server = self.board.network.server_ip
        t_sent = time.monotonic()
        self.console.sendline(load.command)
        if origin:
            stamps = timestamps(self.console)
            stamps.mark("load command sent", t_sent)
            stamps.mark("load", t_sent + con.line_time_s(load.command, self.board.console.baud))
        expect = [re.escape(self.board.uboot.prompt)] + [f.pattern for f in bootplan.LOAD_FAULTS]
        try:
            index, before, match, _ = self.console.expect(expect, timeout=self.load_s)
        except TIMEOUT:
            self.stop_command()
            self.failures.fail(f"loading {load.file} from the TFTP server {server} did not finish "
                               f"within {self.load_s:.0f} s", None, part="tftp")
        out = before.decode("utf-8", "replace")
        if index > 0:
            out += match.group(0).decode("utf-8", "replace")
            self.stop_command()
        problem = bootplan.uboot_fault(out, bootplan.LOAD_FAULTS, load.file, server)
        if problem:
            self.failures.fail(problem, None, part="tftp")

    def stop_command(self):
        """Ctrl-C to U-Boot (a TFTP retry loop), and its prompt back if it comes."""
        self.console.write(b"\x03")
        try:
            self.console.expect(re.escape(self.board.uboot.prompt), timeout=2.0)
        except TIMEOUT:
            pass

    def no_prompt_reason(self, no_countdown, error) -> str:
        """Why there is no U-Boot prompt, from what the console did print."""
        got = [t for t in received(self.console) if t.strip()]
        uboot_s = self.uboot_s
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
        return reason
