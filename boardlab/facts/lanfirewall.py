"""What a board may reach of its lab host: the nftables rule set of a lab host's LAN,
rendered from its facts. A board under test is untrusted (its kernel is the thing being
tested): it gets what its boot needs - TFTP, the NFS server and its portmapper and mount
daemon, replies to what the host sent it - and nothing else of the lab host: not the power
switch, not ser2net (a connection there takes the lab's own console away), not sshd, the
exporter or pdudaemon, on any of the host's addresses (Linux accepts a packet for any
local address on any interface, so listening on the management address alone is not
enough), and nothing beyond the host (no forwarding from the LAN).

The rule set lives in a table of its own, in the inet family (IPv4 and IPv6), matching
what comes in on the LAN's interface; loading it again replaces it. On a virtual lab
host `boardlab vlab up` loads it in the host's namespace; a real lab host's copy is in
places/<host>/nftables.conf (`boardlab gen`), with the systemd unit that loads it at
boot and the sshd drop-in that keeps sshd off the LAN."""
from __future__ import annotations

from boardlab.facts.hostconfigs import MOUNTD_PORT, lan_network
from boardlab.facts.labhosts import LabHost

TABLE = "boardlab_lan"
FLOOD_TABLE = "boardlab_lan_flood"   # a virtual lab host's bridge: what of its floods reaches a board
# a board's boot: TFTP (69), the portmapper (111), NFS (2049), mountd; DHCP/BOOTP (67)
# comes broadcast, to no address of the host
BOOT_UDP = (69, 111, 2049, MOUNTD_PORT)
BOOT_TCP = (111, 2049, MOUNTD_PORT)
DHCP = 67
# a real lab host: the rule set's installed copy, and the unit that loads it at boot
INSTALLED = "/etc/boardlab/nftables-lan.conf"
UNIT = "boardlab-lan-firewall.service"


def lan_match(lab: LabHost) -> str:
    """What marks a packet from the lab LAN: the interface it came in on (the virtual
    host's bridge, a real host's lan_interface), whatever its family or source address,
    so an IPv6 packet or a forged source is matched as well."""
    return f'iifname "{lab.lan_ifname}"'


def nftables_conf(lab: LabHost) -> str:
    """The rule set (`nft -f`), in the inet family (IPv4 and IPv6): from the LAN only
    IPv4 to the host's LAN address for TFTP, NFS and ping, DHCP's broadcast, and replies;
    every other packet, IPv6 all of it, is dropped. TFTP's data packets come back to
    tftpd's own ephemeral port, which the host sent from, so they are replies (ct state
    established)."""
    lan, to_host = lan_match(lab), f"ip daddr {lab.server_ip}"
    ports = lambda ps: ", ".join(str(p) for p in ps)   # noqa: E731
    install = ("" if lab.kind == "virtual" else
               f"# Installed as {INSTALLED}, loaded at boot by {UNIT} (docs/guides.md).\n")
    return "\n".join([
        f"# Generated from places/{lab.name}/lab-host.yaml by boardlab: what the boards on",
        f"# lab host {lab.name}'s LAN ({lab.lan_ifname}, {lan_network(lab)}) may reach of it. "
        "Load: nft -f THIS_FILE",
        f"{install}# (a real host with nfs-kernel-server pins mountd: /etc/nfs.conf [mountd] "
        f"port={MOUNTD_PORT})",
        f"table inet {TABLE}",
        f"delete table inet {TABLE}",
        f"table inet {TABLE} {{",
        "    chain input {",
        "        type filter hook input priority filter; policy accept;",
        f"        {lan} ct state established,related accept",
        f"        {lan} meta nfproto ipv4 udp dport {DHCP} accept",
        f"        {lan} {to_host} udp dport {{ {ports(BOOT_UDP)} }} accept",
        f"        {lan} {to_host} tcp dport {{ {ports(BOOT_TCP)} }} accept",
        f"        {lan} {to_host} icmp type echo-request accept",
        f"        {lan} counter drop comment \"a board reaches nothing else of its lab host, IPv4 or IPv6\"",
        "    }",
        "    chain forward {",
        "        type filter hook forward priority filter; policy accept;",
        f"        {lan} counter drop comment \"nor anything beyond it\"",
        "    }",
        "}",
        ""])


