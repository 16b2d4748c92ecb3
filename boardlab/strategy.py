"""The one strategy every board uses, real or virtual: off -> uboot -> shell.

The shell transition loads the kernel under test by TFTP (plus a ramdisk, or NFS-root
bootargs, as the board's facts say), boots it with bootm and times the console from
the moment the load command is sent. No systemd assumption: busybox/sysvinit boards
reach the shell when the login prompt has been answered and a prompt came back.

Failures raise BootError with the reason, the last milestone reached and the path of
the saved console log; the board is powered off first, so it is in a known state."""
from __future__ import annotations

import enum
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import attr
from pexpect import TIMEOUT

from labgrid.driver import SerialDriver
from labgrid.factory import target_factory
from labgrid.step import step
from labgrid.strategy import Strategy

from . import clocks
from . import console as con
from . import staging
from .facts import bootargs, load_board
from .errors import BoardlabError


class Status(enum.Enum):
    unknown = 0
    off = 1
    uboot = 2
    shell = 3


class BootError(BoardlabError):
    """A boot failed. The board has been powered off; the console log is saved."""

    def __init__(self, reason, *, milestone=None, log_path=None, tail=()):
        self.reason = reason
        self.milestone = milestone
        self.log_path = log_path
        self.tail = list(tail)
        msg = reason
        if milestone is not None:
            msg += f"\nlast milestone reached: {milestone}"
        if self.tail:
            msg += "\nlast console lines:\n" + "\n".join(f"  | {t}" for t in self.tail)
        if log_path:
            msg += f"\nconsole log: {log_path}"
        super().__init__(msg)


@target_factory.reg_driver
@attr.s(eq=False)
class TimestampingSerialDriver(SerialDriver):
    """SerialDriver that stamps every console line with the host arrival time of its
    first character, and records what is sent. The strategy reads .timestamper."""

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.timestamper = con.ConsoleTimestamper()
        # BOARDLAB_RAW_CONSOLE=FILE: also record every chunk as read (for parser tests)
        self.raw_capture = os.environ.get("BOARDLAB_RAW_CONSOLE")

    def _read(self, size: int = 1, timeout: float = 0.0, max_size: int = None):
        data = super()._read(size=size, timeout=timeout, max_size=max_size)
        if data:
            now = time.monotonic()
            self.timestamper.feed(data, now)
            if self.raw_capture:
                con.append_raw_chunk(self.raw_capture, now, data)
        return data

    def _write(self, data: bytes):
        self.timestamper.sent(data, time.monotonic())
        return super()._write(data)


@dataclass
class BootRecord:
    """One boot: what was booted, its milestones (seconds from the load command) and
    its timestamped console log."""
    board: str
    kernel: str
    root: str
    milestones: dict = field(default_factory=dict)
    ramdisk: str | None = None
    power_on_to_uboot_s: float | None = None
    log_path: str | None = None
    lines: list = field(default_factory=list)
    guest_milestones: dict = field(default_factory=dict)   # printk seconds (board's clock)
    qemu_clock: str | None = None   # a virtual board's clock, as its power switch ran it


