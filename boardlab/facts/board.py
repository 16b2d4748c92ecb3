"""Board facts: one YAML file per board under boards/, the single source from which
the labgrid environment, the lab-host configs and the LAVA device dictionary are
made. Loading turns the file into frozen dataclasses (Board and its parts) and checks
every field on the way, so a typo is reported with file and field: a missing or
unknown key, a wrong type, a placeholder a command line or U-Boot command cannot fill."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from boardlab.facts.checks import check_board
from boardlab.facts.typedyaml import FactsError, build, load_yaml, one_of, template

__all__ = ["Board", "Console", "FactsError", "Images", "Isolation", "Kernel", "MkImage", "Network",
           "Nfs", "Power", "Qemu", "Root", "Shell", "Tftp", "Timeouts", "UBoot",
           "board_path", "bootargs", "load_board"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
BOARDS_DIR = PROJECT_ROOT / "boards"
PLACES_DIR = PROJECT_ROOT / "places"
LAB_ENV_DIR = PROJECT_ROOT / "lab"     # the labgrid environments `boardlab gen` writes
KERNELS_DIR = PROJECT_ROOT / "kernels"   # kernel configs, pins and stored baselines, per kernel


def env_path(board_name: str) -> Path:
    """The labgrid environment of a board: lab/<board>.yaml."""
    return LAB_ENV_DIR / f"{board_name}.yaml"

UBOOT_DIALECTS = ("hush", "old")   # hush: ';' and '$?' work. old: one command per line
ROOT_MODES = ("ramdisk", "nfs")
# what a board's CPU runs, as the lab's programs are chosen and built for it (families'
# tool sets, boardlab/images/ownprograms.py): armhf and armel as Debian's ports; e500mc,
# 603e (the Sandpoint's MPC8240 core) and mpc8xx (the TQM860L's MPC860: no FPU) PowerPC
ISAS = ("armhf", "armel", "e500mc", "603e", "mpc8xx")
QEMU_CLOCKS = ("deterministic", "realtime")
NFSROOT_TARBALL = "nfsroot.tar.xz"   # a board's NFS root as a tarball in images.dir (LAVA)


# ---- the facts, typed ---------------------------------------------------------------------
@dataclass(frozen=True)
class Console:
    device: str
    baud: int
    ser2net_port: int           # RFC2217 on the lab host
    serial_adapter: str | None = None


@dataclass(frozen=True)
class Power:
    model: str                  # a labgrid NetworkPowerPort model
    index: int
    # {lab_host}: the board's lab host's management address (filled in on load), so a
    # board moved to another lab host changes one field, lab_host
    host: str = template(("index", "value", "lab_host"))

    @property
    def url(self) -> str:
        """The outlet's address, for messages and the virtual switch's GET."""
        return self.host.format(index=self.index, value="")


@dataclass(frozen=True)
class Isolation:
    """How the board is kept apart from the other boards at layer 2: what one board sends
    another on a shared segment (or to the PDU on the same switch) never reaches the lab
    host's firewall. One of the two (docs/guides.md, "What protects the lab")."""
    # its own 802.1Q VLAN: its switch port untagged in it; on the lab host the VLAN's
    # interface (<uplink>.<vlan>) is an isolated port of the LAN's bridge (lan_interface)
    vlan: int | None = None
    # its switch port, in port isolation (a protected port, a private VLAN's isolated
    # port): it reaches the lab host's uplink and no other port; the name as the switch knows it
    switch_port: str | None = None


@dataclass(frozen=True)
class Network:
    ip: str
    netmask: str
    server_ip: str
    mac: str | None = None
    isolation: Isolation | None = None   # required on a real lab host; a virtual board's tap
                                         # is its own port of the virtual host's bridge


@dataclass(frozen=True)
class UBoot:
    prompt: str
    dialect: str = one_of(UBOOT_DIALECTS)
    autoboot: str
    kernel_addr: str
    ramdisk_addr: str
    load_command: str = template(("addr", "file"))
    boot_command: str = template(("kernel", "ramdisk", "fdt"))
    fdt_addr: str | None = None
    init_commands: tuple[str, ...] = ()
    kernel_message: str | None = None   # what U-Boot prints as it hands over (LAVA waits for it)
    # false: bootm must place device tree and ramdisk (e500 maps 64 MiB at entry), so no
    boot_data_in_place: bool = True     # initrd_high/fdt_high=0xffffffff from LAVA


@dataclass(frozen=True)
class MkImage:
    arch: str
    load_addr: str
    entry: str


@dataclass(frozen=True)
class Tftp:
    dir: str                    # on the lab host
    prefix: str                 # file names as U-Boot asks for them


@dataclass(frozen=True)
class Nfs:
    export: str
    # root_squash: the board's root writes as nobody. Only for a root the board never
    # writes as root (a read-only one); a root init writes (/etc, /var, device nodes,
    # the suites' files) needs root's writes, so the default is no_root_squash
    root_squash: bool = False
    # the export is a file system of its own (its own partition, LV or loop file): a file
    # handle cannot reach past it, so no subtree_check; else every request is checked to
    # lie inside the export (subtree_check), or a kernel under test could forge a handle
    # to any file of the lab host's file system
    own_filesystem: bool = False


