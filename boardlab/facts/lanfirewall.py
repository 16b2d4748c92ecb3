"""What a board may reach of its lab host: the nftables rule set of a lab host's LAN,
rendered from its facts. A board under test is untrusted (its kernel is the thing being
tested): it gets what its boot needs - TFTP, the NFS server and its portmapper and mount
daemon, replies to what the host sent it - and nothing else of the lab host: not the power
switch, not ser2net (a connection there takes the lab's own console away), not sshd, the
exporter or pdudaemon, on any of the host's addresses (Linux accepts a packet for any
local address on any interface, so listening on the management address alone is not
enough), and nothing beyond the host (no forwarding from the LAN).

The rule set lives in a table of its own; loading it again replaces it. On a virtual lab
host `boardlab vlab up` loads it in the host's namespace; a real lab host's copy is in
places/<host>/nftables.conf (`boardlab gen`), for `nft -f`."""
from __future__ import annotations

from boardlab.facts.hostconfigs import MOUNTD_PORT, lan_network
from boardlab.facts.labhosts import LabHost

TABLE = "boardlab_lan"
# a board's boot: DHCP/BOOTP (67), TFTP (69), the portmapper (111), NFS (2049), mountd
BOOT_UDP = (67, 69, 111, 2049, MOUNTD_PORT)
BOOT_TCP = (111, 2049, MOUNTD_PORT)


def lan_match(lab: LabHost) -> str:
    """What marks a packet from the lab LAN: the virtual host's bridge (its boards' taps
    are its ports), a real host's LAN network (its interface is the admin's to name)."""
    return f'iifname "{lab.bridge}"' if lab.bridge else f"ip saddr {lan_network(lab)}"


def nftables_conf(lab: LabHost) -> str:
    """The rule set (`nft -f`): TFTP's data packets come back to tftpd's own ephemeral
    port, which the host sent from, so they are replies (ct state established)."""
    lan = lan_match(lab)
    ports = lambda ps: ", ".join(str(p) for p in ps)   # noqa: E731
    return "\n".join([
        f"# Generated from places/{lab.name}/lab-host.yaml by boardlab: what the boards on",
        f"# lab host {lab.name}'s LAN ({lan_network(lab)}) may reach of it. Load: nft -f THIS_FILE",
        "# (a real host with nfs-kernel-server pins mountd: /etc/nfs.conf [mountd] "
        f"port={MOUNTD_PORT})",
        f"table inet {TABLE}",
        f"delete table inet {TABLE}",
        f"table inet {TABLE} {{",
        "    chain input {",
        "        type filter hook input priority filter; policy accept;",
        f"        {lan} ct state established,related accept",
        f"        {lan} udp dport {{ {ports(BOOT_UDP)} }} accept",
        f"        {lan} tcp dport {{ {ports(BOOT_TCP)} }} accept",
        f"        {lan} icmp type echo-request accept",
        f"        {lan} counter drop comment \"a board reaches nothing else of its lab host\"",
        "    }",
        "    chain forward {",
        "        type filter hook forward priority filter; policy accept;",
        f"        {lan} counter drop comment \"nor anything beyond it\"",
        "    }",
        "}",
        ""])
