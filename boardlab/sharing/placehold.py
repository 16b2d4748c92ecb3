"""A board shared with LAVA, held at the labgrid coordinator for a session, the way a
person holds it: `labgrid-client reserve --shell name=PLACE` (a token), wait until the
coordinator allocates the place to it, `-p +TOKEN acquire`, and at the end, also after
an error, Ctrl-C or SIGTERM, `release` and `cancel-reservation` (a process killed with
SIGKILL leaves its acquisition: the coordinator and `boardlab lab status` name it). LAVA's arbiter (boardlab.lab.
arbiter) sees the reservation as a person's: it sets the LAVA device to Maintenance,
lets the running job end, releases the place, and takes it back after the hold. Without
it a command driving the board through its local environment (lab check, nightly, a
bisect step, compare, a sweep) and a LAVA job could power the same board at once.

Shared with LAVA (`shared_with_lava`), one of:
- the board's lab host is a real one with a LAVA worker (facts.labhosts.arbitrated: the
  management host's arbiter unit holds exactly those boards, lab.units), or
- this host's LAVA server (`boardlab lava server up`, the virtual lab's) runs its arbiter
  and the arbiter's state file names the board (its last round's `places`).
A shared board is never driven past the coordinator: a coordinator that does not answer
is one line (a lab error), not a bypass. A board that is not shared needs no coordinator.

The holder, as the coordinator shows it: `<host>/boardlab-<command>.<user>`. A hold the
coordinator does not grant within WAIT_S (BOARDLAB_PLACE_WAIT_S) ends in one line naming
who holds the place; while it waits, a progress line says who."""
from __future__ import annotations

import contextlib
import getpass
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from boardlab.errors import InputError, LabFault
from boardlab.facts.board import Board
from boardlab.facts.labfacts import ARBITER_STATE, load_lab
from boardlab.facts.labhosts import arbitrated, lab_host_of
from boardlab.facts.places import client
from boardlab.log import progress
from boardlab.net import tcp_open
from boardlab.procs import running

# this host's arbiter state; the local LAVA server's supervisor PID file beside it while up
LOCAL_ARBITER_STATE = ARBITER_STATE
# a LAVA job ends within its own timeouts (an hour or so); a person's hold may last the day
WAIT_S = 2 * 3600.0
POLL_S = 30.0       # each labgrid-client call is a Python process of ~0.5 CPU-s (DESIGN.md 10)
FIRST_POLL_S = 5.0  # a free place is allocated at once: no progress line for it
SAY_AGAIN_S = 600.0
_HELD: set = set()  # the places this process holds: a nested session holds nothing more
HELD_ENV = "BOARDLAB_PLACES_HELD"   # ... nor does a child (the sweep's suites: a pytest of their own)


def _held_here_or_above() -> set:
    return _HELD | {p for p in os.environ.get(HELD_ENV, "").split(",") if p}


# who may power a board through LAVA's guarded power commands (boardlab.lab.powerguard):
# `boardlab lava run` names its own hold, or UNSHARED for a board LAVA does not share
POWER_OWNER_ENV = "BOARDLAB_POWER_OWNER"
UNSHARED = "-"


class PlaceHoldError(LabFault):
    """A shared board's place could not be taken at the coordinator."""
    part = "coordinator"


class PlaceBusy(PlaceHoldError):
    """Someone else held the place for longer than the hold waits."""
    part = "board"


def shared_with_lava(board: Board, arbiter_state: Path | None = None) -> str | None:
    """Why LAVA shares the board (one line), None when it does not."""
    host = lab_host_of(board)
    if host is not None and arbitrated(host):
        return f"lab host {host.name} is a real one with a LAVA worker ({host.path})"
    state = Path(arbiter_state or LOCAL_ARBITER_STATE)
    try:
        last = json.loads(state.read_text() or "{}").get("round") or {}
    except (OSError, ValueError):
        return None
    try:
        supervisor = int((state.parent / "arbiter.pid").read_text())
    except (OSError, ValueError):
        supervisor = 0
    alive = any(pid and running(int(pid)) for pid in (last.get("pid"), supervisor))
    if alive and board.name in last.get("places", [board.name]):   # an older arbiter's: every board
        return f"this host's LAVA server holds it through its arbiter ({state})"
    return None


def owner(command: str) -> dict:
    """labgrid-client's owner variables: boardlab, the command and who ran it."""
    return {"LG_HOSTNAME": socket.gethostname(), "LG_USERNAME": f"boardlab-{command}.{getpass.getuser()}"}


