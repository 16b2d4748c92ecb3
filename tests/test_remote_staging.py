"""Staging a kernel to a REMOTE lab host: a developer's machine, the board's TFTP server
on the exporter's host. The lab host here is this machine behind a real sshd of the
test's own on 127.0.0.1 (a free port, its own host and user keys); the ssh client finds
it through an ssh config the test puts first on PATH, as a developer's ~/.ssh/config
would. The copy is labgrid's ssh connection + rsync; U-Boot then loads the file by TFTP."""
import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from boardlab import envgen
from boardlab.boot import staging
from boardlab.facts.board import load_board
from boardlab.net import free_port, tcp_open, wait_for
from paths import ROOT

LAB_HOST = "labhost-test"     # a name only the ssh config knows


def use_ssh_config(d: Path, config: str, monkeypatch):
    """ssh (and rsync's ssh) of this test read config, as from a developer's ~/.ssh/config:
    a wrapper first on PATH."""
    (d / "ssh_config").write_text(config)
    (d / "bin").mkdir()
    (d / "bin" / "ssh").write_text(f"#!/bin/sh\nexec /usr/bin/ssh -F {d / 'ssh_config'} \"$@\"\n")
    (d / "bin" / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{d / 'bin'}:{os.environ['PATH']}")


@pytest.fixture
def ssh_lab_host(tmp_path, monkeypatch):
    """sshd on 127.0.0.1 (stopped by PID after) and an ssh client configured to reach it
    as LAB_HOST. Yields the sshd log path."""
    d = tmp_path / "ssh"
    d.mkdir()
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True)
    (d / "authorized_keys").write_text((d / "user_key.pub").read_text())
    port = free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {d / 'sshd.pid'}\nLogLevel VERBOSE\n")
    host_pub = (d / "host_key.pub").read_text().split()
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    use_ssh_config(d, f"Host {LAB_HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
                      f"  IdentityFile {d / 'user_key'}\n  IdentitiesOnly yes\n"
                      f"  UserKnownHostsFile {d / 'known_hosts'}\n", monkeypatch)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # sshd's privilege separation dir
    log = d / "sshd.log"
    with open(log, "w") as out:
        sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(d / "sshd_config")],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: tcp_open(port) or sshd.poll() is not None, what=f"sshd on port {port}")
        assert sshd.poll() is None, log.read_text()
        yield log
    finally:
        from labgrid.util.ssh import sshmanager
        if LAB_HOST in sshmanager._connections:     # labgrid's shared master connection
            sshmanager.close(LAB_HOST)
        sshd.terminate()
        sshd.wait(timeout=10)


def test_this_host_and_a_remote_one():
    assert staging.is_this_host("localhost") and staging.is_this_host(socket.gethostname())
    assert staging.is_this_host("127.0.0.1")
    assert not staging.is_this_host(LAB_HOST)
    assert not staging.is_this_host("198.51.100.77")   # TEST-NET-2: not here
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("198.51.100.77", 9))     # no packet: picks the address of the route
            own = s.getsockname()[0]
        except OSError:
            own = None                          # no route off this host
    if own:
        assert staging.is_this_host(own)       # this machine by a LAN address of its own


def test_local_staging_is_atomic_and_skips_an_up_to_date_file(tmp_path):
    src = tmp_path / "uImage"
    src.write_bytes(b"x" * 1000)
    tftp = tmp_path / "tftp"
    assert staging.stage_local(src, str(tftp)) is True
    assert (tftp / "uImage").read_bytes() == src.read_bytes()
    assert oct((tftp / "uImage").stat().st_mode & 0o777) == "0o644"
    assert staging.stage_local(src, str(tftp)) is False
    src.write_bytes(b"y" * 1001)
    assert staging.stage_local(src, str(tftp)) is True
    assert sorted(p.name for p in tftp.iterdir()) == ["uImage"]   # no temporary left


