"""Putting a kernel or ramdisk into a board's TFTP directory on its lab host.

On the lab host itself (the virtual lab, a developer logged in there, an exporter on
this machine) it is an atomic local copy. From a developer's machine the TFTP provider
is a RemoteTFTPProvider on the exporter's host: the file goes there over ssh, the way
labgrid's ManagedFile reaches an exporter (the user's ssh config, keys and known
hosts; labgrid's shared connection). Not ManagedFile itself: it links the TFTP name to
a file in /var/cache/labgrid, outside the directory that tftpd --secure serves.

Either way the copy is skipped only when the lab host already has the same bytes (their
SHA-256 compared: two kernels of one name and size, or a file touched after copying,
must never pass for each other), and the file appears under its name at once (copy to
a temporary name, then rename), world-readable for tftpd."""
from __future__ import annotations

import hashlib
import ipaddress
import os
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

from boardlab.errors import LabFault
from boardlab.files import replaced


class StagingError(LabFault):
    part = "tftp"


def is_this_host(host: str) -> bool:
    """Whether a resource's host is this machine (its files are ours to copy locally)."""
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        addrs = {(a[0], a[4][0]) for a in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except OSError:
        return False         # a name only the ssh config knows: a remote lab host
    return any(ipaddress.ip_address(addr.split("%")[0]).is_loopback or _is_local_address(family, addr)
               for family, addr in addrs)


def _is_local_address(family, addr: str) -> bool:
    """An address of one of this machine's interfaces: binding to it works."""
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        try:
            s.bind((addr, 0))
        except OSError:
            return False
    return True


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def up_to_date(remote_sha256: str, local: Path) -> bool:
    """Whether the staged file holds the local file's bytes (by content, never by size
    and modification time)."""
    return remote_sha256 == sha256(local)


def stage_local(local: Path, directory: str) -> bool:
    """Copy local into directory; returns whether it copied."""
    os.makedirs(directory, exist_ok=True)
    dst = os.path.join(directory, local.name)
    if os.path.isfile(dst) and up_to_date(sha256(dst), local):
        return False
    with replaced(Path(dst), prefix=".stage-") as tmp:
        shutil.copy2(local, tmp)
    return True


def stage_over_ssh(host: str, local: Path, directory: str) -> bool:
    """Copy local into directory on host over ssh (labgrid's connection: rsync through
    its shared ssh master); returns whether it copied."""
    from labgrid.driver.exception import ExecutionError
    from labgrid.util.ssh import sshmanager
    q = shlex.quote
    dst = f"{directory.rstrip('/')}/{local.name}"
    try:
        conn = sshmanager.open(host)
        out, _, code = conn.run(f"sha256sum {q(dst)}")
        if code == 0 and out and up_to_date(out[0].split()[0], local):
            return False
        conn.run_check(f"mkdir -p {q(directory)}")
        # a temporary name of its own (mktemp on the lab host): two runs staging at once
        # never write into each other's copy
        tmp = conn.run_check(f"mktemp {q(directory.rstrip('/') + '/.stage-XXXXXXXX')}")[0].strip()
        conn.put_file(str(local), tmp)
        conn.run_check(f"chmod 0644 {q(tmp)} && mv -f {q(tmp)} {q(dst)}")
    except (ExecutionError, subprocess.CalledProcessError, OSError, ValueError) as e:
        raise StagingError(
            f"copying {local.name} to lab host {host} ({directory}) over ssh failed: {e}\n"
            f"The board's TFTP server is on {host}: this machine needs ssh access to it as "
            f"root or a user who may write {directory} (key and known host key, as for "
            f"labgrid's ManagedFile), and rsync on both ends.") from None
    return True


def stage(local: Path, directory: str, host: str | None = None, log=None) -> bool:
    """Put local into a board's TFTP directory: over ssh when host (a RemoteTFTPProvider's
    exporter host) is another machine, else a local copy. Returns whether it copied."""
    if not local.exists():
        raise StagingError(f"{local} does not exist")
    if host and not is_this_host(host):
        copied = stage_over_ssh(host, local, directory)
        if copied and log:
            log(f"staged {local.name} to {host}:{directory} over ssh")
        return copied
    return stage_local(local, directory)
