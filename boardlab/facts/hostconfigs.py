"""Configs of a lab host's services, rendered from board facts: ser2net, tftpd-hpa,
the NFS exports (nfs-kernel-server and nfs-ganesha). Used for the virtual lab host
at run time and for real lab hosts' files under places/."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from boardlab.facts.labhosts import LabHost


MOUNTD_PORT = 20048   # the NFS mount daemon's port, pinned (facts.lanfirewall names it)


def lan_network(lab: LabHost) -> str:
    return str(ipaddress.ip_interface(lab.address).network)


def ser2net_yaml(lines, chardelay: bool = False) -> str:
    """lines: (name, tcp_port, device, baud, listen address). RFC2217; consoles are root
    shells without authentication, so they listen on 127.0.0.1 (labgrid clients come
    through the exporter's SSH proxy, LAVA's worker is on the lab host);
    kickolduser so a stale session never blocks the next test run; no chardelay, so
    every character goes out as it comes and console timestamps stay within a
    millisecond (ser2net's default holds a short line back ~3.5 ms to fill a packet)."""
    out = ["%YAML 1.1", "---", "# ser2net 4.x: one connection per board console (RFC2217)"]
    for name, port, device, baud, listen in lines:
        out += [
            f"connection: &{name}",
            f"  accepter: telnet(rfc2217),tcp,{listen},{port}",
            f"  connector: serialdev,{device},{baud}n81,local",
            "  options:",
            "    kickolduser: true",
            f"    chardelay: {'true' if chardelay else 'false'}",
            "",
        ]
    return "\n".join(out)


def ganesha_conf(exports, bind_addr: str, recovery: str | None = None) -> str:
    """nfs-ganesha (user space: for hosts whose kernel has no nfsd). NFSv3 and v4
    over TCP, no NLM (boards mount with nolock), graceless so a restart is instant.
    exports: NfsExport, each to its own clients only (nfs_export_clients)."""
    out = [
        "# nfs-ganesha: NFS roots of the lab's boards, each to its board's address only",
        "NFS_CORE_PARAM {",
        "    Protocols = 3, 4;",
        "    Enable_NLM = false;",
        "    Enable_RQUOTA = false;",
        f"    Bind_addr = {bind_addr};",
        f"    MNT_Port = {MOUNTD_PORT};   # pinned: the LAN's rule set names it (facts.lanfirewall)",
        "}",
        "NFSV4 { Graceless = true; }" if recovery is None else
        # each server its own state directory (two virtual hosts share this machine's disk)
        f"NFSV4 {{ Graceless = true; RecoveryRoot = {recovery}; }}",
        "NFS_KRB5 { Active_krb5 = false; }",
    ]
    for export_id, e in enumerate(exports, start=1):
        export_id = e.export_id or export_id
        out += [
            "EXPORT {",
            f"    Export_Id = {export_id};",
            f"    Path = {e.path};",
            f"    Pseudo = {e.path};",
            "    Access_Type = None;",
            "    Protocols = 3, 4;",
            "    Transports = TCP;",
            "    SecType = sys;",
            f"    Squash = {'Root_Squash' if e.root_squash else 'No_Root_Squash'};",
            f"    CLIENT {{ Clients = {', '.join(e.clients)}; Access_Type = RW; }}",
            "    FSAL { Name = VFS; }",
            "}",
        ]
    return "\n".join(out) + "\n"


# lava-dispatcher extracts a job's NFS root under this directory (lava_common.constants
# DISPATCHER_DOWNLOAD_DIR) and boots the board from it: a worker exports it to the lab LAN
LAVA_NFS_DIR = "/var/lib/lava/dispatcher/tmp"


@dataclass(frozen=True)
class NfsExport:
    """One exported directory: who may mount it, whether root's writes are squashed,
    whether each request is checked to lie inside it (subtree_check), and why."""
    path: str
    clients: tuple[str, ...]    # addresses, never a network
    root_squash: bool
    subtree_check: bool
    why: str
    export_id: int | None = None   # ganesha's, fixed where the export comes and goes (a job root)


def nfs_export_dirs(lab: LabHost, boards) -> list[str]:
    """What a lab host exports over NFS at all times: each board's root."""
    return [e.path for e in nfs_export_clients(lab, boards)]


def nfs_export_clients(lab: LabHost, boards) -> list[NfsExport]:
    """Each board's root to that board's address alone. LAVA's job roots are not here:
    each is exported to its own board only while the job has it powered
    (lava_job_exports, boardlab.lab.powerguard)."""
    out = []
    for b in boards:
        why = ("root_squash: the board never writes its root as root" if b.nfs.root_squash else
               "no_root_squash: the board's init writes its own root as root")
        why += ("; a file system of its own" if b.nfs.own_filesystem else
                "; subtree_check: not a file system of its own")
        out.append(NfsExport(b.nfs.export, (b.network.ip,), b.nfs.root_squash,
                             not b.nfs.own_filesystem, f"{b.name}'s root, {why}"))
    return out


JOB_EXPORT_ID = 100   # + the board's place among its lab host's: its job root's ganesha id


def lava_job_exports(boards, roots: dict) -> list[NfsExport]:
    """roots: {board name: its running LAVA job's directory (LAVA_NFS_DIR/<prefix><id>)}
    -> each to its board's address alone (extracted as root, written by the board's
    root: no_root_squash; a directory, not a file system: subtree_check)."""
    return [NfsExport(roots[b.name], (b.network.ip,), False, True,
                      f"LAVA's job root on {b.name}, for the job's length", JOB_EXPORT_ID + i)
            for i, b in enumerate(boards) if b.name in roots]


def nfs_exports(entries) -> str:
    """/etc/exports lines for nfs-kernel-server: each directory to its own boards'
    addresses only, each line after a comment saying why its options are what they are.
    An address on a LAN is no proof of identity: docs/guides.md says what else holds."""
    lines = ["# NFS roots of the lab's boards: each to its board's address only",
             f"# LAVA's job roots (under {LAVA_NFS_DIR}) are not listed: each is exported to its",
             "# own board alone while the job has it powered (`boardlab lab power`, exportfs)"]
    for e in entries:
        opts = ",".join(["rw", "root_squash" if e.root_squash else "no_root_squash",
                         "subtree_check" if e.subtree_check else "no_subtree_check", "sync"])
        lines += [f"# {e.why}", f"{e.path} " + " ".join(f"{c}({opts})" for c in e.clients)]
    return "\n".join(lines) + "\n"


def tftpd_defaults(root: str, address: str) -> str:
    """/etc/default/tftpd-hpa: read-only, secure (chrooted) mode."""
    return (
        "# tftpd-hpa on the lab LAN: read-only, chrooted to the TFTP root\n"
        'TFTP_USERNAME="tftp"\n'
        f'TFTP_DIRECTORY="{root}"\n'
        f'TFTP_ADDRESS="{address}:69"\n'
        'TFTP_OPTIONS="--secure"\n'
    )


def tftpd_retransmit_args(lab) -> list[str]:
    """tftpd-hpa's retransmit in real time, not what the board asks: U-Boot sends its
    timeout (5 s) as an option, tftpd-hpa takes it as its own retransmit time, and a
    board on the deterministic clock counts its 10 retries of 5 s in guest time, which
    runs several times faster than real time. One lost data packet then outlasts U-Boot's
    whole retry budget before tftpd-hpa sends it again ("Retry count exceeded")."""
    if not lab.tftp_retransmit_ms:
        return []
    return ["--refuse", "timeout", "--retransmit", str(int(lab.tftp_retransmit_ms) * 1000)]
