"""Which clock a figure was measured on, and which machine it is bound to.

Three clocks (and figures that have none):
- host: when a line reached the machine that timed it (boot milestones, the study's
  definition) or how long the machine took (kernel build times);
- guest-realtime: the board's own clock. On a real board that is the board's hardware;
  on a virtual board it runs as fast as the host lets QEMU run;
- guest-deterministic: QEMU's icount, guest time counted in instructions executed;
- none: sizes and counts (bytes, kB), which no clock measures.

A figure is *host-bound* when another machine of the same kind would measure another
value for the same kernel: work the host does itself (a kernel build's times), and the
host-clock and guest-realtime figures of a virtual board (its speed is the host's). A
real board's milestones are the board's own time: the lab host only stamps their
arrival, within milliseconds, so they are not host-bound. A host-bound figure is judged
only against one from the same host (every machine here is called "vm", and machines
cloned from one image share machine-id and CPU, so the host is named by `this_host()`:
a random id written once per machine).

Whether two figures may be judged against each other at all is decided in one place,
`judgeable()`: results (a run against its baseline), compare, report, the study table
and the LAVA gate all ask it.
"""
from __future__ import annotations

import os
import re
import secrets
import socket
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from boardlab.facts.board import Board
from boardlab.measure import kernelid

HOST = "host"
GUEST_REALTIME = "guest-realtime"
GUEST_DETERMINISTIC = "guest-deterministic"
NO_CLOCK = "none"
CLOCKS = (HOST, GUEST_REALTIME, GUEST_DETERMINISTIC, NO_CLOCK)

# suite -> the clock of its timed figures; figures in bytes or kB are sizes (no clock)
_SUITE_CLOCK = {"build": HOST, "boot_time": HOST, "memory": NO_CLOCK,
                "lmbench": "guest", "jitter": "guest"}
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


def clock_url(board: Board) -> str | None:
    """The virtual board's clock setting at its power switch (boardlab.vlab.power):
    the outlet's .../value URL with /clock for /value."""
    url = board.power.url
    return url[:-len("value")] + "clock" if is_virtual(board) and url.endswith("/value") else None


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


def metric_clock(suite: str, name: str, unit: str, board: Board, qemu_clock: str | None = None) -> str:
    """The clock a metric of a suite was measured on, on this board (qemu_clock: as in
    guest_clock)."""
    if unit in _SIZE_UNITS:
        return NO_CLOCK
    clock = "guest" if name.startswith(GUEST_PREFIX) else _SUITE_CLOCK.get(suite, HOST)
    return guest_clock(board, qemu_clock) if clock == "guest" else clock


HOST_WORK_SUITES = ("build",)   # figures of work the lab host does itself


def host_bound(clock: str | None, board: Board | None, key: str) -> bool:
    """Would another machine of the same kind measure another value of metric `key`
    (suite.name) on the clock given? (board None: not known, taken as virtual)"""
    if clock in (NO_CLOCK, GUEST_DETERMINISTIC):
        return False
    if key.split(".")[0] in HOST_WORK_SUITES:
        return True
    return (board is None or is_virtual(board)) and clock in (HOST, GUEST_REALTIME, None)


OTHER_HOST = "other-host"   # a host-bound figure against one from another machine
OTHER_CLOCK = "other-clock"  # figures of two clocks: other units
OTHER_KERNEL = "other-kernel"  # figures of two kernels under one name: not the same kernel


@dataclass(frozen=True)
class Judgeable:
    """May two figures of one metric be judged against each other? ok, or the verdict
    that says why not (OTHER_CLOCK, OTHER_HOST) and the reason in words. `drifts`: they
    may, but the figure is host-bound, so a side stored in another session cannot tell
    the host's drift from a change (only interleaved boots, `boardlab compare`, can)."""
    ok: bool
    verdict: str = ""
    why: str = ""
    drifts: bool = False


def judgeable(key: str, board: Board | None, clock_a: str | None, host_a: str | None,
              clock_b: str | None, host_b: str | None, kernel_a: dict | None = None,
              kernel_b: dict | None = None) -> Judgeable:
    """The one rule. clock_*: boardlab.measure.clocks names, None when a stored figure does not
    say (the study's numbers): then it is taken to be the other side's. host_*: this_host
    ids, None when unknown (an unknown host never matches one of a host-bound figure).
    kernel_*: the kernels' identities (measure.kernelid) where both sides should be one
    kernel (a run against its baseline; not `compare`, whose sides differ by design)."""
    other = kernelid.differs(kernel_a, kernel_b)
    if other:
        return Judgeable(False, OTHER_KERNEL, f"the baseline's kernel is {other[0]}, this run's {other[1]}")
    if clock_a is not None and clock_b is not None and clock_a != clock_b:
        return Judgeable(False, OTHER_CLOCK, f"other clock, not judged ({clock_a} / {clock_b}: "
                                             f"other units)")
    clock = clock_a if clock_a is not None else clock_b
    if not host_bound(clock, board, key):
        return Judgeable(True)
    known_a, known_b = known_host(host_a), known_host(host_b)
    if known_a is None or known_b is None or known_a != known_b:
        return Judgeable(False, OTHER_HOST, f"other host, not judged ({_host_words(host_a)}"
                                            f" / {_host_words(host_b)})")
    return Judgeable(True, drifts=True)


def _host_words(host_id: str | None) -> str:
    if not host_id:
        return "an unknown host"
    return host_id if known_host(host_id) else f"an unknown host: {host_id} is an id machines of one kind share"


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
