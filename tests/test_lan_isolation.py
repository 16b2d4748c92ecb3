"""What a board may reach of its lab host, as generated from the facts: the lab's
controls listen on the management address (or 127.0.0.1), never on the LAN, and the
LAN's rule set lets a board reach its boot services only."""
import ipaddress
import re
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
    lab = load_lab_host("labhost1")
    d = lab.path.rsplit("/", 1)[0]
    assert "0.0.0.0" not in open(f"{d}/ser2net.yaml").read()
    assert open(f"{d}/nftables.conf").read() == lanfirewall.nftables_conf(lab)
    assert open(f"{d}/{lanfirewall.UNIT}").read() == lanfirewall.systemd_unit(lab)
    assert open(f"{d}/sshd_config.d/boardlab.conf").read() == lanfirewall.sshd_dropin(lab)


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
    assert f"MNT_Port = {lanfirewall.MOUNTD_PORT}" in hostconfigs.ganesha_conf([], "0.0.0.0")


def test_nft_accepts_the_generated_rule_set(tmp_path):
    for lab in lab_hosts():
        f = tmp_path / f"{lab.name}.nft"
        f.write_text(lanfirewall.nftables_conf(lab))
        r = subprocess.run(["nft", "-c", "-f", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"{lab.name}: {r.stderr}"


@pytest.mark.parametrize("name", ["vlab", "vlab2"])
def test_a_virtual_bridge_floods_a_board_only_what_is_for_it_and_nft_takes_it(name, tmp_path):
    """Each board's tap: an ARP request for its own address and DHCP's replies pass, every
    other broadcast or multicast is dropped, whether another board or the host sent it."""
    boards = [load_board(b) for b in load_lab_host(name).boards]
    rules = lanfirewall.board_flood_conf(boards)
    for hook in ("forward", "output"):
        chain = rules.split(f"chain {hook} {{")[1].split("}")[0]
        for b in boards:
            mine = [ln.strip() for ln in chain.splitlines() if f'oifname "{b.qemu.tap}"' in ln]
            assert [ln.rsplit(" ", 1)[-1] if "comment" not in ln else "drop" for ln in mine] == \
                ["accept", "accept", "drop"]
            assert f"arp daddr ip {b.network.ip} accept" in mine[0] and "udp dport 68" in mine[1]
    f = tmp_path / f"{name}.nft"
    f.write_text(lanfirewall.nftables_conf(load_lab_host(name)) + rules)
    r = subprocess.run(["nft", "-c", "-f", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _exports(text):
    """{directory: (clients, options of each)} of /etc/exports lines."""
    out = {}
    for ln in text.splitlines():
        if ln and not ln.startswith("#"):
            path, *clients = ln.split()
            out[path] = ([c.split("(")[0] for c in clients], {c.split("(")[1].rstrip(")") for c in clients})
    return out


def test_each_nfs_root_goes_to_its_own_board_alone_and_is_checked_to_its_subtree():
    """A real lab host's exports: a board's root to that board's address (never the LAN;
    LAVA's job roots are not listed: each goes to its own board while its job runs), each request checked to lie
    inside the export (subtree_check) unless the export is a file system of its own,
    and the reason for each line's options written above it."""
    lab = load_lab_host("labhost1")
    boards = [load_board(b) for b in lab.boards]
    text = open(lab.path.rsplit("/", 1)[0] + "/exports").read()
    exports = _exports(text)
    for b in boards:
        clients, opts = exports[b.nfs.export]
        assert clients == [b.network.ip]
        assert opts == {"rw,no_root_squash,subtree_check,sync"}
    assert not any(p.startswith(hostconfigs.LAVA_NFS_DIR) for p in exports)
    assert not any("/" in c or "*" in c for c, _ in exports.values() for c in c)
    comments = [ln for ln in text.splitlines() if ln.startswith("# ")]
    assert len(comments) == len(exports) + 3 and all("squash" in c for c in comments[3:])


def test_a_board_fact_squashes_root_and_a_file_system_of_its_own_needs_no_subtree_check():
    from dataclasses import replace
    lab = load_lab_host("labhost1")
    b = load_board("tqm860l")
    b = replace(b, nfs=replace(b.nfs, root_squash=True, own_filesystem=True))
    text = hostconfigs.nfs_exports(hostconfigs.nfs_export_clients(replace(lab, lava_worker=False), [b]))
    assert _exports(text) == {b.nfs.export: ([b.network.ip], {"rw,root_squash,no_subtree_check,sync"})}
    assert "root_squash: the board never writes its root as root" in text


def test_a_lab_host_without_boards_exports_nothing():
    """An exports line without clients exports to the world: none is written."""
    assert _exports(hostconfigs.nfs_exports(hostconfigs.nfs_export_clients(load_lab_host("labhost1"), []))) == {}


@pytest.mark.parametrize("name", ["vlab", "vlab2"])
def test_a_virtual_lab_hosts_nfs_server_exports_each_root_to_its_boards_addresses(name):
    """The virtual lab host's ganesha.conf (rendered at `vlab up`): no export to the
    LAN's network, each board's root to that board alone."""
    lab = load_lab_host(name)
    boards = [load_board(b) for b in lab.boards]
    conf = hostconfigs.ganesha_conf(hostconfigs.nfs_export_clients(lab, boards), lab.server_ip)
    clients = {}
    for block in conf.split("EXPORT {")[1:]:
        path = block.split("Path = ")[1].split(";")[0]
        clients[path] = block.split("Clients = ")[1].split(";")[0].split(", ")
    for b in boards:
        assert clients[b.nfs.export] == [b.network.ip]
    assert hostconfigs.LAVA_NFS_DIR not in conf   # job roots come and go with their jobs
    assert hostconfigs.lan_network(lab) not in conf and "*" not in conf


def test_a_running_lava_jobs_root_goes_to_its_own_board_alone_with_a_fixed_export_id():
    """boardlab.lab.jobroots: while a job has its board powered, its root (named by the
    job's id) is exported to that board's address only; ganesha's export id is the
    board's own, so a root that changes is an update, one that ends a removal."""
    lab = load_lab_host("vlab")
    boards = [load_board(b) for b in lab.boards]
    roots = {boards[1].name: f"{hostconfigs.LAVA_NFS_DIR}/41"}
    [job] = hostconfigs.lava_job_exports(boards, roots)
    assert job.path == f"{hostconfigs.LAVA_NFS_DIR}/41" and job.clients == (boards[1].network.ip,)
    assert job.export_id == hostconfigs.JOB_EXPORT_ID + 1 and not job.root_squash and job.subtree_check
    conf = hostconfigs.ganesha_conf(hostconfigs.nfs_export_clients(lab, boards) + [job], lab.server_ip)
    block = conf.split(f"Path = {job.path};")[0].rsplit("EXPORT {", 1)[1]
    assert f"Export_Id = {job.export_id};" in block
    assert f"Clients = {boards[1].network.ip};" in conf.split(f"Path = {job.path};")[1].split("}")[0]


@pytest.mark.parametrize("name", ["vlab", "labhost1"])
def test_the_rule_set_matches_the_lans_interface_and_drops_its_ipv6(name):
    """inet: one table for both families. What comes in on the LAN's interface is
    matched, whatever its source address; besides replies, only IPv4 to the host's LAN
    address (and DHCP's IPv4 broadcast) is accepted, so every IPv6 packet from a board
    meets the drop."""
    lab = load_lab_host(name)
    rules = lanfirewall.nftables_conf(lab)
    assert f"table inet {lanfirewall.TABLE} {{" in rules
    assert lanfirewall.lan_match(lab) == f'iifname "{lab.lan_ifname}"' and lab.lan_ifname
    assert "saddr" not in rules
    rule_lines = [ln.strip() for ln in rules.split("chain input")[1].split("chain forward")[0].splitlines()
                  if ln.strip().startswith("iifname")]
    for ln in rule_lines:
        if ln.endswith("accept") and "ct state" not in ln:
            assert f"ip daddr {lab.server_ip} " in ln or "meta nfproto ipv4 " in ln, ln
    assert rule_lines[-1].startswith(f'iifname "{lab.lan_ifname}" counter drop')
    assert "nfproto" not in rule_lines[-1] and "ip " not in rule_lines[-1]


def test_the_real_lab_hosts_rule_set_is_loaded_at_boot_and_again_after_nftables():
    """Debian's nftables.service loads /etc/nftables.conf, which flushes every table: the
    unit loads boardlab's after it, before the network and the boot services, and again
    whenever nftables.service restarts or reloads."""
    lab = load_lab_host("labhost1")
    unit = lanfirewall.systemd_unit(lab)
    keys = {}
    for ln in unit.splitlines():
        if "=" in ln and not ln.startswith("#"):
            k, v = ln.split("=", 1)
            keys.setdefault(k, []).append(v)
    assert keys["ExecStart"] == [f"/usr/sbin/nft -f {lanfirewall.INSTALLED}"]
    assert keys["After"] == ["nftables.service"] and keys["PartOf"] == ["nftables.service"]
    assert keys["ReloadPropagatedFrom"] == ["nftables.service"]
    before = keys["Before"][0].split()
    assert {"network-pre.target", "rpcbind.socket", "nfs-server.service", "tftpd-hpa.service",
            "ssh.service"} <= set(before)
    assert keys["WantedBy"] == ["sysinit.target"] and keys["DefaultDependencies"] == ["no"]
    assert lanfirewall.INSTALLED in lanfirewall.nftables_conf(lab)


def test_the_real_lab_hosts_sshd_listens_on_its_management_address_only():
    lab = load_lab_host("labhost1")
    dropin = lanfirewall.sshd_dropin(lab)
    listen = [ln.split()[1] for ln in dropin.splitlines() if ln.startswith("ListenAddress")]
    assert listen == [lab.ssh_address]
    assert ipaddress.ip_address(lab.ssh_address) not in ipaddress.ip_interface(lab.address).network


@pytest.mark.parametrize("change, message", [
    (("lan_interface", None), "missing field 'lan_interface' (a real lab host has lan_interface, ssh_address)"),
    (("ssh_address", None), "missing field 'ssh_address'"),
    (("lan_interface", "eth1; reboot"), "field 'lan_interface' must be an interface name"),
    (("ssh_address", "192.168.20.2"), "field 'ssh_address' is 192.168.20.2, on the lab LAN"),
    (("ssh_address", "10.231.0.0/24"), "field 'ssh_address' must be one IPv4 address"),
])
def test_a_real_lab_host_names_its_lan_interface_and_sshs_address(tmp_path, change, message):
    import yaml
    from boardlab.facts.board import FactsError
    data = yaml.safe_load(open(load_lab_host("labhost1").path).read())
    key, value = change
    if value is None:
        del data[key]
    else:
        data[key] = value
    path = tmp_path / "lab-host.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(FactsError, match=re.escape(message)):
        load_lab_host(path)
