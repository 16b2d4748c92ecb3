"""The arbiter's rules, each one pure function over what it sees (tested alone, with
restarts, crashes, a coordinator restart and an admin's hand in the cases): the step for
a board (`decide`), the health a board gets back (`health_after`, `observe`), what a
finished job means for its board (`after_job`), what the state file said after a crash
(`load_state`), overlaps and holds past the lab's limit (`overlaps`, `overdue`).
boardlab.lab.arbiter says why the rules are these."""
from __future__ import annotations

import json
from dataclasses import dataclass

from boardlab.judge.health import failed_job, unknown_after

LAVA_OWNER = "lava-arbiter/lava"         # the holder string of LAVA's own acquisitions
USABLE = ("Good", "Unknown", "Looping")  # healths LAVA schedules on: LAVA's to hold
UNAVAILABLE = ("Bad", "Retired")         # not LAVA's to use: left to people


@dataclass(frozen=True)
class Seen:
    holder: str | None          # who has the place acquired ('host/user'), None: nobody
    asked: bool                 # a reservation of someone else waits for it or was allocated it
    health: str                 # LAVA's health of the device: Good, Unknown, Bad, Maintenance, ...
    busy: bool                  # a LAVA job (or health check) runs on it
    ours: str = LAVA_OWNER      # the holder string of LAVA's own acquisition
    set_aside: bool = False     # the arbiter set this Maintenance (an admin's stays)
    checking: bool = False      # the job running is a health check
    by_name: bool = False       # the reservation asking names this board (name=, or allocated to it)

    @property
    def lava_holds(self) -> bool:
        return self.holder == self.ours

    @property
    def person_holds(self) -> bool:
        return self.holder is not None and self.holder != self.ours

    @property
    def overlap(self) -> bool:
        """A person holds the place while a LAVA job runs on its device."""
        return self.person_holds and self.busy


def decide(seen: Seen) -> str | None:
    """The next step for one board: 'forget' (the Maintenance it set was changed by
    someone else: theirs stands), 'cancel' (the LAVA job of an overlap), 'acquire' (the
    place for LAVA; a Bad board's too, so a reservation by tags never gets it), 'restore'
    (LAVA's health back: health_after), 'maintenance' (LAVA starts nothing new), 'release'
    (the place to the person waiting; a Bad board only to one who names it), or None."""
    if seen.set_aside and seen.health != "Maintenance":
        return "forget"
    if seen.overlap:
        return "cancel"
    if seen.holder is None and seen.busy:       # LAVA runs on a place nobody holds: re-taken
        return "acquire"
    if seen.health == "Bad" and not seen.by_name:   # not handed to a reservation by tags: kept
        return "acquire" if seen.holder is None else None
    if seen.health in UNAVAILABLE:   # Retired, or a Bad board someone asks for by name (to mend it)
        return "release" if seen.lava_holds and not seen.busy else None
    if seen.lava_holds:
        if seen.asked:
            if seen.health != "Maintenance":
                return None if seen.checking else "maintenance"   # a check's result is not lost
            return None if seen.busy else "release"
        return "restore" if seen.set_aside else None
    if seen.holder is None and not seen.asked:
        return "acquire"
    # a person has it, or it is allocated to one: LAVA must not start anything
    return None if seen.health == "Maintenance" else "maintenance"


def aside_entry(before: str, touched: bool = False) -> dict:
    """What the state file keeps of a Maintenance the arbiter set: the health before, and
    whether the board was used meanwhile: its place released to a person (a hold shorter
    than a round is not seen: the release counts), a person seen holding it, a job on it
    failed."""
    return {"before": before or "Unknown", "touched": touched}


def health_after(entry: dict) -> str:
    """The health a board the arbiter set aside gets back: Unknown (LAVA checks it before
    any job) once anything happened to it; as before only when nothing did (the
    reservation went before the place was released to it). An admin's Looping goes on
    looping."""
    before = entry.get("before") or "Unknown"
    if before == "Looping":
        return "Looping"
    if entry.get("touched") or before not in ("Good", "Unknown"):
        return "Unknown"
    return before


def observe(entry: dict | None, seen: Seen) -> dict | None:
    """The entry after a round's look: touched once a person holds the board."""
    if entry is not None and seen.person_holds and not entry.get("touched"):
        return {**entry, "touched": True}
    return entry