@dataclass(frozen=True)
class Kernel:
    name: str                   # its key in images.kernels
    uimage: str
    debian_package: str | None = None
    nfs_loader: bool = False    # NIC and NFS client are modules: boots NFS via the ramdisk
    console: str | None = None  # its name for the console, when not console.device
    config: str | None = None   # built here from Debian's linux-source with this fragment


@dataclass(frozen=True)
class Images:
    dir: str
    default_kernel: str
    kernels: dict[str, Kernel]
    ramdisk: str | None = None
    loader_modules: tuple[str, ...] = ()


BOOTARGS_PLACEHOLDERS = ("console", "ip", "netmask", "server_ip", "nfs_export", "name")


@dataclass(frozen=True)
class Root:
    default: str = one_of(ROOT_MODES)
    bootargs: dict[str, str] = template(BOOTARGS_PLACEHOLDERS)


@dataclass(frozen=True)
class Shell:
    prompt: str
    login_prompt: str
    username: str
    password: str | None = None


@dataclass(frozen=True)
class Timeouts:
    uboot_s: float              # power-on to U-Boot prompt
    load_s: float               # each TFTP load
    boot_s: float               # load command to login prompt
    shell_s: float = 20.0       # login prompt answered to shell prompt (a wrong prompt fails here)


@dataclass(frozen=True)
class Qemu:
    binary: str                 # qemu-system-arm, qemu-system-ppc
    machine: str
    cpu: str
    bios: str
    tap: str
    smp: int = 1
    clock: str = one_of(QEMU_CLOCKS, "deterministic")
    icount_shift: int = 4       # one instruction = 2**shift ns of guest time
    load: str = "none"          # work on the board no test asked for (boardlab.vlab.boardload)


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    arch: str
    cpu: str
    isa: str = one_of(ISAS)     # what the CPU runs: the programs chosen and built for it
    ram_mb: int
    lab_host: str
    console: Console
    power: Power
    network: Network
    uboot: UBoot
    mkimage: MkImage
    tftp: Tftp
    nfs: Nfs
    images: Images
    root: Root
    shell: Shell
    timeouts: Timeouts
    cpu_mhz: int | float | None = None
    qemu: Qemu | None = None
    path: str = ""              # the facts file (not in it: set on load)
    lab_address: str = ""       # not in it: its lab host's management address, if it has one

    @property
    def virtual(self) -> bool:
        return self.qemu is not None

    @property
    def serial_host(self) -> str:
        """Where ser2net listens. A real lab host: 127.0.0.1 (a console is an
        unauthenticated root shell); labgrid clients elsewhere reach it through the
        exporter's SSH proxy (labgrid-exporter --isolated, or LG_PROXY=<lab host> for a
        local environment file); LAVA's worker runs on the lab host. A virtual lab host:
        its address on the management network, which exists only on this machine."""
        return self.lab_address or "127.0.0.1"

    def kernel(self, name: str) -> Kernel:
        try:
            return self.images.kernels[name]
        except KeyError:
            raise FactsError(f"{self.path}: no kernel {name!r} in images.kernels "
                             f"(has: {', '.join(self.images.kernels)})") from None


def board_path(name_or_path) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or os.sep in str(name_or_path):
        return p
    return BOARDS_DIR / f"{name_or_path}.yaml"


def load_board(name_or_path) -> Board:
    """Load and check a board's facts (by name, e.g. 'qemu-arm', or path)."""
    path = board_path(name_or_path)
    board = dataclasses.replace(build(Board, load_yaml(path), path), path=str(path))
    board = _on_its_lab_host(board, path)
    check_board(board, path, ROOT_MODES, PROJECT_ROOT)
    return board


def _on_its_lab_host(board: Board, path) -> Board:
    """The board with its lab host's management address (read from the lab host's facts
    file without loading it whole), and power.host's {lab_host} filled in with it."""
    lab_path = PLACES_DIR / board.lab_host / "lab-host.yaml"
    data = load_yaml(lab_path) if lab_path.exists() else {}
    address = str(data.get("management") or "").split("/")[0] if isinstance(data, dict) else ""
    if "{lab_host}" in board.power.host:
        if not address:
            raise FactsError(f"{path}: field 'power.host' names {{lab_host}}, but lab host "
                             f"{board.lab_host} has no 'management' address ({lab_path})")
        board = dataclasses.replace(board, power=dataclasses.replace(
            board.power, host=board.power.host.replace("{lab_host}", address)))
    return dataclasses.replace(board, lab_address=address)


def bootargs(board: Board, root: str, kernel: str | None = None) -> str:
    """The kernel command line for a root mode, with the board's facts filled in. A
    kernel may name its console differently (Linux 2.4's ttyS0 for 2.6's ttyCPM0)."""
    try:
        template = board.root.bootargs[root]
    except KeyError:
        raise FactsError(f"{board.path}: no bootargs for root mode {root!r} "
                         f"(root.bootargs has: {', '.join(board.root.bootargs)})") from None
    k = board.images.kernels.get(kernel or "")
    device = (k.console if k else None) or board.console.device
    net = board.network
    return template.format(
        console=f"{device},{board.console.baud}", ip=net.ip, netmask=net.netmask,
        server_ip=net.server_ip, nfs_export=board.nfs.export, name=board.name)
