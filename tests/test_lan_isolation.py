"""What a board may reach of its lab host, as generated from the facts: the lab's
controls listen on the management address (or 127.0.0.1), never on the LAN, and the
LAN's rule set lets a board reach its boot services only."""
import subprocess

import pytest

from boardlab.facts import hostconfigs, lanfirewall
from boardlab.facts.board import load_board
from boardlab.facts.labhosts import lab_hosts, load_lab_host

CONTROL_PORTS = (22, 8101, 5101, 5102, 16421, 20418)   # sshd, power, consoles, pdudaemon, coordinator


@pytest.mark.parametrize("lab", lab_hosts(), ids=lambda lab: lab.name)
def test_the_lab_controls_listen_off_the_lan(lab):
    assert lab.control_address in ("127.0.0.1", lab.management_ip)
    assert not lab.control_address.startswith(lab.server_ip.rsplit(".", 1)[0])
    if lab.power_switch is not None:
        assert (lab.power_switch.listen or lab.control_address) == lab.control_address
    boards = [load_board(b) for b in lab.boards]
    text = hostconfigs.ser2net_yaml((b.name, b.console.ser2net_port, "/dev/null", b.console.baud,
                                 lab.control_address) for b in boards)
    assert "0.0.0.0" not in text and lab.server_ip not in text


def test_a_real_lab_hosts_generated_consoles_and_rules():
    d = load_lab_host("labhost1").path.rsplit("/", 1)[0]
    assert "0.0.0.0" not in open(f"{d}/ser2net.yaml").read()
    assert open(f"{d}/nftables.conf").read() == lanfirewall.nftables_conf(load_lab_host("labhost1"))


@pytest.mark.parametrize("name", ["vlab", "labhost1"])
def test_the_lan_rule_set_opens_the_boot_services_and_drops_the_rest(name):
    lab = load_lab_host(name)
    rules = lanfirewall.nftables_conf(lab)
    lan = lanfirewall.lan_match(lab)
    accepted = " ".join(ln for ln in rules.splitlines() if ln.strip().startswith(lan) and "accept" in ln)
    for port in (69, 111, 2049, lanfirewall.MOUNTD_PORT):
        assert str(port) in accepted
    for port in CONTROL_PORTS:
        assert f" {port}," not in accepted and f" {port} " not in accepted
    lines = [ln.strip() for ln in rules.splitlines()]
    assert lines.index(next(ln for ln in lines if "drop" in ln and "input" not in ln)) > max(
        i for i, ln in enumerate(lines) if "accept" in ln and "forward" not in ln)
    assert f"{lan} counter drop" in rules.split("chain forward")[1]   # nothing beyond the host
    assert f"MNT_Port = {lanfirewall.MOUNTD_PORT}" in hostconfigs.ganesha_conf([], "0.0.0.0", "*")


def test_nft_accepts_the_generated_rule_set(tmp_path):
    for lab in lab_hosts():
        f = tmp_path / f"{lab.name}.nft"
        f.write_text(lanfirewall.nftables_conf(lab))
        r = subprocess.run(["nft", "-c", "-f", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"{lab.name}: {r.stderr}"