def after_job(job: dict, health: str, set_aside: bool) -> str | None:
    """A job ended on a board: 'unknown' (set the board Unknown now: LAVA checks it before
    its next job), 'touched' (the Maintenance the arbiter set comes back as Unknown), or
    None. A failed job (Incomplete, Canceled) counts whoever submitted it, by the one rule
    `lava submit --wait` applies too (judge.health.unknown_after); a failed health check
    has set the board Bad itself; an admin's health is left alone."""
    if not failed_job(job):
        return None
    if unknown_after(job, health):
        return "unknown"
    return "touched" if health == "Maintenance" and set_aside else None


def load_state(text: str | None) -> dict:
    """The state file -> {aside: {board: entry}, jobs: {board: job id}, overlaps: [...]}.
    An older file ({board: health before}) is read as touched: what happened since is not
    known."""
    data = json.loads(text) if text and text.strip() else {}
    if data and "aside" not in data:
        data = {"aside": {b: aside_entry(h, touched=True) for b, h in data.items()}}
    return {"aside": dict(data.get("aside") or {}), "jobs": dict(data.get("jobs") or {}),
            "overlaps": list(data.get("overlaps") or [])}


def overlaps(places: dict, devices: dict, ours: str = LAVA_OWNER) -> list[dict]:
    """Each board a person holds while a LAVA job runs on it: {board, holder, job}."""
    out = []
    for board, place in sorted(places.items()):
        dev = devices.get(board) or {}
        if dev.get("current_job") and place.get("acquired") not in (None, ours):
            out.append({"board": board, "holder": place["acquired"], "job": dev["current_job"]})
    return out


def overdue(place: dict, now: float, limit_h: float, ours: str = LAVA_OWNER) -> float | None:
    """Hours a person has held the place, when more than the lab's limit (LAVA's own hold
    is meant to last); None otherwise. The hold started at the place's last change."""
    if place.get("acquired") in (None, ours) or place.get("changed") is None:
        return None
    hours = (now - place["changed"]) / 3600
    return hours if hours > limit_h else None


def health_changed_by(transitions: list[dict], user: str) -> dict | None:
    """The newest health change (a transition 'A → B'), when someone other than user made
    it: their word, which user's own rule must not undo; None when user's is the newest."""
    newest = next((t for t in transitions if "→" in t["change"]), None)
    return newest if newest and newest["user"] != user else None


def held_after(places: dict, done: list, boards, ours: str = LAVA_OWNER) -> list[str]:
    """The places LAVA holds after a round: those held when it looked, with the round's own
    acquisitions and without its releases (a coordinator restart gives them back to LAVA:
    boardlab.lab.coordinator)."""
    held = {b for b in boards if (places.get(b) or {}).get("acquired") == ours}
    return sorted((held | {b for b, step in done if step == "acquire"}) - {b for b, step in done if step == "release"})


def asks(reservations: list[dict], tags_of: dict, devices: dict, ours: str, aside: dict) -> dict[str, bool]:
    """{board: asked by name} of the boards people's reservations ask for, one board per
    reservation: one allocated to it, or named (name=BOARD, as boardlab's own hold asks:
    sharing.placehold), or, for filters by tags, ONE board that LAVA can use and that matches:
    the one already set aside for it, else the first idle one. While every match runs a
    job none is asked: the first that frees is (not all of them set aside for a person who
    may walk away). A Bad or Retired board is never picked by tags (it is kept from them)."""
    out, taken = {}, set()
    for r in reservations:
        if r.get("owner") == ours or r.get("state") not in ("waiting", "allocated", "acquired"):
            continue
        for board in (r.get("allocations") or {}).values():
            if board in tags_of:
                out[board] = True
                taken.add(board)
        if r.get("state") != "waiting":
            continue
        for f in (r.get("filters") or {}).values():
            match = [b for b in sorted(tags_of) if all({**tags_of[b], "name": b}.get(k) == v for k, v in f.items())]
            if "name" in f:
                out.update({b: True for b in match})
                taken.update(match)
                continue
            usable = [b for b in match if b not in taken and (devices.get(b) or {}).get("health") not in UNAVAILABLE]
            pick = next((b for b in usable if b in aside), None) or next(
                (b for b in usable if not (devices.get(b) or {}).get("current_job")), None)
            if pick:
                out.setdefault(pick, False)
                taken.add(pick)
    return out
