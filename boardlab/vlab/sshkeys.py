"""ssh to the virtual lab hosts, as to real ones: labgrid stages a kernel to a remote
place's TFTP directory with rsync over ssh to the exporter's host name (its
management address here). Keys live under /var/lib/boardlab/ssh: one client key, a
host key per lab host, their known_hosts; the machine's ssh client finds them through
/etc/ssh/ssh_config.d/boardlab.conf (written at `vlab up`, for the management addresses
only), so nobody's ~/.ssh is touched."""
from __future__ import annotations

import subprocess
from pathlib import Path

from boardlab.facts.labhosts import LabHost, lab_hosts

KEY_DIR = Path("/var/lib/boardlab/ssh")
CLIENT_KEY = KEY_DIR / "id_ed25519"
KNOWN_HOSTS = KEY_DIR / "known_hosts"
AUTHORIZED = KEY_DIR / "authorized_keys"
CLIENT_CONFIG = Path("/etc/ssh/ssh_config.d/boardlab.conf")


def _keygen(path: Path, comment: str):
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                       check=True)


def host_key(lab: LabHost) -> Path:
    """The lab host's key (made once), known to the client under its management
    address; the client's key authorized. Returns the host key's path."""
    _keygen(CLIENT_KEY, "boardlab lab client")
    key = KEY_DIR / lab.name / "ssh_host_ed25519_key"
    _keygen(key, f"boardlab lab host {lab.name}")
    AUTHORIZED.write_text(CLIENT_KEY.with_suffix(".pub").read_text())
    line = f"{lab.management_ip} {' '.join(key.with_suffix('.pub').read_text().split()[:2])}\n"
    known = [ln for ln in (KNOWN_HOSTS.read_text().splitlines(keepends=True) if KNOWN_HOSTS.exists() else [])
             if not ln.startswith(f"{lab.management_ip} ")]
    KNOWN_HOSTS.write_text("".join(known) + line)
    write_client_config()
    return key


def write_client_config():
    addresses = sorted(h.management_ip for h in lab_hosts() if h.kind == "virtual" and h.management)
    CLIENT_CONFIG.parent.mkdir(parents=True, exist_ok=True)
    CLIENT_CONFIG.write_text(
        "# Written by boardlab (`boardlab vlab up`): ssh to the virtual lab hosts on the\n"
        "# management network (places/*/lab-host.yaml); removed by `boardlab vlab down`.\n"
        f"Host {' '.join(addresses)}\n"
        "    User root\n"
        f"    IdentityFile {CLIENT_KEY}\n"
        f"    UserKnownHostsFile {KNOWN_HOSTS}\n"
        "    StrictHostKeyChecking yes\n")


def remove_client_config():
    CLIENT_CONFIG.unlink(missing_ok=True)


def sshd_config(lab: LabHost, run_dir: Path) -> str:
    return "\n".join([
        f"# sshd of virtual lab host {lab.name}, on its management address",
        f"ListenAddress {lab.management_ip}",
        f"HostKey {KEY_DIR / lab.name / 'ssh_host_ed25519_key'}",
        f"PidFile {run_dir / 'sshd.pid'}",
        f"AuthorizedKeysFile {AUTHORIZED}",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "AllowTcpForwarding yes",
        "Subsystem sftp /usr/lib/openssh/sftp-server",
        ""])
