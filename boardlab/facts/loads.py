"""A virtual board's load, as its facts (qemu.load) and its power switch take it: work
running on the board that no test asked for (boardlab.vlab.boardload carries it to the
board). `none`, `steady:P` (busy P % of every 100 ms of the board's time: the sick board
on demand) or `bursts:L[@SEED]` (seeded random bursts of CPU work and memory traffic, L %
of the board's time on average: the known-noise stand-in). Any of them may carry a delay on
the board's LAN, `+lan:MS` (or `lan:MS[@SEED]` alone): see Load.lan_period_us."""
from __future__ import annotations

import math
import random
import re
import zlib
from dataclasses import dataclass

from boardlab.errors import Bug, InputError

NONE = "none"
KINDS = ("steady", "bursts", "perboot", "hostcpu", "lan")
ON_BOARD = ("steady", "bursts", "perboot")   # the kinds that run on the board (a device-tree node)
SEEDED = ("bursts", "perboot", "lan")
STEADY_MAX = 90          # % of the board's time: beyond it the board barely runs its tests
BURSTS_MAX = 20.0
PERBOOT_MAX = 10.0       # a standard deviation: its shares reach 2 sqrt(3) x it
HOSTCPU_MAX = 100.0      # % of one host core QEMU may use
LAN_MAX = 20.0           # ms: the LAN's mean hold of a packet (a real lab LAN's is under 1)
MACHINES = ("virt",)     # QEMU machines whose device tree exists when -device is applied


class LoadError(InputError):
    """A load the board cannot take, or one written wrong: said in one line."""


@dataclass(frozen=True)
class Load:
    kind: str              # none, steady, bursts or perboot
    size: float = 0.0      # % of the board's time (perboot: the standard deviation of its share)
    seed: int | None = None   # bursts, perboot, lan: the first power-on's seed (then +1 each power-on)
    lan_ms: float = 0.0    # a delay on the board's LAN beside the load (`+lan:MS`); kind lan: its size

    def __str__(self) -> str:
        if self.kind == NONE:
            return NONE
        size = f"{self.size:g}"
        lan = f"+lan:{self.lan_ms:g}" if self.lan_ms and self.kind != "lan" else ""
        return f"{self.kind}:{size}" + (f"@{self.seed}" if self.seed is not None else "") + lan

    def lan_period_us(self, power_on: int) -> int | None:
        """The board's LAN this power-on: every packet, either way, is held until the next
        tick of a clock in the board's own time (QEMU's filter-buffer on the board's netdev,
        its timer on the virtual clock), whose period is drawn from the power-on's seed,
        uniform over 0.5 to 1.5 x the mean MS: each packet waits 0 to one period, MS/2 on
        average, so a board's network-bound figures move with each boot's period. The
        model, stated before it was measured: a LAN switch, an NFS server's queue, a
        PHY's interrupt moderation hold a real board's packets for a time that differs
        from one boot (one server's load, one link's negotiation) to the next. None: no
        delay. (netem on the tap would delay in the host's time, and this host's kernel
        has no sch_netem.)"""
        if not self.lan_ms:
            return None
        drawn = random.Random(0x1a40000 + self.seed_of(power_on)).uniform(0.5, 1.5) * self.lan_ms
        return max(1, round(drawn * 1000))

    def seed_of(self, power_on: int) -> int:
        """This power-on's seed: the first one's, one more each power-on (busybox ash's
        RANDOM takes 15 bits)."""
        return ((self.seed or 0) + power_on) & 0x7fff

    def share(self, power_on: int) -> float:
        """perboot: this power-on's busy share in % of the board's time, in tenths of a
        percent. The model, stated before it was measured: what sets a real board's level
        anew at each boot (where its pages land in the caches, the DRAM's refresh phase, an
        interrupt's timing) is taken as a busy share drawn uniformly from 0 to 2 sqrt(3) L %,
        so its standard deviation from boot to boot is L % (its mean sqrt(3) L %). Drawn on
        the host from the power-on's seed, so a rerun repeats it."""
        if self.kind != "perboot":
            return self.size
        return round(random.Random(self.seed_of(power_on)).uniform(0, 2 * math.sqrt(3) * self.size), 1)

    def program(self, power_on: int) -> str:
        """The board's load as the shell program its start-up runs (busybox ash). No fork
        once it runs: a fork costs the board milliseconds, which would be load of its own.
        Time is the board's own (/proc/uptime); a millisecond's worth of each kind of work
        is counted first (over 300 ms), then, in every 100 ms, the burst and the rest of
        the 100 ms waited out by a read with a timeout on a FIFO nobody writes."""
        if self.kind not in ON_BOARD:   # hostcpu is the host's cgroup cap: nothing runs on the board
            raise Bug(f"load {self}: not a load the board runs (kinds that do: {', '.join(ON_BOARD)})")
        tenths = round(self.share(power_on) * 10)   # of a percent: of a ms in every 100 ms
        if self.kind in ("steady", "perboot"):
            step = f"x={tenths}; spin $((c * x / 1000))"
        else:   # 0..2L ms, L on average: CPU work or memory traffic, one or the other
            step = (f"x=$((RANDOM % {2 * tenths + 1})); if [ $((RANDOM % 2)) = 0 ]; then spin $((c * x / 1000)); "
                    "else zero $((b * x / 1000)); fi")
        seed = self.seed_of(power_on)
        return "\n".join((
            f"# boardlab.load={self} power-on {power_on}",
            f"RANDOM={seed}",
            "ms() { read -r u _ < /proc/uptime; u=${u%.*}${u#*.}; now=$((${u#0} * 10)); }",
            "spin() { i=0; while [ $i -lt $1 ]; do i=$((i + 1)); done; }",
            # memory traffic: 4 kB blocks through a pipe to a reader started once
            "z=z; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do z=$z$z; done",
            "f=/tmp/boardlab-load; mkfifo $f.idle $f.mem; exec 3<>$f.idle",
            "dd if=$f.mem of=/dev/null bs=64k 2>/dev/null & exec 4>$f.mem",
            "zero() { i=0; while [ $i -lt $1 ]; do printf %s \"$z\" >&4; i=$((i + 1)); done; }",
            # how much of each the board does in 100 ms, counted over 300 ms
            "per_100ms() { ms; t=$now n=0; while ms; [ $((now - t)) -lt 300 ]; do $2 $1; n=$((n + $1)); done; "
            "echo $((n * 100 / (now - t))); }",
            "c=$(per_100ms 16 spin) b=$(per_100ms 1 zero)",
            f'echo "boardlab: load {self.kind}:{self.size:g} seed {seed}'
            + (f' share {tenths / 10:g} %' if self.kind == "perboot" else "")
            + ': $c loops, $b blocks of 4 kB in 100 ms" > /dev/kmsg',
            # the rest of the 100 ms in ms, written 0.MMM for read -t
            f"while :; do {step}; w=$((1100 - x / 10)); read -t 0.${{w#1}} _ <&3; done", ""))