def test_staging_decides_by_content_not_by_size_and_time(tmp_path):
    """Another kernel of the same name and size, the staged copy newer: it is replaced,
    or the board would boot the old kernel under the new one's name."""
    tftp = tmp_path / "tftp"
    old, new = tmp_path / "old" / "uImage", tmp_path / "new" / "uImage"
    old.parent.mkdir(); new.parent.mkdir()
    old.write_bytes(b"A" * 4096)
    new.write_bytes(b"B" * 4096)
    assert staging.stage_local(old, str(tftp)) is True
    os.utime(new, (1_000_000, 1_000_000))                 # the new build looks older
    assert staging.stage_local(new, str(tftp)) is True
    assert (tftp / "uImage").read_bytes() == new.read_bytes()
    assert staging.stage_local(new, str(tftp)) is False   # the same bytes: no copy


def test_an_unreachable_lab_host_names_host_directory_and_what_is_needed(tmp_path, monkeypatch):
    use_ssh_config(tmp_path, f"Host {LAB_HOST}\n  HostName 127.0.0.1\n  Port {free_port()}\n", monkeypatch)
    src = tmp_path / "uImage"
    src.write_bytes(b"x")
    with pytest.raises(staging.StagingError, match=rf"copying uImage to lab host {LAB_HOST} "
                                                   r"\(/srv/tftp/x\) over ssh failed(.|\n)*needs ssh access"):
        staging.stage_over_ssh(LAB_HOST, src, "/srv/tftp/x")


@pytest.mark.vlab   # an sshd of its own
def test_ssh_staging_copies_once(ssh_lab_host, tmp_path):
    src = tmp_path / f"uImage-{uuid.uuid4().hex[:8]}"
    src.write_bytes(os.urandom(4096))
    dest = tmp_path / "lab-host-tftp"
    assert staging.stage_over_ssh(LAB_HOST, src, str(dest)) is True
    assert (dest / src.name).read_bytes() == src.read_bytes()
    assert oct((dest / src.name).stat().st_mode & 0o777) == "0o644"
    assert staging.stage_over_ssh(LAB_HOST, src, str(dest)) is False    # up to date
    other = tmp_path / "other" / src.name        # same name and size, other bytes
    other.parent.mkdir()
    other.write_bytes(os.urandom(4096))
    os.utime(other, (1_000_000, 1_000_000))
    assert staging.stage_over_ssh(LAB_HOST, other, str(dest)) is True
    assert (dest / src.name).read_bytes() == other.read_bytes()
    assert not [p for p in dest.iterdir() if p.name.startswith(".stage-")]
    assert "Accepted publickey for root" in ssh_lab_host.read_text()


@pytest.mark.vlab
def test_board_boots_a_kernel_staged_to_its_remote_lab_host(ppc_board, ssh_lab_host, tmp_path):
    """A virtual board's env with its TFTP provider on LAB_HOST: a kernel under a new
    name goes there over ssh, U-Boot loads it by TFTP and the board boots it. On the
    PowerPC board, beside the default board's session: staging is every board's."""
    from labgrid import Environment
    board = load_board("qemu-ppc")
    data = envgen.labgrid_env(board)
    t = data["targets"]["main"]
    local = t["resources"].pop("TFTPProvider")
    t["resources"]["RemoteTFTPProvider"] = dict(local, host=LAB_HOST)
    t["drivers"]["BoardStrategy"] = {"facts": str(ROOT / "boards" / f"{board.name}.yaml"),
                                     "log_dir": str(tmp_path)}
    envfile = tmp_path / f"{board.name}-remote-tftp.yaml"
    envfile.write_text(yaml.safe_dump(data, sort_keys=False))
    default = board.images.default_kernel
    uimage = Path(board.images.dir) / board.images.kernels[default].uimage
    kernel = tmp_path / f"{default}-{uuid.uuid4().hex[:8]}.uImage"
    kernel.write_bytes(uimage.read_bytes())
    staged = Path(local["internal"]) / kernel.name
    env = Environment(str(envfile))
    try:
        strategy = env.get_target("main").get_driver("Strategy")
        strategy.select(kernel=str(kernel), root="ramdisk", ramdisk="")
        strategy.transition("shell")
        assert staged.read_bytes() == kernel.read_bytes()
        assert "Accepted publickey for root" in ssh_lab_host.read_text()
        boot_log = Path(strategy.last_boot.log_path).read_text()
        assert f"Bytes transferred = {kernel.stat().st_size} " in boot_log
        assert {"linux_version", "login", "shell"} <= set(strategy.last_boot.milestones)
        strategy.transition("off")
    finally:
        env.cleanup()
        staged.unlink(missing_ok=True)
