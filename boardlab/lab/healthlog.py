"""Each board's health history, kept on the lab's management host: every health check's
figures (`boardlab lab check`), each accepted level (`boardlab lab accept`), judged by
boardlab.judge.boardhealth against the board's own level. A board that drifts is
quarantined where people and LAVA look: LAVA's device set to Maintenance with the reason
as its description (an admin's word to the arbiter: it never undoes it), the labgrid
place's comment says it, `lab status` shows "drifting since T: metric +x %". Accepting
its new level (repaired, or re-baselined) starts its reference again, says why in its
history, and hands the board back: LAVA's health Unknown (its health check runs before
any job), the place's comment cleared.

One file per board, JSON lines, oldest first: STATE_DIR/health/<board>.jsonl."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import Board, load_board
from boardlab.judge import boardhealth
from boardlab.measure import clocks

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
           at: str | None = None, qemu_clock: str | None = None) -> boardhealth.Health:
    """A passed health check's figures kept, then the board judged against its own level."""
    values = {k: float(v) for k, v in figures.items() if v is not None}
    units = {k: ("kB" if k.endswith("_kb") else "s") for k in values}
    entry = {"at": at or now(), "kernel": kernel, "figures": values,
             "clocks": {k: clocks.metric_clock(k.split(".")[0], k.split(".", 1)[1], units[k], board, qemu_clock)
                        for k in values},
             "host": clocks.this_host()["id"]}
    _append(board.name, entry, directory)
    return boardhealth.judge(load(board.name, directory), board)


def health_of(board: str, directory: Path | None = None) -> boardhealth.Health | None:
    """The board's health now (None: no check kept)."""
    history = load(board, directory)
    return boardhealth.judge(history, load_board(board)) if history else None


def accept(board: str, reason: str, directory: Path | None = None) -> None:
    if not reason.strip():
        raise InputError("--reason: say why the board's new level is accepted (repaired, re-baselined)")
    load_board(board)   # an unknown board: one line
    _append(board, {"at": now(), "accepted": reason.strip()}, directory)


def quarantine_line(board: str, health: boardhealth.Health) -> str:
    return f"boardlab: {board} quarantined: {health.line()} (`boardlab lab accept {board} --reason ...` takes it back)"


def tell_lab(board: str, description: str | None, health: str, identity: str | None,
             coordinator: str | None, echo=print) -> None:
    """LAVA's device (health and description) and the labgrid place's comment, each where
    it answers; what did not is said, not raised: the board's history holds the verdict."""
    from boardlab.facts.places import client
    from boardlab.lava.server import lavacli
    if identity:
        try:
            lavacli(identity, "devices", "update", board, "--health", health,
                    "--description", description or "")
            echo(f"  LAVA: {board} {health}" + (f" ({description})" if description else ""))
        except Exception as e:   # a lab without LAVA, or LAVA down: said
            echo(f"  LAVA not told ({str(e).splitlines()[0] if str(e) else type(e).__name__})")
    if coordinator:
        try:
            r = client(coordinator, "set-comment", description or "", place=board, check=False, timeout=20)
            echo(f"  place {board}: comment " + ("set" if r.returncode == 0 else
                                                 f"not set ({(r.stderr or r.stdout).strip()[-200:]})"))
        except (OSError, subprocess.SubprocessError) as e:
            echo(f"  place {board}: comment not set ({e})")
