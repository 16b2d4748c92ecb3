"""The virtual lab as a whole (places/lab.yaml): the management network that joins its
lab hosts (a bridge in this machine's root namespace, which is the management host) and
the labgrid coordinator on it, and every virtual lab host (boardlab.vlab.host), each its
own network namespace linked to that bridge. `boardlab vlab up` brings up the lab the
facts describe: the hosts whose boards it is asked for, or all."""
from __future__ import annotations

import contextlib
import json
import os

from boardlab.errors import InputError
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import load_lab
from boardlab.facts.labhosts import lab_hosts
from boardlab.log import progress
from boardlab.vlab import leases
from boardlab.vlab.host import LabError, VirtualLabHost
from boardlab.vlab.mgmt import (COORDINATOR_DIR, coordinator_service, daemons, management_down,
                                management_up)


def virtual_hosts() -> list[str]:
    return [h.name for h in lab_hosts() if h.kind == "virtual"]


class VirtualLab:
    """Every virtual lab host of the facts, and their management network."""

    def __init__(self):
        self.hosts = {name: VirtualLabHost(name) for name in virtual_hosts()}

    def host_of(self, board: str):
        lab_host = load_board(board).lab_host
        if lab_host not in self.hosts:
            raise InputError(f"board {board}: its lab host {lab_host} is not a virtual one here")
        return self.hosts[lab_host]

    def up(self, boards=()):
        on = {b: self.host_of(b) for b in boards}    # a name the lab lacks: before anything starts
        management_up()
        for host in self.hosts.values():
            host.up([b for b in boards if on[b] is host])

    def down(self, force: bool = False, host: str | None = None):
        """Every host and the management network down (or one host: `host`); refused
        while another process holds a lease on the lab (a suite or sweep measuring on it)
        unless forced."""
        held = [h for h in leases.holders() if h["pid"] != os.getpid()]
        if held and not force:
            if host is None:
                leases.set_down_due(True)    # the last of them takes it down
            raise LabError(f"the virtual lab is in use by {leases.describe(held)}: "
                           + ("it goes down when the last of them is done" if host is None else
                              f"lab host {host} stays up") +
                           " (`boardlab vlab down --force` takes it down under them)")
        if host is not None:
            return self.hosts[host].down()
        leases.set_down_due(False)
        for h in self.hosts.values():
            h.down()
        management_down()

    def is_up(self) -> bool:
        return all(h.is_up() for h in self.hosts.values()) and daemons().pid("coordinator") is not None

    def prepare(self, board: str):
        self.host_of(board).prepare(board)

    def board(self, name: str):
        return self.host_of(name).board(name)

    @property
    def boards(self):
        return [b for h in self.hosts.values() for b in h.boards]

    def status(self) -> dict:
        return {"coordinator": {"address": load_lab().coordinator, "pid": daemons().pid("coordinator")},
                "hosts": {n: h.status() for n, h in self.hosts.items()}}

    # a service of one host (default: the first board's, vlab), as the fault tests stop it
    def stop_service(self, name, host: str = "vlab") -> bool:
        if name == "coordinator":
            return daemons().stop("coordinator")
        return self.hosts[host].stop_service(name)

    def start_service(self, name, host: str = "vlab"):
        if name == "coordinator":
            svc, cmd, netns, ready = coordinator_service()
            return daemons().start(svc, cmd, netns=netns, ready=ready, timeout=20.0, cwd=COORDINATOR_DIR)
        return self.hosts[host].start_service(name)

    def clock(self, clock: str | None = None) -> dict:
        out = {}
        for h in self.hosts.values():
            out.update(h.clock(clock))
        return out


@contextlib.contextmanager
def kept_up(name: str = "vlab", boards=(), leave_up: bool = False):
    """The virtual lab (every virtual lab host and their management network) with the
    named boards' images, brought up if it is not, and down again at the end if this
    brought it up (unless leave_up) and no other user holds it then (vlab.leases: else
    the last user takes it down): for benches, scripts and test sessions. Yields lab
    host `name`."""
    labs = VirtualLab()
    if name not in labs.hosts:
        raise InputError(f"no virtual lab host {name!r} (places/*/lab-host.yaml: {', '.join(labs.hosts)})")
    lease, was_up = leases.take(), True
    try:
        with leases.deciding():   # two users starting at once: one brings it up, the other finds it up
            was_up = labs.is_up()
            if not was_up:
                labs.up(boards)
        lab = labs.hosts[name]
        for b in boards:
            lab.prepare(b)
        yield lab
    finally:
        with leases.deciding():   # the last user out takes it down, not the first one in
            leases.release(lease)
            others = leases.holders()
            if not leave_up and (not was_up or leases.down_due()):
                if others:
                    leases.set_down_due(True)
                    progress(f"the virtual lab stays up: in use by {leases.describe(others)}; "
                             f"the last of them takes it down")
                else:
                    leases.set_down_due(False)
                    labs.down(force=True)


def format_lab_status(st: dict) -> str:
    c = st["coordinator"]
    lines = [f"virtual lab: coordinator {c['address']} "
             + (f"running, pid {c['pid']}" if c["pid"] else "stopped")]
    return "\n".join(lines + [format_status(h) for h in st["hosts"].values()])


def format_status(st: dict) -> str:
    lines = [f"virtual lab host {st['lab']}: namespace {st['netns'] or '(none)'}"]
    for name, pid in st["services"].items():
        lines.append(f"  {name:14s} {'running, pid ' + str(pid) if pid else 'stopped'}")
    for name, b in st["boards"].items():
        q = f", qemu pid {b['qemu_pid']}" if b["qemu_pid"] else ""
        c = f", clock {b['clock']}" if b.get("clock") else ""
        i = "" if b.get("images") else ", images not built yet (built at its first use)"
        lines.append(f"  board {name:8s} power {b['power']}{q}, console {b['console']}{c}{i}")
    return "\n".join(lines)


def status_json(st: dict) -> str:
    return json.dumps(st, indent=2)
