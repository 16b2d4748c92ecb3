"""Fixtures of the project's own tests: the virtual lab, brought up once per session
(and down again, unless it was up before), and the virtual board's labgrid target."""
import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def vlab():
    from boardlab.vlab.host import VirtualLab
    lab = VirtualLab("vlab")
    was_up = lab.is_up()
    if not was_up:
        lab.up()
    try:
        yield lab
    finally:
        if not was_up and not os.environ.get("BOARDLAB_KEEP_LAB"):
            lab.down()


@pytest.fixture(scope="session")
def qemu_env(vlab, tmp_path_factory):
    from labgrid import Environment
    env = Environment(str(ROOT / "lab" / "qemu-arm.yaml"))
    yield env
    env.cleanup()


@pytest.fixture(scope="session")
def qemu_target(qemu_env):
    return qemu_env.get_target("main")


@pytest.fixture
def qemu(qemu_target, tmp_path):
    """The virtual board's strategy, defaults selected, console logs in tmp_path.
    Left powered off if the test failed, so the next test starts clean."""
    strategy = qemu_target.get_driver("Strategy")
    strategy.select(kernel="", root="", ramdisk="")
    strategy.uboot_timeout = strategy.boot_timeout = 0.0
    strategy.log_dir = str(tmp_path)
    yield strategy
    strategy.uboot_timeout = strategy.boot_timeout = 0.0


def wait_for(pred, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"timeout after {timeout:.0f} s: {what}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tcp_open(port, host="127.0.0.1"):
    try:
        socket.create_connection((host, port), timeout=0.2).close()
        return True
    except OSError:
        return False


@contextlib.contextmanager
def serial_line(tmp_path, name, port, baud):
    """A serial line of the test's own: a cable pty (a board plugs into
    tmp_path/uart.sock) behind ser2net on 127.0.0.1:port. Both stopped by PID after."""
    from boardlab import labhost
    link = tmp_path / f"{name}.tty"
    procs = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "boardlab.vlab.cable", "--socket",
                                       str(tmp_path / "uart.sock"), "--link", str(link)],
                                      stdout=subprocess.DEVNULL))
        wait_for(link.exists, what=f"cable pty {link}")
        cfg = tmp_path / "ser2net.yaml"
        cfg.write_text(labhost.ser2net_yaml([(name, port, str(link), baud, "127.0.0.1")]))
        procs.append(subprocess.Popen(["ser2net", "-n", "-u", "-c", str(cfg), "-P",
                                       str(tmp_path / "ser2net.pid")], stderr=subprocess.DEVNULL))
        wait_for(lambda: tcp_open(port), what=f"ser2net on port {port}")
        yield tmp_path / "uart.sock"
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=10)
