"""A virtual lab host: a network namespace that is the host, wired like a real one.

up: builds the boards' images (cached), makes the host (its namespace, with the lab LAN
inside it: a bridge and a tap per board, and a link to the lab's management network,
boardlab.vlab.mgmt), and starts in it, each only if not already running: a serial cable
per board, ser2net (RFC2217), tftpd-hpa (hostconfigs.tftpd_retransmit_args), the NFS server
(rpcbind + nfs-ganesha, user space: this kernel has no nfsd; daemons.private_run), the
power switch (HTTP; it starts QEMU on the board's clock), sshd (kernels are staged to
its TFTP directory over ssh) and the labgrid exporter (supervised: it comes back by itself).
down: powers the boards off and stops exactly what up started, by PID, then removes
the host. status: each service and each board's power."""
from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path

from boardlab.errors import BoardlabError, InputError, LAB
from boardlab.facts import hostconfigs, lanfirewall
from boardlab.facts.board import PLACES_DIR, load_board
from boardlab.facts.labhosts import load_lab_host
from boardlab.facts.labfacts import load_lab
from boardlab.log import progress
from boardlab.measure.clocks import clock_url, switch_clock
from boardlab.services.daemons import Daemons, ServiceError, private_run, sh
from boardlab.services.supervisor import supervised
from boardlab.vlab import jobexports, sshkeys
from boardlab.boot.powerctl import lab_host_down
from boardlab.images import boardimages
from boardlab.vlab.mgmt import link_host, management_up, unlink_host


class LabError(ServiceError):
    """The virtual lab could not be brought up, down or used: names the step."""
    party, part = LAB, "host"


