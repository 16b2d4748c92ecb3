"""One board, two schedulers: LAVA's jobs and labgrid's people share each board with no
race and no hand step. The coordinator is the one authority over a board: LAVA holds the
board's place too.

While LAVA may use a board, the arbiter keeps the board's place acquired as LAVA's
(owner `lava/<board>`), so nobody else can acquire it (labgrid's AcquirePlace refuses a
place another owner holds; power and console need the place). A person reserves the
board (`labgrid-client reserve --wait board=NAME`). The arbiter sees the reservation
waiting for that place and sets the LAVA device to Maintenance: LAVA starts no new job
there, and a queued job waits (it is neither failed nor lost), while a running job
goes on. Once the device is idle, the arbiter releases the place and the coordinator
allocates it to the reservation. When the person releases it (or their reservation
expires), the arbiter acquires it again and only then sets the device Good: a LAVA job
never runs on a board whose place is not LAVA's, and a person never holds a board LAVA
is using. A board LAVA has as Bad or Retired is not LAVA's to hold; it is left to people.

Why not the other ways (DESIGN.md 9.2): a LAVA job acquiring the place itself has no
hook before LAVA picks the device (its power-on command runs after the job has started,
so it could only fail the job, not make it wait); a person setting Maintenance by hand
is the step this replaces; a waiting labgrid reservation protects nothing by itself.

`decide` is the whole rule (one function, tested alone); `Arbiter` reads the coordinator
and LAVA, applies it, and repeats every POLL_S."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from boardlab.facts.places import client
from boardlab.files import atomic_write
from boardlab.lab.glance import parse_place_show
from boardlab.lava.errors import LavaError
from boardlab.lava.server import lavacli
from boardlab import yamltext

LAVA_USER = "lava"
POLL_S = 1.0


@dataclass(frozen=True)
class Seen:
    holder: str | None          # who has the place acquired ('host/user'), None: nobody
    asked: bool                 # a reservation of someone else waits for it or was allocated it
    health: str                 # LAVA's health of the device: Good, Unknown, Bad, Maintenance, ...
    busy: bool                  # a LAVA job (or health check) runs on it
    ours: str                   # the holder string of LAVA's own acquisition
    set_aside: bool = False     # the arbiter set Maintenance (an admin's stays)

    @property
    def lava_holds(self) -> bool:
        return self.holder == self.ours


def decide(seen: Seen) -> str | None:
    """The next step for one board: 'acquire' (the place for LAVA), 'restore' (LAVA's
    health as it was: it may schedule again), 'maintenance' (LAVA starts nothing new),
    'release' (the place to the person waiting), or None."""
    if seen.health in ("Bad", "Retired", "Looping"):   # not LAVA's to use: people may have it
        return "release" if seen.lava_holds and not seen.busy else None
    if seen.lava_holds:
        if seen.asked:
            if seen.health != "Maintenance":
                return "maintenance"
            return None if seen.busy else "release"
        return "restore" if seen.set_aside else None
    if seen.holder is None and not seen.asked:
        return "acquire"
    # a person has it, or it is allocated to one: LAVA must not start anything
    return None if seen.health == "Maintenance" or seen.busy else "maintenance"


def reservation_asks(reservations: list[dict], place_tags: dict, place: str, ours: str) -> bool:
    """Whether a reservation of someone else waits for this place or holds it: allocated
    to it, or waiting with filters the place's tags match."""
    for r in reservations:
        if r.get("owner") == ours or r.get("state") not in ("waiting", "allocated", "acquired"):
            continue
        if place in (r.get("allocations") or {}).values():
            return True
        if r.get("state") == "waiting" and any(
                all(place_tags.get(k) == v for k, v in f.items()) for f in (r.get("filters") or {}).values()):
            return True
    return False


def parse_reservations(text: str) -> list[dict]:
    """`labgrid-client reservations` -> [{token, owner, state, filters: {name: {k: v}},
    allocations: {name: place}}], from its own text."""
    out, section = [], None
    for line in text.splitlines():
        if line.startswith("Reservation '"):
            out.append({"token": line.split("'")[1], "filters": {}, "allocations": {}})
            continue
        if not out:
            continue
        stripped = line.strip()
        if line.startswith("  ") and not line.startswith("    "):
            key, _, value = stripped.partition(":")
            section = key if key in ("filters", "allocations") else None
            if section is None:
                out[-1][key] = value.strip()
        elif section and ":" in stripped:
            name, _, value = stripped.partition(":")
            value = value.strip()
            out[-1][section][name] = (dict(kv.split("=", 1) for kv in value.split())
                                      if section == "filters" else value)
    return out


