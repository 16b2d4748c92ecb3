"""The U-Boot side of a boot, for BoardStrategy (a mixin: it needs the strategy's
console, board facts, timeouts and _fail): stop the autoboot countdown of this power
cycle, send one command per prompt, stage a file to TFTP and load it, and stop a command
that does not come back. Every U-Boot dialect, 1.1.x to 2023, takes one line per
command."""
from __future__ import annotations

import re
import time

from pexpect import TIMEOUT

from boardlab.boot import bootlog, bootplan, staging
from boardlab.measure import console as con


class UBootDialog:
    """The strategy's conversation with U-Boot; the strategy provides console, uboot,
    power, tftp, board, timeout(), logger, _stamps, _rx_lines and _fail."""

    def _flush_console(self):
        """Drop whatever the console had buffered (an earlier boot's output)."""
        while True:
            try:
                self.console.read(size=65536, timeout=0.01)
            except TIMEOUT:
                break
        self.console._expect.buffer = b""  # pylint: disable=protected-access

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
            self._fail(f"board {self.board.name}: cannot stage {local}: {e}", None, part="tftp")
        return external + local.name

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
                       f"within {load_s:.0f} s", None, part="tftp")
        out = before.decode("utf-8", "replace")
        if index > 0:
            out += match.group(0).decode("utf-8", "replace")
            self._stop_uboot_command()
        problem = bootplan.uboot_fault(out, bootplan.LOAD_FAULTS, load.file, server)
        if problem:
            self._fail(problem, None, part="tftp")

    def _stop_uboot_command(self):
        """Ctrl-C to U-Boot (a TFTP retry loop), and its prompt back if it comes."""
        self.console.write(b"\x03")
        try:
            self.console.expect(re.escape(self.board.uboot.prompt), timeout=2.0)
        except TIMEOUT:
            pass

    def _no_prompt_reason(self, uboot_s, no_countdown, error) -> str:
        """Why there is no U-Boot prompt, from what the console did print."""
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
        return reason
