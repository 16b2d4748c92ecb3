"""The lab's management network on this machine (places/lab.yaml): a bridge in the root
namespace, which is the management host, and the labgrid coordinator on it. Each virtual
lab host links itself to the bridge (boardlab.vlab.host)."""
from __future__ import annotations

import sys
from pathlib import Path

from boardlab.facts.labfacts import load_lab
from boardlab.log import progress
from boardlab.net import tcp_open
from boardlab.vlab import sshkeys
from boardlab.services.daemons import Daemons, sh

RUN_DIR = Path("/run/boardlab/lab")
COORDINATOR_DIR = Path("/var/lib/boardlab/coordinator")   # its places.yaml outlives a restart


def daemons() -> Daemons:
    for d in (RUN_DIR / "pids", RUN_DIR / "logs"):
        d.mkdir(parents=True, exist_ok=True)
    return Daemons(RUN_DIR / "pids", RUN_DIR / "logs")


def coordinator_service():
    lab = load_lab()
    # labgrid's coordinator, with LAVA's holds kept through its restart (boardlab.lab.coordinator)
    return ("coordinator", [sys.executable, "-m", "boardlab.lab.coordinator", "-l", lab.coordinator],
            None, lambda: tcp_open(lab.coordinator_port, lab.management_ip))


def management_up():
    """The management network and the coordinator, if not up."""
    lab = load_lab()
    if sh("ip", "link", "show", lab.bridge, check=False).returncode != 0:
        progress(f"  management network: bridge {lab.bridge} {lab.management}")
        sh("ip", "link", "add", lab.bridge, "type", "bridge")
        sh("ip", "addr", "add", lab.management, "dev", lab.bridge)
        sh("ip", "link", "set", lab.bridge, "up")
    COORDINATOR_DIR.mkdir(parents=True, exist_ok=True)
    name, cmd, netns, ready = coordinator_service()
    daemons().start(name, cmd, netns=netns, ready=ready, timeout=20.0, cwd=COORDINATOR_DIR)


def management_down():
    lab = load_lab()
    daemons().stop("coordinator")
    if sh("ip", "link", "show", lab.bridge, check=False).returncode == 0:
        sh("ip", "link", "del", lab.bridge)
        progress(f"  management network {lab.bridge}: removed")
    sshkeys.remove_client_config()


def _link_name(lab_host) -> str:
    return f"mg-{lab_host.name}"[:15]   # an interface name has 15 characters


def link_host(lab_host):
    """A lab host's management link, if it has none: a veth pair, one end (mgmt0, with the
    host's management address) in the host's namespace, the other on the lab's bridge."""
    ns = lab_host.netns
    if sh("ip", "link", "show", "mgmt0", netns=ns, check=False).returncode == 0:
        return
    bridge, outer = load_lab().bridge, _link_name(lab_host)
    progress(f"  lab host {lab_host.name}: management link {lab_host.management} on {bridge}")
    sh("ip", "link", "del", outer, check=False)   # left by a host removed a moment ago
    sh("ip", "link", "add", outer, "type", "veth", "peer", "name", "mgmt0", "netns", ns)
    sh("ip", "link", "set", outer, "master", bridge, "up")
    sh("ip", "addr", "add", lab_host.management, "dev", "mgmt0", netns=ns)
    sh("ip", "link", "set", "mgmt0", "up", netns=ns)


def unlink_host(lab_host):
    sh("ip", "link", "del", _link_name(lab_host), check=False)   # both ends of it