class Arbiter:
    """Applies decide() to each LAVA board of the lab, every POLL_S, through the
    coordinator (labgrid-client, as LAVA's own user) and LAVA (lavacli). What it set
    aside (Maintenance) and the health before is kept in its state file, so a restart
    of the arbiter restores it."""

    OWNER = {"LG_HOSTNAME": f"{LAVA_USER}-arbiter", "LG_USERNAME": LAVA_USER}

    def __init__(self, coordinator: str, identity: str | None, boards: dict[str, dict],
                 state_file: Path, echo=print):
        self.coordinator, self.identity, self.boards, self.echo = coordinator, identity, boards, echo
        self.state_file = Path(state_file)
        self.aside = json.loads(self.state_file.read_text()) if self.state_file.exists() else {}
        self.ours = f"{self.OWNER['LG_HOSTNAME']}/{self.OWNER['LG_USERNAME']}"

    def _client(self, *args, place=None) -> subprocess.CompletedProcess:
        return client(self.coordinator, *args, place=place, check=False, env=self.OWNER)

    def _device(self, board: str) -> dict:
        return yamltext.load(lavacli(self.identity, "devices", "show", board, "--yaml")) or {}

    def seen(self, board: str, reservations: list[dict]) -> Seen:
        place = parse_place_show(self._client("show", place=board).stdout)
        dev = self._device(board)
        return Seen(place["acquired"], reservation_asks(reservations, self.boards[board], board, self.ours),
                    dev.get("health", ""), bool(dev.get("current_job")), self.ours, board in self.aside)

    def act(self, board: str, step: str) -> None:
        if step in ("acquire", "release"):
            r = self._client(step, place=board)
            self.echo(f"{board}: {step} for LAVA: {(r.stdout or r.stderr).strip()}")
        elif step == "maintenance":
            self.aside[board] = self._device(board).get("health") or "Good"
            lavacli(self.identity, "devices", "update", board, "--health", "MAINTENANCE")
            self.echo(f"{board}: asked for in labgrid: LAVA starts nothing new on it")
        elif step == "restore":
            health = self.aside.pop(board)
            lavacli(self.identity, "devices", "update", board, "--health", health.upper())
            self.echo(f"{board}: LAVA's again ({health})")
        atomic_write(self.state_file, json.dumps(self.aside))

    def round(self) -> list[tuple[str, str]]:
        reservations = parse_reservations(self._client("reservations").stdout)
        done = []
        for board in self.boards:
            step = decide(self.seen(board, reservations))
            if step:
                self.act(board, step)
                done.append((board, step))
        return done

    def run(self, stop=lambda: False) -> None:
        while not stop():
            try:
                self.round()
            except (LavaError, subprocess.SubprocessError, OSError) as e:   # next round tries again
                self.echo(f"arbiter: {e}")
            time.sleep(POLL_S)

    def give_back(self) -> None:
        """On stop: LAVA's places released (a stopped LAVA must not keep people out), and
        what the arbiter set aside restored."""
        for board in self.boards:
            if parse_place_show(self._client("show", place=board).stdout)["acquired"] == self.ours:
                self.act(board, "release")
            if board in self.aside:
                self.act(board, "restore")


def place_tags(board: str) -> dict:
    """The place's tags, as the coordinator has them (places/<host>/places.yaml)."""
    from boardlab.facts.board import PLACES_DIR, load_board
    places = yamltext.load((PLACES_DIR / load_board(board).lab_host / "places.yaml").read_text()) or {}
    return places[board]["tags"]


def main(argv=None) -> int:
    import argparse
    import signal
    from boardlab.facts.labfacts import load_lab
    ap = argparse.ArgumentParser(description="LAVA's boards held at the labgrid coordinator; people reserve them")
    ap.add_argument("boards", nargs="+")
    ap.add_argument("--identity", default=None, help="lavacli identity (an admin's: it sets device health)")
    ap.add_argument("--state", required=True, help="where what it set aside is kept")
    args = ap.parse_args(argv)
    arbiter = Arbiter(load_lab().coordinator, args.identity, {b: place_tags(b) for b in args.boards},
                      Path(args.state), echo=lambda m: print(m, flush=True))
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    arbiter.echo(f"arbiter: boards {', '.join(args.boards)} at {arbiter.coordinator}, as {arbiter.ours}")
    arbiter.run(stop=lambda: bool(stopping))
    arbiter.give_back()
    return 0


if __name__ == "__main__":
    sys.exit(main())
