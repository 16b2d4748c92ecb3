"""What a boot will do, worked out from the board's facts and the selection alone, with
no board: the kernel under test, the files to stage on the TFTP server, the U-Boot
commands in the order the strategy sends them, the console patterns of the board's
era, and what U-Boot's error messages mean. BoardStrategy executes a plan; unit tests
check plans without a board."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds import registry
from boardlab.errors import InputError
from boardlab.facts.board import Board, bootargs
from boardlab.measure import console as con
from boardlab.measure import kernelid, phases

TFTP_PREFIX = "tftp:"       # a kernel or ramdisk already on the TFTP server


class PlanError(InputError):
    """The selection cannot be booted on this board (unknown kernel, root mode, ...)."""


@dataclass(frozen=True)
class KernelUnderTest:
    """The kernel a boot loads, resolved once from what was asked for (spec)."""
    spec: str                   # a kernel of the facts, a uImage path, or tftp:<file>
    name: str                   # how results and logs name it
    local: Path | None          # the uImage to stage; None: already on the TFTP server
    tftp_name: str | None       # the name on the TFTP server when not staged by us
    nfs_loader: bool            # boots an NFS root through the loader ramdisk


# what U-Boot's command line or the shell would read as more than a file name
_UNSAFE = re.compile(r"[\s;$`'\"\\]|[\x00-\x1f\x7f]")


def check_file_name(what: str, name: str, board: Board, tftp_prefix: str | None = None) -> str:
    """A name that reaches U-Boot's command line and the TFTP server: not empty, no
    whitespace, ';', '$', quotes or control characters, no '..'. With tftp_prefix (a
    tftp:<file> of the selection) it must lie in the board's TFTP directory."""
    if not name:
        raise PlanError(f"board {board.name}: the {what} name is empty")
    if _UNSAFE.search(name):
        raise PlanError(f"board {board.name}: {what} {name!r}: a name for U-Boot and TFTP may "
                        f"not hold whitespace, ';', '$', quotes or control characters")
    if ".." in name.split("/") or name.startswith("/"):
        raise PlanError(f"board {board.name}: {what} {name!r}: '..' or an absolute path "
                        f"would leave the board's TFTP directory")
    if tftp_prefix and not name.startswith(tftp_prefix):
        raise PlanError(f"board {board.name}: {what} {name!r} is outside the board's TFTP "
                        f"directory: name it {tftp_prefix}<file> ({board.tftp.dir} on the lab host)")
    return name


def resolve_kernel(board: Board, spec: str | None = None, tftp_prefix: str | None = None) -> KernelUnderTest:
    spec = board.images.default_kernel if spec is None else spec
    if not spec.strip():
        raise PlanError(f"board {board.name}: the kernel name is empty")
    images = board.images
    if spec.startswith(TFTP_PREFIX):
        file = check_file_name("kernel", spec[len(TFTP_PREFIX):], board,
                               board.tftp.prefix if tftp_prefix is None else tftp_prefix)
        # the board's own uImage, already on the server: named (and baselined) as its kernel
        return KernelUnderTest(spec, _kernel_of_file(board, os.path.basename(file)) or file, None, file, False)
    if spec in images.kernels:
        k = images.kernels[spec]
        return KernelUnderTest(spec, spec, Path(images.dir) / k.uimage, None, k.nfs_loader)
    built = registry.lookup(board.name, spec)
    if built is not None:   # built here by version (boardlab kernel build): named by its registration
        return KernelUnderTest(spec, spec, built, None, kernelid.nfs_root(built) == "loader")
    local = Path(spec)
    if local.is_file():   # a uImage of one's own: its NFS root as its maker says, else the default kernel's way
        check_file_name("kernel", local.name, board)
        said = kernelid.nfs_root(local)
        return KernelUnderTest(spec, local.name, local, None,
                               said == "loader" if said else images.kernels[images.default_kernel].nfs_loader)
    raise PlanError(f"kernel {spec!r}: neither a kernel of board {board.name} "
                    f"({', '.join(list(images.kernels) + registry.registered(board.name))}), "
                    f"nor a uImage file, nor tftp:<file>")


def _kernel_of_file(board: Board, file_name: str) -> str | None:
    """The kernel of the facts whose uImage has this file name."""
    return next((n for n, k in board.images.kernels.items() if k.uimage == file_name), None)


