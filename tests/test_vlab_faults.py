"""Faults of the lab around a board, on a virtual board: Ctrl-C mid-boot, ser2net
restarted or gone, the power switch gone, two runs on one board, bad input found
before a boot. Each ends fast, names its cause, and leaves the board off. On the PowerPC
board, on its own lab host: nothing here is about the board itself, and the default
board's tests run beside these meanwhile (scripts/test.sh)."""
import contextlib
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from boardlab.sharing.boardlock import BoardBusy
from boardlab.boot.strategy import BootError, Status
from boardlab.facts.board import load_board
from boardlab.facts.labhosts import load_lab_host
from boardlab.measure.console import KERNEL_MILESTONES
from paths import ROOT

BOARD = load_board("qemu-ppc")
LAB_HOST = load_lab_host(BOARD.lab_host).control_address
pytestmark = pytest.mark.vlab


def power_state():
    return urllib.request.urlopen(BOARD.power.url, timeout=5).read().decode()


@contextlib.contextmanager
def ctrl_c_at(strategy, pattern: str):
    """Ctrl-C (SIGINT to the main thread) as the boot's console shows a line matching
    `pattern` after power-on, from inside the console driver's read: the strategy is then
    waiting on the board, mid-boot, however fast or slow the host runs it. Yields what
    happened: {"line": the line} once it has."""
    stamps, main, fired = strategy.console.timestamper, threading.main_thread().ident, {}
    feed = stamps.feed

    def feed_and_interrupt(data, t):
        feed(data, t)
        if fired:
            return
        lines = stamps.snapshot()   # this boot's: the strategy clears them before power-on
        if any(ln.kind == "mark" and ln.text == "power on" for ln in lines):
            hit = next((ln.text for ln in lines if ln.kind == "rx" and re.search(pattern, ln.text)), None)
            if hit is not None:
                fired["line"] = hit
                signal.pthread_kill(main, signal.SIGINT)

    # Python keeps SIGINT ignored when it starts so (a CI job started in the background
    # by a shell without job control): Ctrl-C's handler, as a terminal gives it
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    stamps.feed = feed_and_interrupt
    try:
        yield fired
    finally:
        del stamps.feed
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_mid_boot_leaves_the_board_off_and_free(ppc):
    ppc.transition("off")      # a boot to interrupt, not a board left at its shell
    # the kernel has started (U-Boot, the loads and `bootm` behind it), the login is to come
    with ctrl_c_at(ppc, dict(KERNEL_MILESTONES)["linux_version"]) as fired:
        with pytest.raises(KeyboardInterrupt):
            ppc.transition("shell")
    assert "line" in fired, "the boot was not interrupted at 'Linux version'"
    assert power_state() == "0", "Ctrl-C left the board powered"
    assert ppc.status == Status.off and not ppc.lock.held
    assert "interrupted" in open(ppc.last_boot.log_path).readline()


def test_a_restarted_ser2net_is_reconnected_on_the_next_boot(ppc, ppc_host):
    ppc.transition("shell")
    ppc.transition("off")
    ppc_host.stop_service("ser2net")
    ppc_host.start_service("ser2net")
    rec = ppc.reboot()
    assert rec.milestones["login"] > 0


def test_ser2net_gone_is_named_with_its_address(ppc, ppc_host):
    ppc.transition("off")
    ppc_host.stop_service("ser2net")
    try:
        t0 = time.monotonic()
        with pytest.raises(BootError) as err:
            ppc.transition("shell")
        assert time.monotonic() - t0 < 15
        msg = str(err.value)
        assert f"ser2net {LAB_HOST} port {BOARD.console.ser2net_port}" in msg, msg   # the lab host's address
        assert "(the board is powered off)" in msg
        assert power_state() == "0"
    finally:
        ppc_host.start_service("ser2net")


def test_a_power_switch_that_is_gone_is_named_and_the_run_gives_up(ppc, ppc_host):
    ppc.transition("off")
    ppc_host.stop_service("power-switch")
    try:
        t0 = time.monotonic()
        with pytest.raises(BootError) as err:
            ppc.transition("shell")
        assert time.monotonic() - t0 < 15
        msg = str(err.value)
        assert "power" in msg and f"{LAB_HOST}:8101/outlet/{BOARD.power.index}" in msg, msg
        assert "POWER-OFF FAILED, the board may still be on" in msg   # no false claim of 'off'
        assert ppc.status == Status.unknown
    finally:
        ppc_host.start_service("power-switch")
    ppc.transition("off")
    assert ppc.status == Status.off


