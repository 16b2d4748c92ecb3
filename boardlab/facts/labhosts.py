"""Lab-host facts: one places/<host>/lab-host.yaml per lab host (a real one, or a virtual
one on this machine), checked on load. A lab host's boards are not listed in it: they
are the boards whose facts name it, so moving a board is one line of its own facts."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from boardlab.facts import board as _board
from boardlab.facts.board import Board
from boardlab.facts.checks import check_lab_host
from boardlab.facts.typedyaml import FactsError, build, load_yaml, one_of


@dataclass(frozen=True)
class PowerSwitch:
    port: int
    listen: str = ""            # default: the lab host's control address (LabHost.control_address)


@dataclass(frozen=True)
class PduDaemon:
    """pdudaemon on a real lab host: labgrid and LAVA both switch power through it, so
    requests to a PDU queue in one place (and are retried) instead of racing."""
    port: int = 16421
    listen: str = "127.0.0.1"   # its HTTP listener on the lab host: it switches boards'
                                # power without authentication, so not on the LAN
    host: str | None = None     # where clients on the lab host reach it (default: listen)


@dataclass(frozen=True)
class LabHost:
    name: str
    address: str                # on the lab LAN, with prefix length: the TFTP and NFS server
    tftp_root: str
    # its boards: those whose facts name it (boards/*.yaml lab_host), set on load
    boards: tuple[str, ...] = ()
    kind: str = one_of(("virtual", "real"), "virtual")
    exporter_name: str | None = None
    lava_worker: bool = True    # it also exports LAVA's NFS root directory
    # boards it boots at once at most (LAVA's worker job limit, health checks included): a
    # virtual host's boards each need a core, a real host's share its TFTP and NFS; None: no limit
    boots_at_once: int | None = None
    # tftpd's retransmit in ms, the client's timeout refused (facts.hostconfigs.tftpd_retransmit_args)
    tftp_retransmit_ms: int | None = None
    pdudaemon: PduDaemon | None = None
    # the virtual lab host's LAN and power switch
    netns: str | None = None
    bridge: str | None = None
    run_dir: str | None = None
    power_switch: PowerSwitch | None = None
    # on the management network, with prefix length: where the lab host's exporter, ssh,
    # consoles and power switch are reached (a virtual lab host: its own namespace)
    management: str | None = None
    # a real lab host's: the interface its boards are on (the firewall matches packets by
    # it, IPv4 and IPv6 alike), and where its sshd listens (its office-LAN address, never
    # the lab LAN; the virtual host's sshd listens on its management address)
    lan_interface: str | None = None
    ssh_address: str | None = None
    path: str = ""

    @property
    def server_ip(self) -> str:
        return self.address.split("/")[0]

    @property
    def management_ip(self) -> str | None:
        return self.management.split("/")[0] if self.management else None

    @property
    def lan_ifname(self) -> str:
        """The lab LAN's interface on the lab host: the virtual host's bridge (its boards'
        taps are its ports), a real host's lan_interface."""
        return self.bridge or self.lan_interface or ""

    @property
    def sshd_address(self) -> str | None:
        return self.ssh_address or self.management_ip

    @property
    def control_address(self) -> str:
        """Where the lab's controls (consoles, power switch) listen: the management
        address, else 127.0.0.1; never the lab LAN, where the boards are."""
        return self.management_ip or "127.0.0.1"


VIRTUAL_LAB_FIELDS = ("netns", "bridge", "run_dir", "power_switch")
REAL_LAB_FIELDS = ("lan_interface", "ssh_address")


def load_lab_host(name_or_path="vlab") -> LabHost:
    p = Path(name_or_path)
    path = p if p.suffix in (".yaml", ".yml") else _board.PLACES_DIR / str(name_or_path) / "lab-host.yaml"
    lab = build(LabHost, load_yaml(path), path)
    if lab.boards:
        raise FactsError(f"{path}: field 'boards': a lab host's boards are those whose facts "
                         f"name it (lab_host in boards/*.yaml); remove the list")
    lab = dataclasses.replace(lab, path=str(path), boards=boards_of(lab.name))
    check_lab_host(lab, path, VIRTUAL_LAB_FIELDS, REAL_LAB_FIELDS)
    return lab


def boards_of(lab_host: str) -> tuple[str, ...]:
    """The boards whose facts name this lab host (read without loading them whole)."""
    found = []
    for path in sorted(_board.BOARDS_DIR.glob("*.yaml")):
        data = load_yaml(path)
        if isinstance(data, dict) and data.get("lab_host") == lab_host:
            found.append(path.stem)
    return tuple(found)


def lab_host_of(board: Board) -> LabHost | None:
    """The board's lab host, when its facts are in places/ (None: a lab host this
    checkout does not describe)."""
    path = _board.PLACES_DIR / board.lab_host / "lab-host.yaml"
    return load_lab_host(path) if path.exists() else None


def arbitrated(lab: LabHost) -> bool:
    """Whether LAVA shares the lab host's boards through the management host's arbiter
    (boardlab.lab.arbiter): a real lab host with a LAVA worker. A virtual lab host's boards
    are LAVA's only while `boardlab lava server up` runs its own arbiter."""
    return lab.kind == "real" and lab.lava_worker


def lab_hosts() -> list[LabHost]:
    return [load_lab_host(p) for p in sorted(_board.PLACES_DIR.glob("*/lab-host.yaml"))]