def _made_by(board: Board, local: Path) -> str:
    """What makes a file of the board's images that is not there yet."""
    if local.parent != Path(board.images.dir):   # one's own file, named on the command line
        return "no such file"
    kernel = _kernel_of_file(board, local.name)
    facts = board.images.kernels.get(kernel)
    if local.name == board.images.ramdisk or (facts and (facts.debian_package or facts.config)):
        return f"`boardlab vlab build --board {board.name}` makes it"
    from boardlab.kernelbuilds.alongside import configs_of   # the build suite's own rule
    if kernel and any(c.parent.name == kernel for c in configs_of(board.name)):
        return (f"the build-size suite builds it, a clean kernel build (`pytest --lg-env "
                f"lab/{board.name}.yaml testsuites/test_build.py`, or the main job)")
    return f"it is not built here: it belongs in the board's images ({board.images.dir})"


def require_files(board: Board, stage) -> None:
    """Every file a boot stages is there: said before the board is powered on, with what
    makes a missing one (a kernel of the facts that nothing has built yet)."""
    for local, _ in stage:
        if not local.is_file():
            raise PlanError(f"board {board.name}: {local} is not there yet: {_made_by(board, local)}")


def resolve_root(board: Board, mode: str | None = None) -> str:
    mode = mode or board.root.default
    if mode not in board.root.bootargs:
        raise PlanError(f"board {board.name} has no root mode {mode!r} "
                        f"(known: {', '.join(board.root.bootargs)})")
    return mode


# ---- what U-Boot's messages mean ------------------------------------------------------------

@dataclass(frozen=True)
class UBootFault:
    category: str               # tftp, network, image
    pattern: str
    meaning: str                # for the person reading; {file} and {server} filled in

    def explain(self, match: str, file: str, server: str) -> str:
        return self.meaning.format(file=file, server=server) + f"  [U-Boot: {match.strip()}]"


TFTP_FAULTS = (
    UBootFault("tftp", r"File not found|TFTP error: '[^']*' \(1\)",
               "{file} is not on the TFTP server {server} (TFTP said: file not found). Is it "
               "staged in the board's TFTP directory?"),
    UBootFault("tftp", r"TFTP error[^\n]*", "TFTP error while loading {file} from {server}"),
)
NETWORK_FAULTS = (
    UBootFault("network", r"ARP Retry count exceeded|Retry count exceeded",
               "no answer from the TFTP server {server}: check the lab network (board "
               "Ethernet, the lab LAN, tftpd on the lab host)"),
    UBootFault("network", r"No ethernet found", "U-Boot found no Ethernet interface"),
)
IMAGE_FAULTS = (   # what bootm (or a load) says of an image it cannot boot
    UBootFault("image", r"Bad Data CRC", "{file}: bad data CRC (the uImage is corrupt: "
               "truncated, modified after mkimage, or a partial TFTP transfer)"),
    UBootFault("image", r"Bad Header Checksum", "{file}: bad uImage header checksum"),
    UBootFault("image", r"Wrong Image Format|Unknown command|not a valid image|Bad Magic Number",
               "U-Boot cannot boot {file}: not a uImage it understands"),
)
LOAD_FAULTS = TFTP_FAULTS + NETWORK_FAULTS + IMAGE_FAULTS
# 2.6 and later: "Kernel panic - not syncing: ..."; 2.4: "Kernel panic: VFS: ..."
PANIC = r"Kernel panic(?: - not syncing)?: [^\n]*"
# the NFS loader ramdisk's own failure lines (target/rootfs/init): it drops to a shell,
# so no login prompt will come
LOADER_FAILURE = (r"loader: (?:no modules for kernel|insmod \S+ failed|no network interface|"
                  r"cannot configure|NFS mount of)[^\r\n]*")


def uboot_fault(output: str, faults, file: str, server: str) -> str | None:
    """The meaning of the first fault U-Boot's output shows, or None."""
    for fault in faults:
        m = re.search(fault.pattern, output)
        if m:
            return fault.explain(m.group(0), file, server)
    return None


# ---- the plan ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Load:
    file: str                   # as U-Boot asks the TFTP server for it
    command: str


@dataclass(frozen=True)
class BootPlan:
    board: Board
    kernel: KernelUnderTest
    root: str
    ramdisk: str | None                     # its name on the TFTP server, if loaded
    stage: tuple[tuple[Path, str], ...]     # (local file, name on the TFTP server)
    setup_commands: tuple[str, ...]         # before the loads: init commands, setenv
    loads: tuple[Load, ...]                 # the first one's start is the origin of boot time
    boot_command: str
    milestones: tuple[tuple[str, str], ...]  # (name, pattern) in boot order
    boot_faults: tuple[UBootFault, ...] = IMAGE_FAULTS
    phase_log: bool = False     # booted with the kernel's phase log: its dmesg is kept


