"""Configs of a lab host's services, rendered from board facts: ser2net, tftpd-hpa,
the NFS exports (nfs-kernel-server and nfs-ganesha). Used for the virtual lab host
at run time and for real lab hosts' files under places/."""
from __future__ import annotations

import ipaddress

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


def ganesha_conf(exports, bind_addr: str, clients: str, recovery: str | None = None) -> str:
    """nfs-ganesha (user space: for hosts whose kernel has no nfsd). NFSv3 and v4
    over TCP, no NLM (boards mount with nolock), graceless so a restart is instant."""
    out = [
        "# nfs-ganesha: NFS roots of the lab's boards",
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
    for export_id, path in enumerate(exports, start=1):
        out += [
            "EXPORT {",
            f"    Export_Id = {export_id};",
            f"    Path = {path};",
            f"    Pseudo = {path};",
            "    Access_Type = None;",
            "    Protocols = 3, 4;",
            "    Transports = TCP;",
            "    SecType = sys;",
            "    Squash = No_Root_Squash;",
            f"    CLIENT {{ Clients = {clients}; Access_Type = RW; }}",
            "    FSAL { Name = VFS; }",
            "}",
        ]
    return "\n".join(out) + "\n"


# lava-dispatcher extracts a job's NFS root under this directory (lava_common.constants
# DISPATCHER_DOWNLOAD_DIR) and boots the board from it: a worker exports it to the lab LAN
LAVA_NFS_DIR = "/var/lib/lava/dispatcher/tmp"


def nfs_export_dirs(lab: LabHost, boards) -> list[str]:
    """What a lab host exports over NFS: each board's root, and LAVA's directory where
    the lab host is also the LAVA worker."""
    dirs = [b.nfs.export for b in boards]
    return dirs + [LAVA_NFS_DIR] if lab.lava_worker else dirs


def nfs_export_clients(lab: LabHost, boards) -> list[tuple[str, list[str]]]:
    """(directory, the addresses that may mount it): each board's root to that board
    alone; LAVA's job directory to the boards LAVA boots (every board of the host)."""
    out = [(b.nfs.export, [b.network.ip]) for b in boards]
    if lab.lava_worker:
        out.append((LAVA_NFS_DIR, [b.network.ip for b in boards]))
    return out


def nfs_exports(entries) -> str:
    """/etc/exports lines for nfs-kernel-server: each root to its board's address only,
    root may write (an NFS root needs it, hence no_root_squash - which is why no other
    host may mount it)."""
    lines = ["# NFS roots of the lab's boards and of LAVA's jobs: each to its boards' addresses only"]
    for path, clients in entries:
        lines.append(f"{path} " + " ".join(f"{c}(rw,no_root_squash,no_subtree_check,sync)"
                                           for c in clients))
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