class PlaceHold:
    """One reservation of one place, taken and given back (place_held runs it)."""

    def __init__(self, coordinator: str, place: str, command: str, why: str, echo=progress):
        self.coordinator, self.place, self.why, self.echo = coordinator, place, why, echo
        self.env = owner(command)
        self.token: str | None = None
        self.acquired = False

    @property
    def holder(self) -> str:
        return f"{self.env['LG_HOSTNAME']}/{self.env['LG_USERNAME']}"

    def _fail(self, what: str, r=None, busy: bool = False):
        out = " / ".join(((r.stderr or r.stdout) if r is not None else "").strip().splitlines()[-2:])
        cls = PlaceBusy if busy else PlaceHoldError
        raise cls(f"board {self.place} is shared with LAVA ({self.why}): {what}"
                  + (f" (labgrid-client: {out})" if out else "")) from None

    def _client(self, *args, place=None, timeout=60):
        try:
            return client(self.coordinator, *args, place=place, check=False, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            self._fail(f"the labgrid coordinator {self.coordinator} did not answer within {timeout:g} s; "
                       f"not bypassed")
        except OSError as e:
            self._fail(f"labgrid-client: {e}; not bypassed")

    def _unreachable(self, r=None):
        self._fail(f"its place is taken at the labgrid coordinator {self.coordinator}, which is not "
                   f"reachable (is it running?); not bypassed", r)

    def reserve(self):
        host, _, port = self.coordinator.rpartition(":")
        if not tcp_open(int(port), host, timeout=2.0):
            self._unreachable()
        r = self._client("reserve", "--shell", f"name={self.place}")
        token = re.search(r"LG_TOKEN=(\S+)", r.stdout or "")
        if r.returncode != 0 and "connect to coordinator" in (r.stderr or ""):
            self._unreachable(r)
        if r.returncode != 0 or not token:
            self._fail(f"no reservation of name={self.place} at {self.coordinator}", r)
        self.token = token.group(1)

    def state(self, timeout: float) -> str:
        """The reservation's state after `labgrid-client wait` (which keeps it alive: a
        reservation nobody polls expires in a minute) returned or timed out."""
        try:
            r = client(self.coordinator, "wait", self.token, check=False, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "waiting"
        states = re.findall(r"state: (\w+)", r.stdout or "")
        if r.returncode != 0 or not states:
            self._fail(f"reservation {self.token} at {self.coordinator} is gone", r)
        return states[-1]

    def held_by(self) -> str:
        r = self._client("show", place=self.place)
        acquired = re.search(r"^\s*acquired: (.+)$", r.stdout or "", re.M)
        if acquired and acquired.group(1).strip() != "None":
            return acquired.group(1).strip()
        reserved = re.search(r"^\s*reservation: (\S+)", r.stdout or "", re.M)
        return f"nobody yet (allocated to reservation {reserved.group(1)})" if reserved else "nobody"

    def wait(self, wait_s: float):
        """Until the coordinator allocates the place to the reservation; PlaceBusy after
        wait_s, naming the holder."""
        start = time.monotonic()
        said, said_at, chunk = None, 0.0, FIRST_POLL_S
        while True:
            got = self.state(chunk)
            if got == "allocated":
                return
            if got != "waiting":
                self._fail(f"reservation {self.token} at {self.coordinator} is {got}, not allocated")
            holder, now = self.held_by(), time.monotonic()
            if now - start >= wait_s:
                self._fail(f"held by {holder} at {self.coordinator}: not free after {(now - start) / 60:.0f} "
                           f"min of waiting (BOARDLAB_PLACE_WAIT_S); ask them, or try later", busy=True)
            if holder != said or now - said_at >= SAY_AGAIN_S:
                self.echo(f"waiting for {self.place}: held by {holder}")
                said, said_at = holder, now
            chunk = max(1.0, min(POLL_S, wait_s - (now - start)))

    def acquire(self):
        r = self._client("acquire", place=f"+{self.token}")
        if r.returncode != 0:
            self._fail(f"acquiring its place at {self.coordinator} with reservation {self.token} failed", r)
        self.acquired = True
        self.echo(f"{self.place}: held at {self.coordinator} as {self.holder}")

    def end(self):
        """The place released and the reservation cancelled; a failure said, never raised
        (it must not hide the session's own error)."""
        try:
            if self.acquired:
                r = self._client("release", place=self.place)
                if r.returncode != 0:
                    self.echo(f"{self.place}: not released at {self.coordinator}: "
                              f"{' / '.join((r.stderr or r.stdout).strip().splitlines()[-1:])}")
            if self.token:
                self._client("cancel-reservation", self.token)
        except PlaceHoldError as e:
            self.echo(f"{self.place}: {e}")


def wait_s() -> float:
    text = os.environ.get("BOARDLAB_PLACE_WAIT_S") or ""
    try:
        return float(text or WAIT_S)
    except ValueError:
        raise InputError(f"BOARDLAB_PLACE_WAIT_S={text!r}: seconds to wait for a shared board, a number") from None


@contextlib.contextmanager
def _terminated_as_exit():
    """SIGTERM (systemd stopping a timer's run, a kill) as SystemExit while the place is
    held, so the hold is given back: an acquisition outlives its process at the
    coordinator, and a person's hold is never taken by the arbiter. Only where the signal
    is Python's default, from the main thread; put back after."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def leave(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def place_held(board: Board, command: str, echo=progress, arbiter_state: Path | None = None):
    """The board's place held for the block when LAVA shares the board (-> the PlaceHold),
    else nothing taken (-> None). PlaceHoldError (a lab error, one line) when the
    coordinator does not answer or the place is not had in time."""
    why = shared_with_lava(board, arbiter_state)
    if why is None or board.name in _held_here_or_above():
        yield None
        return
    hold = PlaceHold(load_lab().coordinator, board.name, command, why, echo)
    with _terminated_as_exit():
        with _holding(hold):
            yield hold


@contextlib.contextmanager
def _holding(hold: PlaceHold):
    limit = wait_s()
    try:
        hold.reserve()
        hold.wait(limit)
        hold.acquire()
        _HELD.add(hold.place)
        os.environ[HELD_ENV] = ",".join(sorted(_held_here_or_above()))
        yield
    finally:
        _HELD.discard(hold.place)
        os.environ.pop(HELD_ENV, None) if not _HELD else os.environ.__setitem__(HELD_ENV, ",".join(sorted(_HELD)))
        hold.end()
