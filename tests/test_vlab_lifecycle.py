"""vlab up / down / status: up twice is harmless, down leaves nothing behind."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from boardlab.procs import running
from paths import ROOT

pytestmark = pytest.mark.vlab


def test_up_twice_starts_nothing_new(vlab):
    vlab.up()
    before = vlab.status()["services"]
    r = subprocess.run([sys.executable, "-m", "boardlab.cli", "vlab", "up"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert vlab.status()["services"] == before, r.stderr
    assert "started" not in r.stderr, r.stderr


def test_status_shows_services_and_power(vlab):
    # the default board's lab host only: the session beside this one stops the PowerPC
    # board's lab host's services on purpose (its fault tests), and a whole-lab status
    # then rightly exits 3 for that board's unknown power
    r = subprocess.run([sys.executable, "-m", "boardlab.cli", "vlab", "status", "--lab", "vlab"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for name in ("ser2net", "tftpd", "rpcbind", "nfsd", "power-switch"):
        assert re.search(rf"^  {name} +running, pid \d+$", r.stdout, re.M), r.stdout
    assert "board qemu-arm" in r.stdout and "power off" in r.stdout


def test_down_stops_exactly_what_up_started(vlab, qemu_target):
    qemu_target.deactivate_all_drivers()     # our console session goes with ser2net
    strategy = qemu_target.get_driver("Strategy", activate=False)
    qemu_target.activate(strategy.power)
    strategy.power.on()                      # a running board must be stopped too
    st = vlab.status()
    pids = [p for p in st["services"].values()] + [st["boards"]["qemu-arm"]["qemu_pid"]]
    assert all(pids), st
    vlab.down()
    assert not any(running(p) for p in pids), "a lab process survived down"
    assert not Path(f"/run/netns/{vlab.ns}").exists()
    r = subprocess.run([sys.executable, "-m", "boardlab.cli", "vlab", "status"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and "stopped" in r.stdout
    vlab.up()                                # as the session found it
    assert vlab.is_up()
