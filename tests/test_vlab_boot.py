"""End to end on the virtual board: real QEMU + U-Boot, console through ser2net, the
kernel over TFTP from tftpd-hpa, the root from a ramdisk or the NFS server, power
through the HTTP power switch. The failures of a boot (a missing or corrupt uImage, a
kernel that panics or says nothing, a miswired console) on the PowerPC board."""
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from boardlab import envgen
from boardlab.boot.strategy import BootError
from boardlab.facts import lanfirewall
from boardlab.kernelbuilds import uimage
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import load_lab
from boardlab.facts.labhosts import lab_hosts
from boardlab.images import images
from boardlab.vlab.cable import serial_line
from paths import ROOT

pytestmark = pytest.mark.vlab

BOARD = load_board("qemu-arm")
IMAGES = Path(BOARD.images.dir)


def shell_of(strategy):
    return strategy.target.get_driver("ShellDriver")


# ---- the lab -------------------------------------------------------------------------

def test_lab_host_services_are_real_processes(vlab):
    st = vlab.status()
    assert st["netns"] == "boardlab-vlab"
    comms = {}
    for name, pid in st["services"].items():
        assert pid, f"{name} is not running"
        comms[name] = Path(f"/proc/{pid}/comm").read_text().strip()
    assert comms["ser2net"] == "ser2net"
    assert comms["tftpd"] == "in.tftpd"
    assert comms["rpcbind"] == "rpcbind"
    assert comms["nfsd"].startswith("ganesha")


def test_tftpd_serves_the_lab_lan_only_read_only(vlab, tmp_path):
    """tftp from inside the lab LAN fetches a file; writing is refused (secure, no -c)."""
    probe = Path(BOARD.tftp.dir) / "probe.txt"
    probe.write_text("boardlab\n")
    try:
        got = tmp_path / "got.txt"
        r = subprocess.run(["ip", "netns", "exec", vlab.ns, "tftp", "192.168.10.1", "-c", "get",
                            "qemu-arm/probe.txt", str(got)], capture_output=True, text=True,
                           timeout=20)
        assert got.read_text() == "boardlab\n", r.stderr
        r = subprocess.run(["ip", "netns", "exec", vlab.ns, "tftp", "192.168.10.1", "-c", "put",
                            str(got), "qemu-arm/uploaded.txt"], capture_output=True, text=True,
                           timeout=20)
        assert not (Path(BOARD.tftp.dir) / "uploaded.txt").exists()
    finally:
        probe.unlink()


# ---- booting -------------------------------------------------------------------------

def test_armmp_ramdisk_boot_reaches_a_shell_running_that_kernel(qemu):
    qemu.transition("off")
    qemu.transition("shell")
    rec = qemu.last_boot
    assert shell_of(qemu).run_check("uname -r") == [uimage.read(IMAGES / "armmp.uImage").release]
    assert list(rec.milestones) == ["starting_kernel", "linux_version", "freeing_init",
                                    "login", "shell"]
    assert os.path.exists(rec.log_path)
    assert "Linux version" in Path(rec.log_path).read_text()
    assert qemu.board.name in rec.log_path


def test_asking_for_the_shell_again_reuses_the_running_board(qemu):
    qemu.transition("shell")
    boots = qemu.boot_count
    shell_of(qemu).run_check("touch /tmp/still-the-same-boot")
    qemu.transition("shell")
    assert qemu.boot_count == boots
    assert shell_of(qemu).run("test -e /tmp/still-the-same-boot")[2] == 0


def test_nfs_root_boot(qemu):
    qemu.select(root="nfs")
    qemu.transition("shell")
    sh = shell_of(qemu)
    assert sh.run_check("uname -r") == [uimage.read(IMAGES / "armmp.uImage").release]
    mounts = "\n".join(sh.run_check("cat /proc/mounts"))
    assert f"192.168.10.1:{BOARD.nfs.export} / nfs" in mounts
    assert "shell" in qemu.last_boot.milestones