def milestone_patterns(board: Board) -> tuple[tuple[str, str], ...]:
    """The console milestones of the board's era: U-Boot's hand-over message is the
    board's own (U-Boot 1.1 prints no 'Starting kernel'), the rest the kernel's and the
    board's prompts."""
    patterns = con.milestone_patterns(board.shell.login_prompt, board.shell.prompt)
    if board.uboot.kernel_message:
        patterns = (("starting_kernel", re.escape(board.uboot.kernel_message)),) + patterns[1:]
    return patterns


def ethaddr_commands(board: Board) -> tuple[str, ...]:
    """A virtual board's own MAC address given to its U-Boot. Debian's U-Boot reads a
    modern virtio-net device's address as its first byte six times: every virtual board's
    U-Boot sent as 52:52:52:52:52:52, so two boards in U-Boot at once took each other's
    TFTP frames at the lab's bridge (docs/notes/measurement-runs.md). Its ethaddr is
    write-once: -f. A real board's U-Boot has its own address: nothing."""
    if board.qemu is None or not board.network.mac:
        return ()
    return (f"setenv -f ethaddr {board.network.mac}",)


def _ramdisk(board: Board, spec: str | None, tftp_prefix: str):
    """(name on the TFTP server, local file to stage or None) of the ramdisk."""
    rd = spec or board.images.ramdisk
    if not rd:
        return None
    if rd.startswith(TFTP_PREFIX):
        return check_file_name("ramdisk", rd[len(TFTP_PREFIX):], board, tftp_prefix), None
    path = Path(rd) if os.sep in rd else Path(board.images.dir) / rd
    return tftp_prefix + check_file_name("ramdisk", path.name, board), path


def plan_boot(board: Board, kernel: str | None = None, root: str | None = None,
              ramdisk: str | None = None, tftp_prefix: str | None = None,
              phase_log: bool = False, kernel_args: str = "") -> BootPlan:
    """The boot of a selection: kernel and root as BoardStrategy.select takes them, the
    ramdisk (default: the facts' images.ramdisk), tftp_prefix: how U-Boot names a file
    staged in the board's TFTP directory (default: the facts' tftp.prefix), phase_log:
    the kernel's own phase log asked for (measure.phases.BOOT_ARGS on its command line;
    never for the milestone figures, which it would move); kernel_args: more of the
    kernel's command line (a bench's own parameter)."""
    prefix = board.tftp.prefix if tftp_prefix is None else tftp_prefix
    if re.search(r"[;$`'\"\\]|[\x00-\x1f\x7f]", kernel_args):   # U-Boot would read more than arguments
        raise PlanError(f"kernel arguments {kernel_args!r} may not hold ';', '$', quotes, backslashes "
                        f"or control characters (they go through U-Boot's setenv)")
    k = resolve_kernel(board, kernel, prefix)
    root = resolve_root(board, root)
    stage = []
    kfile = k.tftp_name
    if kfile is None:
        kfile = prefix + k.local.name
        stage.append((k.local, kfile))
    rd_file = None
    if root == "ramdisk" or (root == "nfs" and k.nfs_loader):
        found = _ramdisk(board, ramdisk, prefix)
        if found is None:
            raise PlanError(f"root {root} needs a ramdisk but images.ramdisk is not set in "
                            f"{board.path}")
        rd_file, rd_local = found
        if rd_local is not None:
            stage.append((rd_local, rd_file))
    ub, net = board.uboot, board.network
    setup = tuple(ub.init_commands) + ethaddr_commands(board) + tuple(
        f"setenv {var} {value}" for var, value in (
            ("ipaddr", net.ip), ("serverip", net.server_ip), ("netmask", net.netmask),
            ("bootargs", " ".join(filter(None, (bootargs(board, root, k.name),
                                                phases.BOOT_ARGS if phase_log else "", kernel_args))))))
    loads = tuple(Load(file, ub.load_command.format(addr=addr, file=file))
                  for addr, file in ((ub.kernel_addr, kfile), (ub.ramdisk_addr, rd_file)) if file)
    boot = ub.boot_command.format(kernel=ub.kernel_addr,
                                  ramdisk=ub.ramdisk_addr if rd_file else "-",
                                  fdt=ub.fdt_addr or "").strip()
    return BootPlan(board, k, root, rd_file, tuple(stage), setup, loads, boot,
                    milestone_patterns(board), phase_log=phase_log)
