"""Which clock a figure was measured on, and which machine it is bound to.

Three clocks (and figures that have none):
- host: when a line reached the machine that timed it (boot milestones, the study's
  definition) or how long the machine took (kernel build times);
- guest-realtime: the board's own clock. On a real board that is the board's hardware;
  on a virtual board it runs as fast as the host lets QEMU run;
- guest-deterministic: QEMU's icount, guest time counted in instructions executed;
- none: sizes and counts (bytes, kB), which no clock measures.

The host a figure was measured on is named by `this_host()`: a random id written once
per machine (every machine here is called "vm", and machines cloned from one image share
machine-id and CPU). Whether figures of two clocks or hosts may be judged against each
other is the judge's rule (boardlab.judge.decide), not this module's.
"""
from __future__ import annotations

import os
import re
import secrets
import socket
from functools import lru_cache
from pathlib import Path

from boardlab.facts.board import Board
from boardlab.measure import families

HOST = "host"
GUEST_REALTIME = "guest-realtime"
GUEST_DETERMINISTIC = "guest-deterministic"
NO_CLOCK = "none"
CLOCKS = (HOST, GUEST_REALTIME, GUEST_DETERMINISTIC, NO_CLOCK)

_SIZE_UNITS = ("bytes", "kB", "MB")


def is_virtual(board: Board) -> bool:
    """A board QEMU emulates (its facts have a qemu section)."""
    return board.virtual


def guest_clock(board: Board, qemu_clock: str | None = None) -> str:
    """The clock the board's own timers run on: a real board's hardware, or the virtual
    board's QEMU clock (qemu_clock as the power switch ran it, else the facts' qemu.clock;
    deterministic means icount)."""
    if not is_virtual(board):
        return GUEST_REALTIME
    clock = qemu_clock or board.qemu.clock
    return GUEST_DETERMINISTIC if clock == "deterministic" else GUEST_REALTIME


def setting_url(board: Board, setting: str) -> str | None:
    """A virtual board's setting at its power switch (boardlab.vlab.power: clock, load):
    the outlet's .../value URL with /SETTING for /value; None for a real board."""
    url = board.power.url
    return url[:-len("value")] + setting if is_virtual(board) and url.endswith("/value") else None


def clock_url(board: Board) -> str | None:
    """The virtual board's clock setting at its power switch."""
    return setting_url(board, "clock")


def switch_clock(board: Board, timeout: float = 2.0) -> str | None:
    """The QEMU clock of a virtual board as its power switch runs it (the switch starts
    QEMU); None for a real board or a switch that does not say."""
    url = clock_url(board)
    if url is None:
        return None
    import requests
    try:
        r = requests.get(url, timeout=timeout)
    except requests.RequestException:
        return None
    return r.text.strip() if r.ok and r.text.strip() in ("deterministic", "realtime") else None


GUEST_PREFIX = "guest_"   # boot_time.guest_*: a milestone in the board's own time


def is_size(unit: str) -> bool:
    """A size is the same figure on any clock."""
    return unit in _SIZE_UNITS


def metric_clock(suite: str, name: str, unit: str, board: Board, qemu_clock: str | None = None) -> str:
    """The clock a metric of a suite was measured on, on this board (qemu_clock: as in
    guest_clock): its family's (boardlab.measure.families), figures in bytes or kB are sizes
    (no clock). A suite that is no family is an error (UnknownFamily), never the host's clock."""
    clock = families.get(suite).clock
    if is_size(unit):
        return NO_CLOCK
    clock = families.GUEST if name.startswith(GUEST_PREFIX) else clock
    return guest_clock(board, qemu_clock) if clock == families.GUEST else clock


# Until 2026-11-26 a host's id was a digest of machine-id, CPU model, flags and core
# count: every machine of one kind (the same VM image) had the same one. Such ids name
# no machine, so a figure that carries one is of an unknown host.
_SHARED_ID = re.compile(r"-[0-9a-f]{12}$")
HOST_ID_FILE = Path(os.environ.get("BOARDLAB_STATE_DIR", "/var/lib/boardlab")) / "host-id"


def known_host(host_id: str | None) -> str | None:
    """host_id when it names one machine; None for none or a shared (old-style) id."""
    return None if not host_id or _SHARED_ID.search(host_id) else host_id


def _host_token(path: Path) -> str:
    """This machine's random id, written once (0644: not a secret, but kept: the figures
    already stored under it stay this host's)."""
    try:
        token = path.read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[0-9a-f]{16}", token):
            return token
    except OSError:
        pass
    token = secrets.token_hex(8)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(token + "\n", encoding="utf-8")
    try:
        os.link(tmp, path)        # first writer wins; a racing one reads the winner's
    except FileExistsError:
        token = path.read_text(encoding="utf-8").strip()
    finally:
        tmp.unlink()
    return token


@lru_cache(maxsize=1)
def this_host() -> dict:
    """This machine's identity: a random id written once under /var/lib/boardlab
    (machine-id and the CPU are the same on every machine cloned from one image), with
    the hostname in front for a person's eye; the CPU and core count said beside it."""
    model, cpus = "unknown CPU", os.cpu_count() or 0
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((ln.partition(":")[2].strip() for ln in f
                          if ln.partition(":")[0].strip() in ("model name", "cpu model", "Hardware")),
                         model)
    except OSError:
        pass
    name = socket.gethostname()
    return {"id": f"{name}-{_host_token(HOST_ID_FILE)}", "hostname": name, "cpu": model, "cpus": cpus}
