"""Checks of board and lab-host facts that their types alone let through: an address that
is a host name or a subnet, a port out of range, an export path that would export /."""
from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from boardlab.facts import loads
from boardlab.facts.typedyaml import FactsError


def check_address(path, where: str, value: str):
    """One IPv4 address: not a host name, a subnet or a wildcard (it goes into exports,
    bootargs and U-Boot's ipaddr)."""
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise FactsError(f"{path}: field '{where}' must be one IPv4 address (like "
                         f"192.168.20.11), got {value!r}") from None


def check_export_path(path, where: str, value: str):
    if not value.startswith("/") or value.rstrip("/") == "" or re.search(r"\s", value) \
            or "/../" in value + "/":
        raise FactsError(f"{path}: field '{where}' must be an absolute directory below / "
                         f"without whitespace or '..', got {value!r}")


def check_power_host(path, model: str, host: str):
    """The PDU's address goes into shell commands (LAVA's, pdudaemon's) and generated
    files: a URL (rest, simplerest) or a host name (gude), nothing a shell would read,
    and no credentials (those stay in a root-only file on the lab host, e.g. curl's
    netrc, never in a facts file that is copied everywhere)."""
    if model in ("rest", "simplerest"):
        parts = urlsplit(host.replace("{index}", "0").replace("{value}", "0").replace("{lab_host}", "lab"))
        ok = parts.scheme in ("http", "https") and parts.hostname and not re.search(r"[\s;$`'\"\\|&<>]", host)
        if "@" in parts.netloc:
            raise FactsError(f"{path}: field 'power.host' holds credentials ({parts.netloc}): "
                             f"keep them in a root-only file on the lab host (curl's netrc), "
                             f"not in the facts")
    else:
        ok = re.fullmatch(r"[A-Za-z0-9.-]+(:\d+)?", host) is not None
    if not ok:
        raise FactsError(f"{path}: field 'power.host' must be "
                         f"{'an http(s) URL' if model in ('rest', 'simplerest') else 'a host name or address'} "
                         f"without spaces or shell characters, got {host!r}")


def check_board(board, path, root_modes=(), project_root=None):
    """The fields whose type alone lets a bad value through, and those that must agree
    with each other or with the files of the project."""
    _check_agreement(board, path, root_modes, project_root)
    check_power_host(path, board.power.model, board.power.host)
    net = board.network
    for where, value in (("network.ip", net.ip), ("network.server_ip", net.server_ip),
                         ("network.netmask", net.netmask)):
        check_address(path, where, value)
    if not 1 <= board.console.ser2net_port <= 65535:
        raise FactsError(f"{path}: field 'console.ser2net_port' must be 1..65535, "
                         f"got {board.console.ser2net_port}")
    if board.console.baud <= 0:
        raise FactsError(f"{path}: field 'console.baud' must be a positive rate, got "
                         f"{board.console.baud}")
    if board.power.index < 0:
        raise FactsError(f"{path}: field 'power.index' must be an outlet number >= 0, got "
                         f"{board.power.index}")
    check_export_path(path, "nfs.export", board.nfs.export)
    check_export_path(path, "tftp.dir", board.tftp.dir)
    iso = net.isolation
    if iso is not None and (iso.vlan is None) == (iso.switch_port is None):
        raise FactsError(f"{path}: field 'network.isolation' needs one of vlan (the board's own "
                         f"VLAN) or switch_port (its isolated switch port)")
    if iso is not None and iso.vlan is not None and not 2 <= iso.vlan <= 4094:
        raise FactsError(f"{path}: field 'network.isolation.vlan' must be 2..4094, got {iso.vlan}")


def check_lab_host(lab, path, virtual_fields, real_fields=()):
    fields = virtual_fields if lab.kind == "virtual" else real_fields
    missing = [f for f in fields if getattr(lab, f) is None]
    if missing:
        raise FactsError(f"{path}: missing field '{missing[0]}' (a {lab.kind} lab host has "
                         f"{', '.join(fields)})")
    try:
        ipaddress.IPv4Interface(lab.address)
    except ValueError:
        raise FactsError(f"{path}: field 'address' must be an IPv4 address with its prefix "
                         f"length (like 192.168.20.1/24), got {lab.address!r}") from None
    check_export_path(path, "tftp_root", lab.tftp_root)
    if lab.boots_at_once is not None and (not isinstance(lab.boots_at_once, int) or lab.boots_at_once < 1):
        raise FactsError(f"{path}: field 'boots_at_once' must be a whole number of boards, 1 or more, "
                         f"got {lab.boots_at_once!r}")
    if lab.lan_interface is not None and not re.fullmatch(r"[A-Za-z0-9._-]{1,15}", lab.lan_interface):
        raise FactsError(f"{path}: field 'lan_interface' must be an interface name (like enp2s0 "
                         f"or br-lan), got {lab.lan_interface!r}")
    if lab.ssh_address is not None:
        check_address(path, "ssh_address", lab.ssh_address)
        if ipaddress.IPv4Address(lab.ssh_address) in ipaddress.IPv4Interface(lab.address).network:
            raise FactsError(f"{path}: field 'ssh_address' is {lab.ssh_address}, on the lab LAN "
                             f"({lab.address}): sshd must listen where the boards are not")
    if lab.management is not None:
        try:
            ipaddress.IPv4Interface(lab.management)
        except ValueError:
            raise FactsError(f"{path}: field 'management' must be an IPv4 address with its "
                             f"prefix length (like 10.231.0.11/24), got {lab.management!r}") from None


def _check_agreement(board, path, root_modes, project_root):
    for mode in board.root.bootargs:
        if root_modes and mode not in root_modes:
            raise FactsError(f"{path}: field 'root.bootargs.{mode}': unknown root mode "
                             f"(known: {', '.join(root_modes)})")
    if board.images.default_kernel not in board.images.kernels:
        raise FactsError(f"{path}: field 'images.default_kernel' names "
                         f"{board.images.default_kernel!r}, which is not in images.kernels")
    if board.qemu is not None and not 0 <= board.qemu.icount_shift <= 10:
        raise FactsError(f"{path}: field 'qemu.icount_shift' must be 0..10, "
                         f"got {board.qemu.icount_shift}")
    if board.qemu is not None and board.qemu.load != "none":
        try:   # the switch's reading of it, not a second one
            loads.check_board(board, loads.parse(board.qemu.load))
        except loads.LoadError as e:
            raise FactsError(f"{path}: field 'qemu.load': {e}") from None
    for k in board.images.kernels.values():
        if project_root and k.config and (k.debian_package or not (project_root / k.config).exists()):
            why = "debian_package is given too" if k.debian_package else f"not in {project_root}"
            raise FactsError(f"{path}: field 'images.kernels.{k.name}.config': {k.config}: {why}")
    if path.stem != board.name:
        raise FactsError(f"{path}: field 'name' is {board.name!r} but the file is named "
                         f"{path.name}; they must agree")
