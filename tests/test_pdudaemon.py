"""Power through pdudaemon on real lab hosts: labgrid and LAVA queue on one daemon.

The generated files say so (unit tests); a real pdudaemon (Debian's) in front of the
virtual lab's power switch shows that both labgrid's PDUDaemonDriver and the LAVA
device's power commands switch a board through it."""
import dataclasses
import json
import subprocess
import time
import urllib.request

import pytest
import yaml

from boardlab.facts import pdu
from boardlab.facts.board import load_board
from boardlab.facts.labhosts import PduDaemon, load_lab_host
from boardlab.net import free_port, tcp_open
from paths import ROOT

PDUDAEMON = "/usr/sbin/pdudaemon"


def test_a_real_lab_hosts_pdus_are_all_in_its_pdudaemon_config():
    lab = load_lab_host("labhost1")
    conf = json.loads((ROOT / "places/labhost1/pdudaemon.conf").read_text())
    assert conf["daemon"] == {"hostname": "127.0.0.1", "port": lab.pdudaemon.port,
                              "logging_level": "INFO", "listener": "http"}
    for name in lab.boards:
        entry = conf["pdus"][pdu.pdu_name(load_board(name))]
        assert entry["driver"] == "localcmdline" and "%s" in entry["cmd_on"]


def test_labgrid_and_lava_ask_the_same_pdudaemon():
    env = yaml.safe_load((ROOT / "lab/tqm860l.yaml").read_text())["targets"]["main"]
    assert env["resources"]["PDUDaemonPort"] == {"host": "127.0.0.1:16421", "pdu": "pdu1.lab",
                                                 "index": 1}
    assert "PDUDaemonDriver" in env["drivers"] and "NetworkPowerPort" not in env["resources"]
    device = (ROOT / "jobs/devices/tqm860l.jinja2").read_text()
    assert "http://127.0.0.1:16421/power/control/on?hostname=pdu1.lab&port=1" in device


def test_the_virtual_lab_keeps_its_own_switch():
    """It reports state and clock, which pdudaemon cannot."""
    env = yaml.safe_load((ROOT / "lab/qemu-arm.yaml").read_text())["targets"]["main"]
    assert env["resources"]["NetworkPowerPort"]["model"] == "rest"
    assert "curl -fsS -X PUT -d 1 http://10.231.0.11:8101/outlet/1/value" in \
        (ROOT / "jobs/devices/qemu-arm.jinja2").read_text()


def _outlet(board) -> str:
    return urllib.request.urlopen(board.power.url, timeout=5).read().decode()


@pytest.mark.vlab
def test_pdudaemon_in_front_of_the_virtual_switch_drives_the_board(vlab, tmp_path):
    if not __import__("os").path.exists(PDUDAEMON):
        pytest.fail(f"{PDUDAEMON} missing: bash scripts/setup-host.sh installs pdudaemon")
    board = load_board("qemu-arm")
    port = free_port()
    lab = dataclasses.replace(vlab.lab, pdudaemon=PduDaemon(port=port, listen="127.0.0.1",
                                                              host="127.0.0.1"))
    conf = tmp_path / "pdudaemon.conf"
    conf.write_text(pdu.pdudaemon_config(lab, [board]))
    log = open(tmp_path / "pdudaemon.log", "w")
    daemon = subprocess.Popen([PDUDAEMON, "--conf", str(conf), "--loglevel", "DEBUG"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while not tcp_open(port, "127.0.0.1"):
            assert daemon.poll() is None and time.monotonic() < deadline, \
                (tmp_path / "pdudaemon.log").read_text()
            time.sleep(0.2)
        # labgrid: the resource and driver `boardlab gen` writes for such a lab host
        from labgrid import Target
        from labgrid.driver import PDUDaemonDriver
        from labgrid.resource import PDUDaemonPort
        resources, _ = pdu.labgrid_power(board, lab)
        target = Target("pdu-test")
        PDUDaemonPort(target, "port", **resources["PDUDaemonPort"])
        driver = PDUDaemonDriver(target, "power")
        target.activate(driver)
        driver.on()
        assert _outlet(board) == "1"
        driver.off()
        assert _outlet(board) == "0"
        # LAVA: the device dictionary's power commands for such a lab host
        commands = pdu.lava_power_commands(board, lab)
        subprocess.run(commands["power_on_command"], shell=True, check=True, timeout=30)
        assert _outlet(board) == "1"
        subprocess.run(commands["power_off_command"], shell=True, check=True, timeout=30)
        assert _outlet(board) == "0"
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        log.close()
        urllib.request.urlopen(urllib.request.Request(board.power.url, data=b"0", method="PUT"),
                               timeout=10).read()