class VirtualLabHost:
    def __init__(self, lab_name="vlab"):
        self.lab = load_lab_host(lab_name)
        self.boards = [load_board(b) for b in self.lab.boards]
        self.run_dir = Path(self.lab.run_dir)
        self.pid_dir = self.run_dir / "pids"
        self.log_dir = self.run_dir / "logs"
        self.daemons = Daemons(self.pid_dir, self.log_dir)
        self.prepared = set()    # boards whose images this instance has checked or built
        self.build_s = {}        # board -> seconds its images took here (checked: ~1 s)
        self.ns = self.lab.netns
        self.server_ip = self.lab.server_ip

    # ---- readiness probes --------------------------------------------------------------

    def _listening(self, proto, port):
        r = sh("ss", "-Hln" + ("t" if proto == "tcp" else "u"), f"sport = :{port}",
               netns=self.ns, check=False)
        return r.returncode == 0 and bool(r.stdout.strip())

    def _netns_exists(self):
        return Path(f"/run/netns/{self.ns}").exists()

    # ---- up ------------------------------------------------------------------------------
    def services(self):
        """(name, command, netns, ready probe) in start order: all in the host's namespace."""
        lab = self.lab
        ns = self.ns
        out = []
        for b in self.boards:
            link = str(self.run_dir / f"{b.name}.tty")
            out.append((f"cable-{b.name}",
                        [sys.executable, "-m", "boardlab.vlab.cable",
                         "--socket", str(self.run_dir / f"{b.name}.uart.sock"), "--link", link,
                         "--baud", str(b.console.baud)],
                        ns, lambda link=link: os.path.exists(link)))
        out.append(("ser2net", ["ser2net", "-n", "-u", "-c", str(self.run_dir / "ser2net.yaml"),
                                "-P", str(self.run_dir / "ser2net.pid")], ns,
                    lambda: all(self._listening("tcp", b.console.ser2net_port)
                                for b in self.boards)))
        out.append(("tftpd", ["in.tftpd", "--foreground", "--listen", "--address",
                              f"{self.server_ip}:69", "--secure", "--user", "tftp",
                              "--verbose", *hostconfigs.tftpd_retransmit_args(lab), lab.tftp_root], self.ns,
                    lambda: self._listening("udp", 69)))
        out.append(("rpcbind", private_run(self.run_dir) + ["rpcbind", "-f"], self.ns,
                    lambda: self._listening("tcp", 111)))
        out.append(("nfsd", private_run(self.run_dir) + [
            "ganesha.nfsd", "-F", "-f", str(self.run_dir / "ganesha.conf"),
            "-L", str(self.log_dir / "ganesha.log"), "-p", str(self.run_dir / "ganesha.pid"),
            "-N", "NIV_EVENT"], self.ns, lambda: self._listening("tcp", 2049)))
        out.append(("power-switch", [sys.executable, "-m", "boardlab.vlab.power", "--lab",
                                     lab.path], ns,
                    lambda: self._listening("tcp", lab.power_switch.port)))
        if lab.management:
            out.append(("sshd", ["/usr/sbin/sshd", "-D", "-e", "-f", str(self.run_dir / "sshd_config")],
                        ns, lambda: self._listening("tcp", 22)))
            out.append(("exporter", supervised("exporter", [
                str(Path(sys.executable).parent / "labgrid-exporter"), "-c", load_lab().coordinator,
                "--name", lab.exporter_name or lab.name, "--hostname", lab.management_ip,
                str(PLACES_DIR / lab.name / "exporter.yaml")]), ns, self._exported))
        return out

    def _exported(self) -> bool:
        """The exporter's resources are at the coordinator."""
        from boardlab.facts.places import client
        r = client(load_lab().coordinator, "resources", check=False)
        return all(f"{self.lab.exporter_name or self.lab.name}/{b.name}/NetworkSerialPort" in r.stdout
                   for b in self.boards)

    def _check_host(self):
        if os.geteuid() != 0:
            raise LabError("the virtual lab needs root (network namespace, port 69, NFS)")
        tools = sorted({b.qemu.binary for b in self.boards}) + [
            "ser2net", "in.tftpd", "rpcbind", "ganesha.nfsd", "mkimage", "ip", "ss", "unshare", "nft"]
        if self.lab.management:
            tools += ["sshd", "ssh-keygen", "rsync"]
        missing = [t for t in tools
                   if not any(os.access(os.path.join(d, t), os.X_OK)
                              for d in os.environ.get("PATH", "").split(":") + ["/usr/sbin", "/sbin"])]
        if missing:
            raise LabError(f"not installed: {', '.join(missing)} (run scripts/setup-host.sh)")

    def _make_lan(self):
        br = self.lab.bridge
        if not self._netns_exists():
            progress(f"  lab host {self.lab.name}: netns {self.ns}; its lab LAN: bridge {br} {self.lab.address}")
            sh("ip", "netns", "add", self.ns)
            sh("ip", "link", "set", "lo", "up", netns=self.ns)
            sh("ip", "link", "add", br, "type", "bridge", netns=self.ns)
            sh("ip", "addr", "add", self.lab.address, "dev", br, netns=self.ns)
            sh("ip", "link", "set", br, "up", netns=self.ns)
        rules = self.run_dir / "nftables.conf"   # what the boards may reach of this host
        rules.write_text(lanfirewall.nftables_conf(self.lab) + lanfirewall.board_flood_conf(self.boards))
        sh("nft", "-f", str(rules), netns=self.ns)   # replaces its table: every up
        if self.lab.management:
            link_host(self.lab)
        for b in self.boards:   # also a board added to a running lab
            tap = b.qemu.tap
            if sh("ip", "link", "show", tap, netns=self.ns, check=False).returncode == 0:
                continue
            sh("ip", "tuntap", "add", "dev", tap, "mode", "tap", netns=self.ns)
            sh("ip", "link", "set", tap, "master", br, "up", netns=self.ns)

    def _render_configs(self):
        listen = self.lab.control_address   # not the LAN: a board must not reach a console
        (self.run_dir / "ser2net.yaml").write_text(hostconfigs.ser2net_yaml(
            (b.name, b.console.ser2net_port, str(self.run_dir / f"{b.name}.tty"),
             b.console.baud, listen) for b in self.boards))
        if self.lab.management:
            (self.run_dir / "sshd_config").write_text(sshkeys.sshd_config(self.lab, self.run_dir))
        jobexports.write_ganesha_conf(self.lab)   # each root to its own board only

    def board(self, name: str):
        found = [b for b in self.boards if b.name == name]
        if not found:
            raise InputError(f"virtual lab {self.lab.name} has no board {name!r} "
                           f"(its boards: {', '.join(b.name for b in self.boards)})")
        return found[0]

    def _build(self, names) -> bool:
        """Each named board's images built (when their inputs changed) and its NFS root
        in step with them; True when an NFS root was refreshed."""
        refreshed = False
        for name in names:
            b = self.board(name)
            t0 = time.monotonic()
            refreshed |= boardimages.ready(b, powered_on=bool(self.daemons.pid(f"qemu-{name}")))
            self.prepared.add(name)
            self.build_s[name] = round(time.monotonic() - t0, 1)
        return refreshed

    def prepare(self, name: str):
        """What a board needs before its first boot here, on a running lab: its images
        and NFS root (a board's images are built when it is first used, not at `up`).
        A board of another virtual lab host is prepared there."""
        if name not in {b.name for b in self.boards}:
            return VirtualLabHost(load_board(name).lab_host).prepare(name)
        if name in self.prepared:
            return
        if self._build([name]) and self.daemons.pid("nfsd"):
            self.daemons.stop("nfsd")   # its metadata cache still holds the old tree's handles
            self.start_service("nfsd")

    def up(self, boards=()):
        """The lab host's services for all its boards; images only for `boards` (names):
        the others' are built when they are first used (prepare)."""
        for name in boards:   # a wrong name: said before anything is started
            self.board(name)
        self._check_host()
        t0 = time.monotonic()
        if self.lab.management:
            management_up()   # the lab's network and coordinator, which the host reaches
            sshkeys.host_key(self.lab)
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # sshd's privilege separation
        progress(f"virtual lab host {self.lab.name}: up")
        for d in (self.pid_dir, self.log_dir):
            d.mkdir(parents=True, exist_ok=True)
        Path(self.lab.tftp_root).mkdir(parents=True, exist_ok=True)
        if self._build(boards) and self.daemons.pid("nfsd"):
            self.daemons.stop("nfsd")   # its metadata cache still holds the old tree's handles
        self._render_configs()
        self._make_lan()
        for name, cmd, netns, ready in self.services():
            self.daemons.start(name, cmd, netns=netns, ready=ready, timeout=20.0)
        progress(f"virtual lab up in {time.monotonic() - t0:.1f} s")

    def stop_service(self, name) -> bool:
        """Stop one service of a running lab (what a lab host's crash or restart does)."""
        return self.daemons.stop(name)

    def start_service(self, name):
        """Start one stopped service again, as `up` starts it."""
        for svc, cmd, netns, ready in self.services():
            if svc == name:
                return self.daemons.start(svc, cmd, netns=netns, ready=ready, timeout=20.0)
        raise LabError(f"virtual lab {self.lab.name} has no service {name!r}")

    # ---- down ----------------------------------------------------------------------------
    def _switch_off_all(self):
        from boardlab.vlab.power import switch_off
        for b in self.boards:
            try:
                switch_off(b)
            except OSError:
                pass

    def down(self):
        progress(f"virtual lab {self.lab.name}: down")
        if self.daemons.pid("power-switch"):
            self._switch_off_all()
        for name, *_ in reversed(self.services()):
            self.daemons.stop(name)
        for b in self.boards:   # a board whose switch died: its QEMU by its PID file
            self.daemons.stop(f"qemu-{b.name}")
        if self.lab.management:
            unlink_host(self.lab)
        if self._netns_exists():
            sh("ip", "netns", "del", self.ns)
            progress(f"  lab host {self.ns}: removed")

    # ---- status --------------------------------------------------------------------------
    def status(self) -> dict:
        svc = {}
        for name, *_ in self.services():
            svc[name] = self.daemons.pid(name)
        boards = {}
        for b in self.boards:
            state = "unknown (power switch down)"
            if svc.get("power-switch"):
                try:
                    url = b.power.url
                    state = "on" if urllib.request.urlopen(url, timeout=5).read() == b"1" else "off"
                except OSError as e:
                    state = f"unknown ({e})"
            boards[b.name] = {"power": state, "qemu_pid": self.daemons.pid(f"qemu-{b.name}"),
                              "images": (Path(b.images.dir) / ".inputs").exists(),
                              "console": f"rfc2217://{b.serial_host}:{b.console.ser2net_port}",
                              "clock": switch_clock(b) if svc.get("power-switch") else None}
        return {"lab": self.lab.name, "netns": self.ns if self._netns_exists() else None,
                "services": svc, "boards": boards}

    def clock(self, clock: str | None = None) -> dict:
        """Each board's QEMU clock at the power switch; with clock, set it first (the
        next power-on uses it)."""
        if not self.daemons.pid("power-switch"):
            raise LabError("the power switch is not running: boardlab vlab up")
        out = {}
        for b in self.boards:
            if clock:
                req = urllib.request.Request(clock_url(b), data=clock.encode(), method="PUT")
                urllib.request.urlopen(req, timeout=5).read()
            out[b.name] = switch_clock(b)
        return out

    def is_up(self) -> bool:
        st = self.status()
        return st["netns"] is not None and all(st["services"].values())


def virtual_host_of(board) -> str | None:
    """The board's lab host if it is this machine's virtual one; None for a real one."""
    try:
        return board.lab_host if load_lab_host(board.lab_host).kind == "virtual" else None
    except (FileNotFoundError, BoardlabError):
        return None


def prepare_if_virtual(board) -> bool:
    """A board's images and NFS root before its first boot, when its lab host is this
    machine's virtual one (False: a real lab host, nothing to build here); refused when
    that lab host is down."""
    if virtual_host_of(board) is None:
        return False
    if down := lab_host_down(board):   # before any image is built
        raise InputError(f"board {board.name}: {down}")
    VirtualLabHost(board.lab_host).prepare(board.name)
    return True