def systemd_unit(lab: LabHost) -> str:
    """The unit that loads the rule set at boot, before the network is up and before any
    service a board could reach, and again whenever nftables.service (whose
    /etc/nftables.conf flushes every table) starts or reloads."""
    return "\n".join([
        f"# Generated from places/{lab.name}/lab-host.yaml by boardlab: install as",
        f"# /etc/systemd/system/{UNIT}, the rule set as {INSTALLED}; systemctl enable --now {UNIT}",
        "[Unit]",
        "Description=boardlab: what the boards on the lab LAN may reach of this host (nftables)",
        "DefaultDependencies=no",
        "Wants=network-pre.target",
        "After=nftables.service",
        "Before=network-pre.target sysinit.target shutdown.target rpcbind.socket rpcbind.service "
        "nfs-server.service tftpd-hpa.service ssh.service",
        "PartOf=nftables.service",
        "ReloadPropagatedFrom=nftables.service",
        "Conflicts=shutdown.target",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        f"ExecStart=/usr/sbin/nft -f {INSTALLED}",
        f"ExecReload=/usr/sbin/nft -f {INSTALLED}",
        "# '-': the table is gone already when nftables.service's stop flushed the rule set",
        f"ExecStop=-/usr/sbin/nft delete table inet {TABLE}",
        "",
        "[Install]",
        "WantedBy=sysinit.target",
        ""])


def sshd_dropin(lab: LabHost) -> str:
    """/etc/ssh/sshd_config.d/boardlab.conf: sshd on the lab host's office-LAN address
    alone (Debian's sshd_config includes that directory first; no other ListenAddress)."""
    return (f"# Generated from places/{lab.name}/lab-host.yaml by boardlab: install as\n"
            f"# /etc/ssh/sshd_config.d/boardlab.conf. sshd listens on the management address only,\n"
            f"# never on the lab LAN ({lab.address}); the LAN's rule set drops port 22 as well.\n"
            f"ListenAddress {lab.sshd_address}\n")


def board_flood_conf(boards) -> str:
    """A virtual lab host's bridge only (`nft -f`, with nftables_conf): a frame sent to
    every port (broadcast, multicast) reaches a board's tap only when it is for that board:
    an ARP request for its own address, or a DHCP reply. Why: Debian's U-Boot gives its
    virtio-net receive buffers back without notifying QEMU, and nothing polls the NIC while
    U-Boot sits at its prompt; once about 30 frames have come in there (other boards' ARP
    and IPv6 multicast while LAVA types its commands), QEMU has no buffer left, stops
    reading the tap and is never told of the returned ones: the next `tftp` fails, "ARP
    Retry count exceeded" (tests/test_vlab_faults.py). A real board's NIC drops what its
    ring cannot hold and goes on, so this is the stand-in's fault, kept off its LAN."""
    rules = []
    for b in boards:
        flood = f'oifname "{b.qemu.tap}" ether daddr & 01:00:00:00:00:00 == 01:00:00:00:00:00'
        rules += [f"        {flood} arp operation request arp daddr ip {b.network.ip} accept",
                  f"        {flood} udp sport 67 udp dport 68 accept",
                  f'        {flood} counter drop comment "{b.name}: no flood that is not for it"']
    chains = [line for hook in ("forward", "output") for line in (   # from other boards, from the host
        f"    chain {hook} {{", f"        type filter hook {hook} priority filter; policy accept;", *rules, "    }")]
    return "\n".join([f"table bridge {FLOOD_TABLE}", f"delete table bridge {FLOOD_TABLE}",
                      f"table bridge {FLOOD_TABLE} {{", *chains, "}", ""])
