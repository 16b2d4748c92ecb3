"""A virtual board's load: work running on the board itself that no kernel asked for, as
on an ageing real board (a throttled SoC, a chatty peripheral), set at its power switch
for its next power-on and kept there like its clock.

- `steady:P`: a process busy P % of every 100 ms of the board's time (the sick board on
  demand: about P % slower wherever a figure is a run of work timed whole);
- `bursts:L`: random bursts of CPU work and memory traffic, L % of the board's time on
  average, drawn from a seed the power switch hands each power-on (the known-noise
  stand-in: the noise has a cause on the board, and its seed repeats it);
- `perboot:L`: a steady load whose share is drawn from each power-on's seed, uniform over
  0 to 2 sqrt(3) L %, so it moves the board's level from boot to boot by a standard
  deviation of L % of its time (the stand-in's level that moves per boot);
- `hostcpu:P`: nothing on the board: its QEMU capped at P % of one host core by a cgroup
  (cap_cpu), as a throttled SoC; a realtime-clock board (qemu-arm-noisy) slows, a
  deterministic one only in its host-arrival times;
- `none`: nothing (the facts' default).

How it reaches the board: as part of the board, not of its root. QEMU's guest-loader
device adds a node to the device tree the board's U-Boot hands its kernel
(/chosen/module@.../bootargs), holding the load as a short shell program
(facts.loads.Load.program); the root's start-up (target/rootfs/etc/init.d/rcS) runs what
it finds there in the background. A real board has no such node, and neither has a
virtual one without a load: its root is the same either way (a file of the load's own in
the root cost qemu-ppc's buffers 8 kB, beyond their floor; functions in rcS 9 ms of boot). Only boards whose QEMU machine has a device tree at start (ARM virt)
take one: ppce500 builds its own later, and QEMU refuses the node there (hostcpu, on the
host, fits every board)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from boardlab.errors import LabFault
from boardlab.facts.loads import ON_BOARD, Load, LoadError, check_board, parse
from boardlab.measure.clocks import setting_url

class LoadSwitchError(LabFault):
    """The board's power switch did not answer about its load."""
    part = "power"


# where the guest-loader puts its (one byte) blob: 1 MB under the top of the board's RAM
# (ARM virt's starts at 1 GB), under U-Boot's relocation; U-Boot may overwrite it, and
# nothing reads it: the node is the message
RAM_BASE = 0x40000000


def qemu_args(board, run_dir: Path, load: Load, power_on: int) -> list[str]:
    """QEMU's arguments for the load (none for none, or one of the host's): a guest-loader
    whose node carries it; a filter on the board's netdev for a delay on its LAN."""
    lan = lan_args(load, power_on)
    if load.kind not in ON_BOARD:
        return lan   # (checked for the board where it was set: its facts, or the switch's PUT)
    blob = Path(run_dir) / "load.blob"
    if not blob.exists():
        blob.write_bytes(b"\0")
    addr = RAM_BASE + (board.ram_mb << 20) - (1 << 20)
    program = load.program(power_on).replace(",", ",,")   # QEMU's option syntax: ",," is a comma
    return ["-device", f"guest-loader,addr={addr:#x},kernel={blob},bootargs={program}"] + lan


NETDEV = "lan"   # the board's netdev (vlab.power.qemu_command)


def lan_args(load: Load, power_on: int) -> list[str]:
    """The board's LAN holding its packets (facts.loads.Load.lan_period_us), or nothing."""
    period = load.lan_period_us(power_on)
    if period is None:
        return []
    return ["-object", f"filter-buffer,id=lan-delay,netdev={NETDEV},queue=all,interval={period}"]


def load_url(board) -> str:
    url = setting_url(board, "load")
    if url is None:
        raise LoadError(f"board {board.name}: its power switch ({board.power.url}) is no virtual lab's: "
                        f"a real board's load is its own")
    return url


def at_switch(board, load: str | None = None, timeout: float = 5.0) -> str:
    """The board's load at its power switch (what the running board has, else the next
    power-on's); with load, set it first (from the next power-on)."""
    import urllib.error
    import urllib.request
    if load is not None:
        check_board(board, parse(load, board.name))   # said here, before the switch is asked
    req = urllib.request.Request(load_url(board), data=None if load is None else load.encode(),
                                 method="GET" if load is None else "PUT")
    try:
        return urllib.request.urlopen(req, timeout=timeout).read().decode().strip()
    except urllib.error.HTTPError as e:
        raise LoadError(f"board {board.name}: {e.read().decode(errors='replace').strip()}") from None
    except OSError as e:
        raise LoadSwitchError(f"board {board.name}: its power switch does not answer ({e}): boardlab vlab up") from None


# ---- hostcpu:P: the board's QEMU capped at P % of one host core (a cgroup's CPU quota) ----
CGROUP_V1 = Path("/sys/fs/cgroup/cpu")     # the cpu controller, cgroup v1 (this kind of host)
CGROUP_V2 = Path("/sys/fs/cgroup")
# the switch runs in the lab's namespace, whose /sys (`ip netns exec` mounts its own) has no
# cgroup mounts: it mounts the cpu hierarchy here, in its own mount namespace (the same
# hierarchy as the host's: one cpu hierarchy a host)
OWN_MOUNT = Path("/run/boardlab/cgroup-cpu")
PERIOD_US = 100_000


def cpu_controller() -> tuple[Path, bool]:
    """(the cpu controller's directory, whether cgroup v1), mounted here when not seen."""
    if (CGROUP_V1 / "cpu.cfs_quota_us").exists():
        return CGROUP_V1, True
    if "cpu" in ((CGROUP_V2 / "cgroup.controllers").read_text().split()
                 if (CGROUP_V2 / "cgroup.controllers").exists() else ()):
        return CGROUP_V2, False
    if not (OWN_MOUNT / "cgroup.procs").exists():
        OWN_MOUNT.mkdir(parents=True, exist_ok=True)
        for how in (["-t", "cgroup", "-o", "cpu"], ["-t", "cgroup2"]):
            if subprocess.run(["mount", *how, "boardlab-cpu", str(OWN_MOUNT)], capture_output=True).returncode == 0:
                break
    return OWN_MOUNT, (OWN_MOUNT / "cpu.cfs_quota_us").exists()


def cap_cpu(board, pid: int, percent: float) -> Path:
    """The process (and its threads, and any it starts) into the board's cgroup, its CPU
    time capped at percent of one core -> the cgroup. LoadError where the host has no cpu
    controller to write."""
    quota = max(1000, int(PERIOD_US * percent / 100))
    try:
        root, v1 = cpu_controller()
        d = root / "boardlab" / board.name
        d.mkdir(parents=True, exist_ok=True)
        if v1:
            (d / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
            (d / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        else:
            (d.parent / "cgroup.subtree_control").write_text("+cpu\n")
            (d / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
        (d / "cgroup.procs").write_text(f"{pid}\n")
    except OSError as e:
        raise LoadError(f"board {board.name}: hostcpu:{percent:g}: its QEMU cannot be capped here "
                        f"({e.filename or 'the cpu controller'}: {e.strerror or e})") from None
    return d


def uncap_cpu(cgroup: Path | None) -> None:
    """The cgroup cap_cpu made gone, once its QEMU has exited (an empty cgroup is removed);
    None: nothing was capped, nothing is looked up or mounted."""
    if cgroup is None:
        return
    try:
        cgroup.rmdir()
    except OSError:
        pass