# U-Boot's words for a failed load or boot, and what they mean for the person reading
UBOOT_ERRORS = (
    (r"File not found|TFTP error: '[^']*' \(1\)", "{file} is not on the TFTP server {server} "
     "(TFTP said: file not found). Is it staged in the board's TFTP directory?"),
    (r"TFTP error[^\n]*", "TFTP error while loading {file} from {server}"),
    (r"ARP Retry count exceeded|Retry count exceeded", "no answer from the TFTP server {server}: "
     "check the lab network (board Ethernet, the lab LAN, tftpd on the lab host)"),
    (r"No ethernet found", "U-Boot found no Ethernet interface"),
    (r"Bad Data CRC", "{file}: bad data CRC (the uImage is corrupt: truncated, modified after "
     "mkimage, or a partial TFTP transfer)"),
    (r"Bad Header Checksum", "{file}: bad uImage header checksum"),
    (r"Wrong Image Format|Unknown command|not a valid image|Bad Magic Number",
     "U-Boot cannot boot {file}: not a uImage it understands"),
)
PANIC = r"Kernel panic - not syncing[^\n]*"


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
        self.booted = None        # (kernel, root) of the running kernel, when at shell
        self.last_boot = None     # BootRecord of the last boot attempt
        self.boot_count = 0

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
        return (self.kernel_spec, self.root_mode, self.ramdisk)

    def timeout(self, name) -> float:
        override = {"uboot_s": self.uboot_timeout, "boot_s": self.boot_timeout}.get(name)
        return override or float(self.board["timeouts"][name])

    @property
    def kernel_spec(self) -> str:
        return self.kernel or os.environ.get("BOARDLAB_KERNEL") or self.board["images"]["default_kernel"]

    @property
    def root_mode(self) -> str:
        mode = self.root or os.environ.get("BOARDLAB_ROOT") or self.board["root"]["default"]
        if mode not in self.board["root"]["bootargs"]:
            raise BootError(f"board {self.board['name']} has no root mode {mode!r} "
                            f"(known: {', '.join(self.board['root']['bootargs'])})")
        return mode

    def kernel_info(self, spec=None) -> dict:
        """Where the kernel comes from: {'name', 'local' (path or None), 'tftp_name',
        'nfs_loader'}."""
        spec = spec or self.kernel_spec
        images = self.board["images"]
        if spec.startswith("tftp:"):
            name = spec[len("tftp:"):]
            return {"name": name, "local": None, "tftp_name": name, "nfs_loader": False}
        if spec in images["kernels"]:
            k = images["kernels"][spec]
            local = Path(images["dir"]) / k["uimage"]
            return {"name": spec, "local": local, "tftp_name": None,
                    "nfs_loader": bool(k.get("nfs_loader"))}
        local = Path(spec)
        if local.exists():
            return {"name": local.name, "local": local, "tftp_name": None,
                    "nfs_loader": images["kernels"][images["default_kernel"]].get("nfs_loader", False)}
        raise BootError(f"kernel {spec!r}: neither a kernel of board {self.board['name']} "
                        f"({', '.join(images['kernels'])}), nor a uImage file, nor tftp:<file>")

    # ---- transitions -----------------------------------------------------------------
    def transition(self, status, *, step=None):  # pylint: disable=redefined-outer-name
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.unknown:
            raise BootError(f"can not transition to {status}")
        if status == Status.shell and self.status == Status.shell \
                and self.booted == self.selection:
            return  # the running kernel is the one asked for: reuse it
        if status == self.status and status != Status.shell:
            return
        if status == Status.off:
            self._power_off()
        elif status == Status.uboot:
            self._to_uboot()
        elif status == Status.shell:
            self._to_shell()
        self.status = status

    def force(self, status):
        if not isinstance(status, Status):
            status = Status[status]
        if status == Status.off:
            self.target.activate(self.power)
        elif status == Status.uboot:
            self.target.activate(self.uboot)
        elif status == Status.shell:
            self.target.activate(self.shell)
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
            raise BootError(f"power off of {self.board['name']} failed: the power switch "
                            f"({self.board['power']['host'].format(index=self.board['power']['index'], value='')}) "
                            f"did not answer: {type(e).__name__}: {e}") from None
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

    @step()
    def _to_uboot(self):
        self._power_off()
        self.target.activate(self.console)
        self._flush_console()
        stamps = self._stamps
        stamps.clear()
        self.boot_count += 1
        self.last_boot = BootRecord(self.board["name"], self.kernel_spec, self.root_mode,
                                    ramdisk=self.ramdisk or self.board["images"].get("ramdisk"))
        t_on = time.monotonic()
        stamps.mark("power on", t_on)
        try:
            self.power.on()
        except Exception as e:  # noqa: BLE001 - any power driver's error
            self._fail(f"power on failed: {type(e).__name__}: {e}", None)
        self.last_boot.qemu_clock = clocks.switch_clock(self.board)
        uboot_s = self.timeout("uboot_s")
        self.uboot.login_timeout = int(uboot_s)
        error = None
        for attempt in range(3):
            try:
                self.target.activate(self.uboot)
                break
            except Exception as e:  # noqa: BLE001 - labgrid raises TIMEOUT or Exception
                error = e
                prompt_seen = any(self.board["uboot"]["prompt"].strip() in ln.text
                                  for ln in stamps.snapshot() if ln.kind == con.RX)
                if not prompt_seen or attempt == 2:
                    break
                # U-Boot is there but lost a character of the prompt check (typed while
                # it was leaving the autoboot countdown): ask again
                self.target.deactivate(self.uboot)
                self.console.sendline("")
        if not self.uboot.get_status():
            got = [ln.text for ln in stamps.snapshot() if ln.kind == con.RX and ln.text.strip()]
            if not got:
                reason = (f"no U-Boot prompt: nothing at all came from the console within "
                          f"{uboot_s:.0f} s of power-on. Suspects: {self._wiring()}")
            else:
                reason = (f"no U-Boot prompt {self.board['uboot']['prompt']!r} within "
                          f"{uboot_s:.0f} s of power-on, although the board "
                          f"printed {len(got)} lines: wrong prompt in the facts, or U-Boot did "
                          f"not stop autoboot ({type(error).__name__})")
            self._fail(reason, None)
        stamps.mark("uboot prompt", time.monotonic())
        self.last_boot.power_on_to_uboot_s = round(time.monotonic() - t_on, 4)

    def _wiring(self) -> str:
        """The power and console wiring in use, as the bound resources say."""
        pw = getattr(self.power, "port", None)
        if pw is not None and hasattr(pw, "model"):
            power = f"the power switch ({pw.model} {pw.host.format(index=pw.index, value='')})"
        else:
            power = f"the power switch ({type(self.power).__name__})"
        port = getattr(self.console, "port", None)
        where = (f"ser2net {port.host} port {port.port}" if hasattr(port, "host")
                 else getattr(port, "port", "?"))
        return (f"{power} and the serial wiring ({where}, board console "
                f"{self.board['console']['device']} at {self.board['console']['baud']} baud)")

    def _uboot_cmd(self, cmd, timeout=10.0):
        """Send one U-Boot command and wait for the prompt; returns the output.
        One command per line works in every U-Boot dialect."""
        self.console.sendline(cmd)
        _, before, _, _ = self.console.expect(re.escape(self.board["uboot"]["prompt"]),
                                              timeout=timeout)
        return before.decode("utf-8", "replace")

    def _check_uboot_output(self, output, file):
        for pattern, meaning in UBOOT_ERRORS:
            m = re.search(pattern, output)
            if m:
                return meaning.format(file=file, server=self.board["network"]["server_ip"]) + \
                    f"  [U-Boot: {m.group(0).strip()}]"
        return None

    def stage(self, local: Path) -> str:
        """Put a file into the board's TFTP directory on its lab host (boardlab.staging:
        a local copy, or over ssh to a remote exporter's host); returns the name U-Boot
        asks for."""
        provider = self.tftp.provider if self.tftp is not None else None
        if provider is not None:
            internal, external = provider.internal, provider.external
        else:
            internal, external = self.board["tftp"]["dir"], self.board["tftp"]["prefix"]
        host = getattr(provider, "host", None)   # a RemoteTFTPProvider's exporter host
        try:
            if host and not staging.is_this_host(host):
                if staging.stage_over_ssh(host, local, internal):
                    self.logger.info("staged %s to %s:%s over ssh", local.name, host, internal)
            else:
                staging.stage_local(local, internal)
        except (staging.StagingError, OSError) as e:
            self._fail(f"board {self.board['name']}: cannot stage {local}: {e}", None)
        return external + local.name

    @step()
    def _to_shell(self):
        board = self.board
        kernel = self.kernel_info()
        root = self.root_mode
        self._to_uboot()
        stamps = self._stamps
        self.last_boot.kernel = kernel["name"]
        ub = board["uboot"]
        kfile = kernel["tftp_name"] or self.stage(kernel["local"])
        ramdisk_file = None
        if root == "ramdisk" or (root == "nfs" and kernel["nfs_loader"]):
            rd = self.ramdisk or board["images"].get("ramdisk")
            if not rd:
                self._fail(f"root {root} needs a ramdisk but images.ramdisk is not set in "
                           f"{board['_path']}", None)
            if rd.startswith("tftp:"):
                ramdisk_file = rd[len("tftp:"):]
            else:
                rd_path = Path(rd) if os.sep in rd else Path(board["images"]["dir"]) / rd
                if not rd_path.exists():
                    self._fail(f"ramdisk {rd_path} does not exist", None)
                ramdisk_file = self.stage(rd_path)

        for cmd in ub.get("init_commands", []):
            self._uboot_cmd(cmd)
        net = board["network"]
        for var, value in (("ipaddr", net["ip"]), ("serverip", net["server_ip"]),
                           ("netmask", net["netmask"]),
                           ("bootargs", bootargs(board, root, kernel["name"]))):
            self._uboot_cmd(f"setenv {var} {value}")

        load_s = float(board["timeouts"]["load_s"])
        stamps.mark("load", time.monotonic())  # the origin of boot time
        for addr, file in ((ub["kernel_addr"], kfile), (ub["ramdisk_addr"], ramdisk_file)):
            if file is None:
                continue
            try:
                out = self._uboot_cmd(ub["load_command"].format(addr=addr, file=file), timeout=load_s)
            except TIMEOUT:
                self._fail(f"loading {file} by TFTP did not finish within {load_s:.0f} s", None)
            problem = self._check_uboot_output(out, file)
            if problem:
                self._fail(problem, None)

        boot_cmd = ub["boot_command"].format(kernel=ub["kernel_addr"],
                                             ramdisk=ub["ramdisk_addr"] if ramdisk_file else "-",
                                             fdt=ub.get("fdt_addr", ""))
        self.console.sendline(boot_cmd.strip())
        self._await_boot(kfile)
        self.booted = self.selection

    def _await_boot(self, kfile):
        board = self.board
        patterns = con.milestone_patterns(board["shell"]["login_prompt"], board["shell"]["prompt"])
        kernel_patterns = patterns[:-1]  # up to the login prompt; the shell driver logs in
        deadline = time.monotonic() + self.timeout("boot_s")
        errors = [p for p, _ in UBOOT_ERRORS[3:]]  # the image errors of bootm
        expect = [PANIC] + errors + [board["shell"]["login_prompt"]]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._timeout(kernel_patterns)
            try:
                index, _, match, _ = self.console.expect(expect, timeout=min(remaining, 5.0))
            except TIMEOUT:
                continue
            if index == 0:
                self._panic(kernel_patterns)
            elif index < len(expect) - 1:
                problem = self._check_uboot_output(match.group(0).decode("utf-8", "replace"), kfile)
                self._fail(problem, self._reached(kernel_patterns))
            else:
                break
        # the login prompt was consumed above: answer it here, then the shell driver
        # handles a password prompt and checks the shell prompt
        self.console.sendline(board["shell"]["username"])
        try:
            self.shell.login_timeout = max(10, int(deadline - time.monotonic()))
            self.target.activate(self.shell)
            self.shell.run("dmesg -n 1")   # kernel messages off the console: clean command output
            out, _, _ = self.shell.run(con.GUEST_GREP)
            self.last_boot.guest_milestones = con.guest_milestones(out)
        except Exception as e:  # noqa: BLE001
            self._fail(f"no shell after the login prompt: {type(e).__name__}: {e}",
                       self._reached(patterns))
        self._record(patterns)

    def _reached(self, patterns):
        ms = con.find_milestones(self._stamps.snapshot(), patterns)
        name = con.last_milestone(ms, patterns)
        if name is None:
            return "the load command (no kernel output)"
        return f"{con.MILESTONE_LABELS.get(name, name)} at {ms[name]:.3f} s"

    def _timeout(self, patterns):
        ms = con.find_milestones(self._stamps.snapshot(), patterns)
        names = [n for n, _ in patterns]
        last = con.last_milestone(ms, patterns)
        nxt = names[names.index(last) + 1] if last and names.index(last) + 1 < len(names) else names[0]
        self._fail(f"timeout: no {con.MILESTONE_LABELS.get(nxt, nxt)!r} within "
                   f"{self.timeout('boot_s'):.0f} s of the load command",
                   self._reached(patterns))

    def _panic(self, patterns):
        # let the panic report finish, then quote it
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                self.console.read(size=4096, timeout=0.3)
            except TIMEOUT:
                break
        lines = [ln.text for ln in self._stamps.snapshot() if ln.kind == con.RX]
        first = next(i for i, t in enumerate(lines) if "Kernel panic" in t)
        text = "\n".join(lines[max(0, first - 3):first + 1])
        self._fail(f"kernel panic:\n{text}", self._reached(patterns), tail_lines=0)

    def _record(self, patterns):
        rec = self.last_boot
        rec.lines = self._stamps.snapshot()
        rec.milestones = con.find_milestones(rec.lines, patterns)
        rec.log_path = self._save_log(rec.lines, "ok")

    def _save_log(self, lines, outcome) -> str:
        rec = self.last_boot
        log_dir = Path(self.log_dir or os.environ.get("BOARDLAB_LOG_DIR") or "results/boot-logs")
        log_dir.mkdir(parents=True, exist_ok=True)
        if rec.log_path:
            path = Path(rec.log_path)
        else:   # the next free number: logs of earlier sessions in the same place stay
            safe = re.sub(r"[^\w.-]+", "_", rec.kernel)
            n = self.boot_count
            while (path := log_dir / f"boot-{rec.board}-{safe}-{rec.root}-{n:03d}.log").exists():
                n += 1
        header = (f"boardlab boot log: board {rec.board}, kernel {rec.kernel}, root {rec.root}, "
                  f"outcome {outcome}",
                  f"written {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
        tmp = path.with_suffix(".tmp")
        tmp.write_text(con.format_log(lines, header=header))
        os.replace(tmp, path)
        return str(path)

    def _fail(self, reason, milestone, tail_lines=12):
        """Save the console log, power the board off, raise BootError."""
        lines = self._stamps.snapshot()
        log_path = None
        if self.last_boot is not None:
            self.last_boot.lines = lines
            log_path = self.last_boot.log_path = self._save_log(lines, f"FAILED: {reason.splitlines()[0]}")
        try:
            self._power_off()
        finally:
            self.status = Status.off
        tail = [ln.text for ln in lines if ln.kind == con.RX][-tail_lines:] if tail_lines else []
        raise BootError(reason, milestone=milestone, log_path=log_path, tail=tail)