def lab_controls():
    """(address, port, what) of every control of the lab a board could try: each lab
    host's power switch, consoles and sshd on its LAN address and its management address,
    the coordinator and the LAVA server on the management host."""
    lab = load_lab()
    out = [(lab.management_ip, lab.coordinator_port, "coordinator"), (lab.management_ip, 8180, "LAVA")]
    for host in lab_hosts():
        if host.kind != "virtual":
            continue
        for addr in (host.server_ip, host.management_ip):
            out += [(addr, host.power_switch.port, f"{host.name} power switch"), (addr, 22, f"{host.name} sshd")]
            out += [(addr, load_board(b).console.ser2net_port, f"{host.name} console of {b}")
                    for b in host.boards]
    return list({(a, p): (a, p, what) for a, p, what in out}.values())   # the hosts share a LAN address


def test_the_board_reaches_its_boot_services_and_no_lab_control(qemu):
    """A board under test is untrusted: from its own shell, with a route it added itself
    to the management network (what a hostile kernel can do), every control of the lab is
    refused or unreachable. It booted over TFTP and mounted its root over NFS, and NFS
    answers the same probe (so the probe itself works)."""
    qemu.select(root="nfs")
    qemu.transition("shell")
    sh = shell_of(qemu)
    sh.run("route add -net 10.231.0.0 netmask 255.255.255.0 gw 192.168.10.1 2>&1")

    def reached(addr, port):
        out, _, _ = sh.run(f"nc -w 2 {addr} {port} </dev/null >/dev/null 2>&1 && echo REACHED", timeout=30)
        return "REACHED" in out
    assert reached("192.168.10.1", 2049), "the probe cannot reach NFS: it proves nothing"
    open_ports = [f"{what} at {a}:{p}" for a, p, what in lab_controls() if reached(a, p)]
    assert not open_ports, f"the board reaches: {open_ports}"
    assert "shell" in qemu.last_boot.milestones


def test_a_board_mounts_its_own_lava_job_root_and_not_its_neighbours(qemu):
    """LAVA's job roots go each to its own board, for its job's length (boardlab.lab.
    jobroots, as the power guard exports them). From qemu-arm's shell, on the real NFS
    server of its lab host: the root exported for a job on qemu-arm-noisy (same lab
    host, same LAN) is refused; its own is mounted and read; once its job has ended
    (unexported) its own is refused too."""
    import shutil
    from boardlab.facts.hostconfigs import LAVA_NFS_DIR
    from boardlab.facts.labhosts import load_lab_host
    from boardlab.lab import jobroots
    lab, me, neighbour = load_lab_host("vlab"), load_board("qemu-arm"), load_board("qemu-arm-noisy")
    roots = {b.name: Path(LAVA_NFS_DIR) / f"probe-{b.name}" for b in (me, neighbour)}
    for name, d in roots.items():
        d.mkdir(parents=True, exist_ok=True)
        (d / "owner").write_text(f"job root of {name}\n")
    qemu.select(root="nfs")
    qemu.transition("shell")
    sh = shell_of(qemu)
    ip = lab.server_ip

    def mounted(path) -> str:
        out, _, _ = sh.run(f"mkdir -p /mnt/probe && mount -t nfs -o vers=3,nolock,tcp,addr={ip} "
                           f"{ip}:{path} /mnt/probe 2>&1 && cat /mnt/probe/owner && umount /mnt/probe", timeout=90)
        return "\n".join(out)
    try:
        jobroots.export(lab, neighbour, roots[neighbour.name])
        jobroots.export(lab, me, roots[me.name])
        theirs, mine = mounted(roots[neighbour.name]), mounted(roots[me.name])
        jobroots.unexport(lab, me)
        after = mounted(roots[me.name])
    finally:
        jobroots.unexport(lab, me)
        jobroots.unexport(lab, neighbour)
        for d in roots.values():
            shutil.rmtree(d, ignore_errors=True)
    print(f"neighbour's: {theirs!r}\nown: {mine!r}\nown after its job: {after!r}")
    assert "job root of qemu-arm\n" in mine + "\n", "its own job root must mount: the probe proves nothing"
    assert "job root of" not in theirs and "job root of" not in after


def _lan_drops(lab) -> int:
    """Packets the lab host's LAN rule set has dropped so far (its counter)."""
    out = subprocess.run(["ip", "netns", "exec", lab.netns, "nft", "list", "chain", "inet", lanfirewall.TABLE,
                          "input"], capture_output=True, text=True, check=True).stdout
    return sum(int(n) for n in re.findall(r"counter packets (\d+) bytes \d+ drop", out))


