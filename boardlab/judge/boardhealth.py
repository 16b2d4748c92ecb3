"""A board's performance health: the figures of each of its health checks kept in the
board's own history, and the latest checks judged against the board's own earlier ones
by the one judge (decide), so that a board that aged (a throttling SoC, a worn flash, a
slower NFS server) is told from a kernel that regressed. A health check that passes its
bands can still show the board drifting: 10 % slower than its own last month is within
the bands LAVA's check asserts.

The history is a list of entries, oldest first: a check ({"at", "kernel", "figures":
{key: value}, "clocks": {key: clock}}) or an accepted level ({"at", "accepted": reason}:
a repaired or re-baselined board starts a new level; only checks since it are its
reference; a check found drifting when kept says so, "drifting": true, and is no part of
the reference, so a drift stays until a new level is accepted). One rule (`judge`): the latest check (an exact figure decides in one), else
the latest RECENT together, against the REFERENCE_MAX checks of the level before those,
once there are REFERENCE_MIN of them; a figure the
judge finds changed, either way, is a drift (a board that got faster changed too: its
figures are no longer comparable with its baselines'). A host-bound figure is never
found changed across sessions (decide): the board's own clock and sizes are what show a
board's change."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import Board, load_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue, clocks, kernelid

REFERENCE_MIN = 5     # checks of the board's level before its checks are judged (until then: learning)
REFERENCE_MAX = 20    # the most recent checks of its level that make its reference
RECENT = 2            # the latest checks judged together: a change is seen within two checks
LEARNING, STEADY, DRIFTING = "learning", "steady", "drifting"


@dataclass(frozen=True)
class Drift:
    key: str
    delta_pct: float
    since: str            # when it was first measured: the level's first check found drifting
    why: str

    def line(self) -> str:
        return f"{self.key} {self.delta_pct:+.1f} %"


@dataclass(frozen=True)
class Health:
    state: str            # LEARNING, STEADY or DRIFTING
    drifts: tuple = ()
    checks: int = 0       # checks of the current level
    unknown: tuple = ()   # figures the judge could not decide, with why

    def line(self) -> str:
        if self.state == DRIFTING:
            return f"drifting since {self.drifts[0].since}: " + ", ".join(d.line() for d in self.drifts)
        if self.state == LEARNING:
            return f"learning its level: {self.checks} of {REFERENCE_MIN + RECENT} checks"
        return f"steady over {self.checks} checks"


def level(history: list[dict]) -> list[dict]:
    """The checks of the board's current level: after its last accepted entry."""
    start = max((i + 1 for i, e in enumerate(history) if "accepted" in e), default=0)
    return [e for e in history[start:] if e.get("figures")]


def judge(history: list[dict], board=None) -> Health:
    """The one rule: is the board drifting from its own level?"""
    checks = level(history)
    if len(checks) < REFERENCE_MIN + RECENT:
        return Health(LEARNING, checks=len(checks))
    # a check found drifting when kept is no part of the level: the drift stays until a
    # new level is accepted, however many sick checks follow it
    reference = [c for c in checks[:-RECENT] if not c.get("drifting")][-REFERENCE_MAX:]
    drifts, unknown = [], []
    for key in sorted(checks[-1]["figures"]):
        a = [c["figures"][key] for c in reference if c["figures"].get(key) is not None]
        if len(a) < REFERENCE_MIN:
            continue
        clock = checks[-1].get("clocks", {}).get(key)
        # the latest check alone (an exact figure decides in one), else the latest two
        for recent in (checks[-1:], checks[-RECENT:]):
            v = decide(key, Figures(a, clock, stated=True),
                       Figures([c["figures"].get(key) for c in recent], clock), board)
            if v.outcome != vd.UNKNOWN:
                break
        if v.outcome in (vd.REGRESSED, vd.IMPROVED):   # since the first check of the level found drifting
            began = next((c["at"] for c in checks if c.get("drifting")), recent[0]["at"])
            drifts.append(Drift(key, v.delta_pct or 0.0, began, v.why))
        elif v.outcome == vd.UNKNOWN:
            unknown.append(f"{key}: {v.why}")
    return Health(DRIFTING if drifts else STEADY, tuple(drifts), len(checks), tuple(unknown))


# ---- the history, one file per board: JSON lines, oldest first (STATE_DIR/health/<board>.jsonl) ----

HEALTH_DIR = Path(os.environ.get("BOARDLAB_STATE_DIR", "/var/lib/boardlab")) / "health"


def path_of(board: str, directory: Path | None = None) -> Path:
    return (directory or HEALTH_DIR) / f"{board}.jsonl"


def load(board: str, directory: Path | None = None) -> list[dict]:
    p = path_of(board, directory)
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def _append(board: str, entry: dict, directory: Path | None = None) -> None:
    p = path_of(board, directory)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())


def record(board: Board, kernel: str, figures: dict, directory: Path | None = None,
           at: str | None = None, qemu_clock: str | None = None, identity: dict | None = None) -> Health:
    """A passed health check's figures kept, then the board judged against its own level.
    identity: the reference kernel's (measure.kernelid); when it is another kernel than the
    last check's (rebuilt with another config, moved to a new version), its figures begin
    a new level, said in the history: the kernel changed, not the board."""
    values = {k: float(v) for k, v in figures.items() if v is not None}
    entry = {"at": at or now(), "kernel": kernel, "figures": values,
             "clocks": {k: clocks.metric_clock(k.split(".")[0], k.split(".", 1)[1], catalogue.spec(k).unit,
                                               board, qemu_clock) for k in values},
             "host": clocks.this_host()["id"]}
    if identity:
        entry["kernel_identity"] = identity
        last = next((e for e in reversed(load(board.name, directory)) if e.get("figures")), None)
        two = last and kernelid.differs(last.get("kernel_identity"), identity)
        if two:
            _append(board.name, {"at": entry["at"], "accepted": f"the reference kernel {kernel} changed: "
                                 f"{two[0]} -> {two[1]}"}, directory)
    health = judge(load(board.name, directory) + [entry], board)
    if health.state == DRIFTING:
        entry["drifting"] = True
    _append(board.name, entry, directory)
    return health


def health_of(board: str, directory: Path | None = None) -> Health | None:
    """The board's health now (None: no check kept)."""
    history = load(board, directory)
    return judge(history, load_board(board)) if history else None


def accept(board: str, reason: str, directory: Path | None = None) -> None:
    if not reason.strip():
        raise InputError("--reason: say why the board's new level is accepted (repaired, re-baselined)")
    load_board(board)   # an unknown board: one line
    _append(board, {"at": now(), "accepted": reason.strip()}, directory)


def not_the_kernel(board: str | None) -> str | None:
    """Why a regression measured on the board is not bisected now: the board drifts from
    its own level, so the board changed, not the kernel. None: steady, or not known."""
    health = health_of(board) if board else None
    if health is None or health.state != DRIFTING:
        return None
    return (f"the board changed, not the kernel: {board} is {health.line()}; not bisected "
            f"until its level is accepted (`boardlab lab accept {board} --reason ...`)")
