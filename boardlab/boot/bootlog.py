"""What one boot left behind: its record (milestones, clock, log), the console log
file a person reads, and a strategy's boots (how many, the last one's record)."""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import attr

from boardlab.boot.bootplan import KernelUnderTest
from boardlab.errors import BoardlabError, InputError, KernelFault, LabFault
from boardlab.files import atomic_write
from boardlab.measure import clocks, console as con


@dataclass
class BootRecord:
    """One boot: what was booted, its milestones (seconds from the load command) and
    its timestamped console log."""
    board: str
    kernel: KernelUnderTest
    root: str
    milestones: dict = field(default_factory=dict)
    ramdisk: str | None = None
    power_on_to_uboot_s: float | None = None
    log_path: str | None = None
    lines: list = field(default_factory=list)
    guest_milestones: dict = field(default_factory=dict)   # printk seconds (board's clock)
    qemu_clock: str | None = None   # a virtual board's clock, as its power switch ran it
    dmesg: list | None = None       # the kernel's log after login, when booted with its phase log


def log_dir(configured: str = "") -> Path:
    return Path(configured or os.environ.get("BOARDLAB_LOG_DIR") or "results/boot-logs")


def save_log(rec: BootRecord, directory: Path, number: int, outcome: str) -> str:
    """Write (or rewrite) the boot's console log; the first write takes the next free
    number, so the logs of earlier sessions in the same place stay."""
    directory.mkdir(parents=True, exist_ok=True)
    if rec.log_path:
        path = Path(rec.log_path)
    else:
        safe = re.sub(r"[^\w.-]+", "_", rec.kernel.name)
        while (path := directory / f"boot-{rec.board}-{safe}-{rec.root}-{number:03d}.log").exists():
            number += 1
    header = (f"boardlab boot log: board {rec.board}, kernel {rec.kernel.name}, root {rec.root}, "
              f"outcome {outcome}",
              f"written {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    atomic_write(path, con.format_log(rec.lines, header=header))
    if rec.dmesg:   # a boot with its phase log: the kernel's log beside the console's
        atomic_write(path.with_suffix(".kmsg"), "\n".join(rec.dmesg) + "\n")
    return str(path)


@attr.s(eq=False)
class Boots:
    """A strategy's boots: how many began, and the record of the last one (the boot in
    progress, once it has begun), whose console log is written as it ends."""
    board = attr.ib(validator=attr.validators.instance_of(str))
    count = attr.ib(default=0)
    last = attr.ib(default=None)   # BootRecord
    directory = attr.ib(default="")   # where the last boot's log goes ('': log_dir()'s)

    def begin(self, plan, directory: str = "") -> BootRecord:
        """A new boot of a plan (bootplan.BootPlan): its record, numbered; its log goes to
        directory ('': log_dir()'s), the caller's at the moment the boot begins."""
        self.count += 1
        self.last = BootRecord(self.board, plan.kernel, plan.root, ramdisk=plan.ramdisk)
        self.directory = directory
        return self.last

    def save(self, outcome: str) -> str:
        """Write (or rewrite) the last boot's console log."""
        self.last.log_path = save_log(self.last, log_dir(self.directory), self.count, outcome)
        return self.last.log_path


class BootError(BoardlabError):
    """A boot failed (catch it for any of the kinds below). The board has been powered off
    (the message says so, or that power-off failed too); the console log is saved. Who is
    at fault is its class: KernelBootError (the kernel under test failed by itself: a
    panic, a hang or timeout after U-Boot handed over, an image bootm refused, no shell
    after the login prompt), which alone may judge a kernel (a bisect's failed boot);
    LabBootError (power, console, U-Boot before the load, TFTP, staging; part: power,
    console, tftp, nfs, host); BootInputError (what the boot was asked for)."""

    def __init__(self, reason, *, milestone=None, log_path=None, tail=(), part=""):
        self.reason = reason
        self.part = part
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


class KernelBootError(BootError, KernelFault):
    """The kernel under test failed to boot by itself."""


class LabBootError(BootError, LabFault):
    """The lab failed the boot (its part: power, console, tftp, nfs, host)."""


class BootInputError(BootError, InputError):
    """A boot asked for what cannot be booted (a kernel, a root, an environment)."""


def console_where(console) -> str:
    """Where the console connects: 'ser2net HOST port N', or the local device."""
    port = getattr(console, "port", None)
    if hasattr(port, "host"):
        return f"ser2net {port.host} port {port.port}"
    return str(getattr(port, "port", "?"))


def wiring(power, console, board) -> str:
    """The power and console wiring a boot used, as the bound resources say: where to
    look when nothing at all came from the console."""
    pw = getattr(power, "port", None)
    if pw is not None and hasattr(pw, "model"):
        switch = f"the power switch ({pw.model} {pw.host.format(index=pw.index, value='')})"
    else:
        switch = f"the power switch ({type(power).__name__})"
    return (f"{switch} and the serial wiring ({console_where(console)}, board console "
            f"{board.console.device} at {board.console.baud} baud)")


def milestone_lines(board, rec) -> list[str]:
    """A boot's milestones, each clock by itself: the host's arrival of each console line
    (from U-Boot's load command) and the board's own printk time (from the kernel's start)."""
    out = [f"milestones, host clock (seconds from the load command; host {clocks.this_host()['id']}):"]
    out += [f"  {name:16s} {t:8.3f} s" for name, t in rec.milestones.items()]
    if rec.guest_milestones:
        out.append(f"milestones, the board's clock ({clocks.guest_clock(board, rec.qemu_clock)}; "
                   "seconds from the kernel's start):")
        out += [f"  {name:16s} {t:8.3f} s" for name, t in rec.guest_milestones.items()]
    return out