def test_the_board_reaches_nothing_of_its_lab_host_over_ipv6(qemu):
    """IPv6 is dropped whole on the LAN: from the board's shell (its kernel speaks IPv6, its
    eth0 has its link-local address), the lab host's link-local address answers no ping,
    and not even neighbour discovery: the board cannot learn the host's link-layer address,
    so no IPv6 packet of a TCP or UDP service (NFS, sshd, the power switch, a console) gets
    there. The host's drop rule counts the board's packets: they reached the host and the
    rule refused them, not a missing route."""
    qemu.select(root="nfs")   # the ramdisk boot brings no network interface up
    qemu.transition("shell")
    sh = shell_of(qemu)
    assert " eth0" in "\n".join(sh.run_check("cat /proc/net/if_inet6")), "no IPv6 on eth0: proves nothing"
    lab = next(h for h in lab_hosts() if BOARD.name in h.boards)
    addr = subprocess.run(["ip", "netns", "exec", lab.netns, "ip", "-6", "-o", "addr", "show", "dev", lab.lan_ifname,
                           "scope", "link"], capture_output=True, text=True, check=True).stdout.split()[3].split("/")[0]
    before = _lan_drops(lab)
    out, _, _ = sh.run(f"ping6 -I eth0 -c 2 -W 2 {addr} >/dev/null 2>&1 && echo ANSWERED", timeout=30)
    assert "ANSWERED" not in out, f"the lab host answers the board's ping over IPv6 at {addr}"
    neighbour = [ln for ln in sh.run_check("ip -6 neigh") if ln.startswith(addr)]
    assert neighbour and "FAILED" in neighbour[0] and "lladdr" not in neighbour[0], neighbour
    assert _lan_drops(lab) > before, "the host's drop rule saw none of it: the probe proves nothing"


@pytest.mark.slow   # a variant: test_compare boots rt-armmp to its shell and reads PREEMPT_RT in its banner
def test_rt_kernel_boots_and_reports_preempt_rt(qemu):
    qemu.select(kernel="rt-armmp")
    qemu.transition("shell")
    sh = shell_of(qemu)
    assert sh.run_check("uname -r") == [uimage.read(IMAGES / "rt-armmp.uImage").release]
    assert "PREEMPT_RT" in sh.run_check("uname -v")[0]
    assert sh.run_check("cat /sys/kernel/realtime") == ["1"]


# ---- failures: each clear, each leaves the board off, none loses the console log -----
# On the PowerPC board (its own lab host, its tests' session beside the default board's,
# scripts/test.sh): the strategy is one for every board, and these faults are the kernel's
# and the wiring's, not qemu-arm's; the default board's session is the run's critical path.

PPC = load_board("qemu-ppc")
PPC_IMAGES = Path(PPC.images.dir)
PPC_KERNEL = PPC.images.kernels[PPC.images.default_kernel].uimage


def power_state():
    return urllib.request.urlopen(PPC.power.url, timeout=5).read().decode()


def assert_failed_cleanly(err, strategy, *must_contain):
    """The error says what went wrong, the board is off, the console log is kept."""
    msg = str(err.value)
    for text in must_contain:
        assert text in msg, f"{text!r} not in the error:\n{msg}"
    assert power_state() == "0", "a failed boot must leave the board powered off"
    assert err.value.log_path and os.path.exists(err.value.log_path), "console log lost"
    assert strategy.status.name == "off"
    return Path(err.value.log_path).read_text()


def test_uimage_missing_on_the_tftp_server(ppc):
    ppc.select(kernel=f"tftp:{PPC.tftp.prefix}no-such-kernel.uImage")
    with pytest.raises(BootError) as err:
        ppc.transition("shell")
    log = assert_failed_cleanly(err, ppc, f"{PPC.tftp.prefix}no-such-kernel.uImage is not on the TFTP "
                                          f"server {PPC.network.server_ip}")
    assert "tftpboot" in log


def test_uimage_with_a_bad_data_crc(ppc, tmp_path):
    bad = tmp_path / "bad-crc.uImage"
    data = bytearray((PPC_IMAGES / PPC_KERNEL).read_bytes())
    data[uimage.HEADER.size + 4096] ^= 0xFF     # one bit pattern in the payload
    bad.write_bytes(bytes(data))
    ppc.select(kernel=str(bad))
    with pytest.raises(BootError) as err:
        ppc.transition("shell")
    log = assert_failed_cleanly(err, ppc, "bad-crc.uImage: bad data CRC")
    assert "Bad Data CRC" in log