def parse(text: str, board_name: str = "") -> Load:
    """`none`, `steady:P`, `bursts:L[@SEED]` or `perboot:L[@SEED]` -> Load; LoadError
    naming what is wrong."""
    who = f"board {board_name}: " if board_name else ""
    text = text.strip()
    base, plus, lan = text.partition("+")
    if plus:
        m = re.fullmatch(r"lan:([0-9.]+)", lan.strip())
        if not m or base.strip().startswith(("lan", NONE)):
            raise LoadError(f"{who}load {text!r}: a load's delay on the LAN is written LOAD+lan:MS "
                            f"(e.g. perboot:1@3807+lan:1)")
        load = parse(base, board_name)
        if load.kind not in SEEDED:   # its period drawn from the load's seed, which only these have
            raise LoadError(f"{who}load {text!r}: a delay on the LAN rides a seeded load "
                            f"({', '.join(k for k in SEEDED if k != 'lan')}), or is one: lan:MS[@SEED]")
        return Load(load.kind, load.size, load.seed, _lan_ms(m.group(1), who, text))
    if text == NONE:
        return Load(NONE)
    m = re.fullmatch(r"(\w+):([0-9.]+)(?:@(\d+))?", text)
    if not m or m.group(1) not in KINDS:
        raise LoadError(f"{who}load {text!r}: none, steady:PERCENT, bursts:PERCENT[@SEED], perboot:PERCENT[@SEED], "
                        f"hostcpu:PERCENT or lan:MS[@SEED], any of them +lan:MS")
    kind, size, seed = m.group(1), float(m.group(2)), m.group(3)
    if kind == "lan":
        ms = _lan_ms(m.group(2), who, text)
        return Load("lan", ms, int(seed) if seed is not None else None, ms)
    top = {"steady": STEADY_MAX, "bursts": BURSTS_MAX, "perboot": PERBOOT_MAX, "hostcpu": HOSTCPU_MAX}[kind]
    if not 0 < size <= top:
        raise LoadError(f"{who}load {text!r}: {kind} takes more than 0 and at most {top:g} % of "
                        + ("one host core" if kind == "hostcpu" else "the board's time"))
    if kind in ("steady", "hostcpu") and seed is not None:
        raise LoadError(f"{who}load {text!r}: a {kind} load has no seed")
    return Load(kind, size, int(seed) if seed is not None else None)


def _lan_ms(text: str, who: str, whole: str) -> float:
    ms = float(text)
    if not 0 < ms <= LAN_MAX:
        raise LoadError(f"{who}load {whole!r}: a LAN's delay takes more than 0 and at most {LAN_MAX:g} ms")
    return ms


def check_board(board, load: Load) -> None:
    """A board whose QEMU cannot carry the load's node is refused before its power-on."""
    machine = board.qemu.machine.split(",")[0]
    if load.kind in ON_BOARD and machine not in MACHINES:
        raise LoadError(f"board {board.name}: QEMU machine {machine} builds its device tree after "
                        f"its devices, so no load reaches it (machines that take one: {', '.join(MACHINES)})")


def seeded(load: Load, board_name: str) -> Load:
    """A seeded load without a seed gets the board's: from its name, so a rerun repeats it."""
    if (load.kind not in SEEDED and not load.lan_ms) or load.seed is not None:
        return load
    return Load(load.kind, load.size, zlib.crc32(board_name.encode()) & 0x7fff, load.lan_ms)
