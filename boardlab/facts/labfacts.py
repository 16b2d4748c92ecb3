"""A lab host and its boards, checked against each other: the facts of one board cannot
say that two boards share a console port, a power outlet or an address. And the lab as
a whole (places/lab.yaml): its management network and coordinator."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from boardlab.facts.board import PLACES_DIR, Board, board_path, load_board
from boardlab.facts.labhosts import LabHost, lab_host_of
from boardlab.facts.typedyaml import FactsError, build, load_yaml

# This host's arbiter (`boardlab lava server up`'s or the systemd unit's): what it set aside
# must last as long as LAVA's database (/var/lib/postgresql), not a run directory or /run:
# a Maintenance it set and nobody remembers is a board wedged for good.
ARBITER_STATE = Path("/var/lib/boardlab/arbiter/arbiter.json")


@dataclass(frozen=True)
class Lab:
    """The lab as a whole (places/lab.yaml): the management network that joins its lab
    hosts, and the management host on it, where the labgrid coordinator runs."""
    management: str             # the management host's address, with prefix length
    bridge: str                 # the management network on this machine (virtual lab hosts)
    default_board: str          # the board a command uses when none is named (the main job's)
    coordinator_port: int = 20408
    hold_limit_h: float = 24.0  # a person's hold of a place longer than this is flagged (lab status)
    path: str = ""

    @property
    def management_ip(self) -> str:
        return self.management.split("/")[0]

    @property
    def coordinator(self) -> str:
        return f"{self.management_ip}:{self.coordinator_port}"


def load_lab(path: Path | None = None) -> Lab:
    path = path or PLACES_DIR / "lab.yaml"
    if not path.exists():
        raise FactsError(f"{path}: missing (the lab's management network and coordinator)")
    lab = dataclasses.replace(build(Lab, load_yaml(path), path), path=str(path))
    if not board_path(lab.default_board).exists():
        raise FactsError(f"{path}: field 'default_board' names {lab.default_board!r}, but there is "
                         f"no {board_path(lab.default_board)}")
    if lab.hold_limit_h <= 0:
        raise FactsError(f"{path}: field 'hold_limit_h' is {lab.hold_limit_h:g}: hours, more than 0")
    return lab


def default_board() -> str:
    """The board a command, the main job and the tests' own session use when none is named."""
    return load_lab().default_board


def lab_boards(lab: LabHost) -> list[Board]:
    """The boards of a lab host, checked against each other and against the lab host:
    each names this lab host, no two share a ser2net port, a power outlet or an IP, and
    a real lab host's boards name their serial adapter."""
    boards = []
    for name in lab.boards:
        if not board_path(name).exists():
            raise FactsError(f"{lab.path}: field 'boards' names {name!r}, but there is no "
                             f"{board_path(name)}")
        board = load_board(name)
        if board.lab_host != lab.name:
            raise FactsError(f"{lab.path}: field 'boards' lists {name!r}, but {board.path} "
                             f"says lab_host: {board.lab_host}")
        if lab.kind == "virtual" and board.qemu is None:
            raise FactsError(f"{board.path}: field 'lab_host' is {lab.name!r}, a virtual lab host, "
                             f"but the board has no 'qemu' section (a real board needs a real lab host)")
        if lab.kind == "real" and not board.console.serial_adapter:
            raise FactsError(f"{board.path}: field 'console.serial_adapter' is needed: lab "
                             f"host {lab.name} is a real one (ser2net serves a device)")
        if lab.kind == "real" and board.network.isolation is None:
            raise FactsError(f"{board.path}: field 'network.isolation' is needed: lab host "
                             f"{lab.name} is a real one (the board's own VLAN or isolated "
                             f"switch port keeps the other boards from reaching it)")
        boards.append(board)
    for what, key in (("ser2net port (console.ser2net_port)", lambda b: b.console.ser2net_port),
                      ("power outlet (power.host, power.index)", lambda b: (b.power.host, b.power.index)),
                      ("IP address (network.ip)", lambda b: b.network.ip),
                      ("VLAN (network.isolation.vlan)", lambda b: b.network.isolation and b.network.isolation.vlan),
                      ("switch port (network.isolation.switch_port)",
                       lambda b: b.network.isolation and b.network.isolation.switch_port)):
        seen = {}
        for b in boards:
            if key(b) is None:
                continue
            other = seen.setdefault(key(b), b)
            if other is not b:
                raise FactsError(f"{b.path}: boards {other.name} and {b.name} of lab host "
                                 f"{lab.name} have the same {what}: {key(b)!r}")
    return boards


def check_listed(board: Board):
    """A board's lab host is one this checkout describes, and lists the board (a board
    on no known lab host would be left out of every generated file in silence)."""
    from boardlab.facts import board as facts   # PLACES_DIR as it is now (tests move it)
    lab = lab_host_of(board)
    if lab is None:
        known = ", ".join(sorted(p.parent.name for p in facts.PLACES_DIR.glob("*/lab-host.yaml")))
        raise FactsError(f"{board.path}: field 'lab_host' is {board.lab_host!r}, but no "
                         f"{facts.PLACES_DIR}/{board.lab_host}/lab-host.yaml describes such a lab "
                         f"host (lab hosts: {known})")
    if board.name not in lab.boards:
        raise FactsError(f"{board.path}: field 'lab_host' is {board.lab_host!r}, but "
                         f"{lab.path} does not list {board.name} in its boards")


if __name__ == "__main__":   # scripts/main-job.sh asks which board it runs on
    import sys
    try:
        print(default_board())
    except FactsError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