def test_a_kernel_that_panics(ppc, tmp_path):
    """A ramdisk with no init at all: the kernel panics; the panic text is the error."""
    empty = tmp_path / "empty"
    (empty / "etc").mkdir(parents=True)
    cpio = tmp_path / "no-init.cpio"
    cpio.write_bytes(images.cpio_newc(images.tree_entries(empty)))
    ramdisk = tmp_path / "no-init.uImage"
    images.mkimage("ramdisk", cpio, ramdisk, PPC, "no init")
    ppc.select(ramdisk=str(ramdisk))
    with pytest.raises(BootError) as err:
        ppc.transition("shell")
    log = assert_failed_cleanly(err, ppc, "kernel panic:", "Kernel panic - not syncing",
                                "last milestone reached: Freeing unused kernel memory at")
    assert "Kernel panic" in log and "Linux version" in log


def test_a_kernel_that_prints_nothing_after_starting_kernel(ppc, tmp_path):
    """A valid uImage whose every instruction branches to itself (PowerPC's `b .`): U-Boot
    jumps into it, and nothing comes back: the boot's timeout (4 s, before the hang watch's
    5 s of silence: a scripted console's test calls that one, test_scripted_boards) names
    the milestone it waited for and the last one reached."""
    payload = tmp_path / "spin"
    payload.write_bytes(bytes.fromhex("48000000") * 16384)
    silent = tmp_path / "silent.uImage"
    images.mkimage("kernel", payload, silent, PPC, "Linux-silent")
    ppc.select(kernel=str(silent))
    ppc.boot_timeout = 4.0
    with pytest.raises(BootError) as err:
        ppc.transition("shell")
    log = assert_failed_cleanly(err, ppc, "timeout: no 'Linux version' within 4 s",
                                "last milestone reached: Starting kernel at")
    assert PPC.uboot.kernel_message in log


def test_no_uboot_prompt_names_power_and_serial_wiring(ppc, tmp_path):
    """The board is powered, but its console is wired to a line nothing is attached
    to: a second ser2net port on a cable without a board."""
    port = 5199
    env = None
    with serial_line(tmp_path, "dead", port, 115200):
        data = envgen.labgrid_env(PPC)
        data["targets"]["main"]["resources"]["NetworkSerialPort"].update(host="127.0.0.1", port=port)
        data["targets"]["main"]["drivers"]["BoardStrategy"] = {
            "facts": str(ROOT / "boards" / f"{PPC.name}.yaml"), "uboot_timeout": 4.0,
            "log_dir": str(tmp_path)}
        envfile = tmp_path / "miswired.yaml"
        envfile.write_text(yaml.safe_dump(data, sort_keys=False))  # drivers in binding order
        from labgrid import Environment
        try:
            env = Environment(str(envfile))
            miswired = env.get_target("main").get_driver("Strategy")
            with pytest.raises(BootError) as err:
                miswired.transition("shell")
            assert_failed_cleanly(err, miswired, "no U-Boot prompt: nothing at all came from the "
                                                 "console within 4 s of power-on",
                                  f"the power switch (rest {PPC.power.url})",
                                  "the serial wiring (ser2net 127.0.0.1 port 5199")
        finally:
            if env is not None:
                env.cleanup()


def test_after_the_failures_the_board_boots_again(ppc):
    ppc.transition("shell")
    assert shell_of(ppc).run_check("echo alive") == ["alive"]
    ppc.transition("off")
    assert power_state() == "0"


@pytest.mark.slow   # a variant: test_suites_e2e runs `pytest --lg-env lab/qemu-arm.yaml testsuites/` whole
def test_pytest_with_the_labgrid_env_runs_the_testsuites(vlab, tmp_path):
    """The way people run it: pytest --lg-env lab/qemu-arm.yaml testsuites/, two tests on one boot."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", "lab/qemu-arm.yaml",
                        "testsuites/test_shell.py", "-q", "-p", "no:cacheprovider",
                        "--run-dir", str(tmp_path / "run")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "2 passed" in r.stdout
    logs = list((tmp_path / "run" / "console").glob("boot-qemu-arm-armmp-*.log"))
    assert len(logs) == 1, "the two tests share one boot"