def test_a_second_run_on_a_busy_board_is_refused_naming_the_first(ppc):
    from labgrid import Environment
    ppc.transition("shell")
    env = Environment(str(ROOT / "lab" / f"{BOARD.name}.yaml"))
    try:
        other = env.get_target("main").get_driver("Strategy")
        with pytest.raises(BoardBusy, match=rf"board {BOARD.name} is in use by pid \d+"):
            other.transition("off")
    finally:
        env.cleanup()
    # the first run's board was not touched
    assert power_state() == "1"
    assert ppc.target.get_driver("ShellDriver").run_check("echo still") == ["still"]
    ppc.transition("off")


def test_bad_input_is_an_error_before_the_board_is_booted(ppc_board, tmp_path):
    """A malformed baseline of the kernel under test, an unwritable run directory, a
    kernel or ramdisk name U-Boot cannot take: pytest stops before any boot, naming the
    file or name; the board stays off."""
    bad = tmp_path / "kernels" / BOARD.images.default_kernel
    bad.mkdir(parents=True)
    (bad / f"{BOARD.name}.yaml").write_text(f"board: {BOARD.name}\nmetrics:\n  boot_time.login: {{value: fast}}\n")
    (tmp_path / "a-file").write_text("")
    for extra, says in (
            (["--baselines-dir", str(tmp_path / "kernels")],
             f"{bad / (BOARD.name + '.yaml')}: metrics.boot_time.login.value must be a number"),
            (["--run-dir", str(tmp_path / "a-file" / "run")], "a-file/run: not writable"),
            (["--kernel", f"tftp:{BOARD.name}/a;reset"], "may not hold whitespace, ';'"),
            (["--ramdisk", "tftp:../rootfs.uImage"], "'..' or an absolute path")):
        run = tmp_path / "run"
        r = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", f"lab/{BOARD.name}.yaml",
                            "testsuites/test_boot_time.py", "-q", "-p", "no:cacheprovider",
                            "--run-dir", str(run), *extra],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        assert r.returncode == 4 and says in out, out[-2000:]
        assert not list(run.glob("console/*.log")), "a board was booted"
    assert power_state() == "0"


def flood(n: int) -> None:
    """n broadcasts on the PowerPC board's lab LAN, from its lab host: as the ARP requests
    and IPv6 multicasts of other boards' boots reach a board sitting at its U-Boot prompt."""
    import ipaddress
    lab = load_lab_host(BOARD.lab_host)
    to = str(ipaddress.ip_interface(lab.address).network.broadcast_address)
    code = ("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1); "
            f"s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, {lab.bridge!r}.encode()); "
            f"[s.sendto(b'x' * 64, ({to!r}, 9)) for _ in range({n})]")
    subprocess.run(["ip", "netns", "exec", lab.netns, sys.executable, "-c", code], check=True, timeout=30)


def tftp_after_a_flood(ppc):
    """The board at its prompt, 40 frames flooded to it, then its kernel's load -> (rc, output)."""
    from boardlab.boot.bootplan import plan_boot
    ppc.transition("off")
    ppc.transition("uboot")
    uboot = ppc.target.get_driver("UBootDriver")
    plan = plan_boot(BOARD, BOARD.images.default_kernel, "nfs")
    for command in plan.setup_commands:
        uboot.run_check(command)
    flood(40)
    time.sleep(1)
    out, _, rc = uboot.run(plan.loads[0].command, timeout=90)
    return rc, out


def test_broadcasts_at_the_uboot_prompt_leave_the_boards_network_working(ppc, ppc_host):
    """Debian's U-Boot gives its virtio-net receive buffers back without telling QEMU:
    about 30 frames flooded to a board at its prompt took its network for good, and the
    next tftp failed ("ARP Retry count exceeded"; beside LAVA's checks, 3 boots of 40).
    The lab host's bridge passes a board only the floods meant for it
    (lanfirewall.board_flood_conf): the load works. Without that rule, the fault is back."""
    from boardlab.facts.lanfirewall import FLOOD_TABLE
    from boardlab.services.daemons import sh
    rc, out = tftp_after_a_flood(ppc)
    assert rc == 0 and any("Bytes transferred" in line for line in out), out[-3:]
    sh("nft", "delete", "table", "bridge", FLOOD_TABLE, netns=ppc_host.ns)
    try:
        rc, out = tftp_after_a_flood(ppc)
        assert rc != 0 and any("ARP Retry count exceeded" in line for line in out), out[-3:]
    finally:
        sh("nft", "-f", str(ppc_host.run_dir / "nftables.conf"), netns=ppc_host.ns)
        ppc.transition("off")
