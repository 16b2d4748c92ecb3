"""One board, two schedulers: LAVA's jobs and labgrid's people share each board with no
race and no hand step. The coordinator is the one authority over a board: LAVA holds the
board's place too.

While LAVA may use a board, the arbiter keeps the board's place acquired as LAVA's
(owner `lava-arbiter/lava`), so nobody else can acquire it (labgrid's AcquirePlace
refuses a place another owner holds; power and console need the place). A person
reserves the board (`labgrid-client reserve --wait board=NAME`), and so does boardlab's
own use of a shared board (name=NAME, boardlab.sharing.placehold): a person too. The arbiter sees the
reservation waiting for that place and sets the LAVA device to Maintenance: LAVA starts
no new job there, and a queued job waits (neither failed nor lost), while a running job
goes on. Once the device is idle, the arbiter releases the place and the coordinator
allocates it to the reservation. When the person releases it (or their reservation
expires), the arbiter acquires it again and only then gives LAVA its health back. A
board LAVA has as Bad or Retired is not LAVA's to hold; it is left to people.

The rules (boardlab.lab.rules, one pure function each):

- Reconciled every round, never silent. Each round reads what the arbiter holds, what
  LAVA runs and what people hold (one `labgrid-client -v places`, one `labgrid-client
  reservations`, one `lavacli devices list`) and logs what it finds at start. An
  *overlap* - a person holds a place while a LAVA job runs on its device - can come of
  a coordinator restart (it drops every acquisition, LAVA's too: DESIGN.md 10, and a
  person may take the free place before the arbiter re-takes it), of an admin's health
  change during a person's hold, or of an arbiter that was down. It is ended by one rule:
  the coordinator is the authority, so the person keeps the board and the LAVA job is
  cancelled (`lavacli jobs cancel`) and, unless it is a health check, submitted again
  (`lavacli jobs resubmit`: it waits for the board, so no job is lost), after the board is set to Maintenance (so LAVA
  starts nothing else there, and the cancelled job's end leaves the health alone: read
  in 2023.01's Device.testjob_signal, which sets health after a check only from Good,
  Unknown or Bad); the board comes back Unknown. A cancelled job is reported, not hidden: in the arbiter's
  log, its state file and `boardlab lab status`.
- Re-taken only from nobody. A place nobody holds is acquired for LAVA, at once when a
  LAVA job runs on it (the coordinator restarted under it); a place a person holds is
  never taken.
- Health never restored blindly. A Maintenance the arbiter set is kept in its state file
  (written before LAVA is told, removed after: a crash between leaves an entry the next
  round forgets). It comes back as Unknown (LAVA checks the board first) once anything
  happened meanwhile (its place released to a person, a person seen holding it, a job on
  it failed), as it was only when nothing did. Someone else's health change is never
  undone: a health other than Maintenance, or a transition in LAVA's own device log by
  another user after the arbiter's (an admin's Maintenance over the arbiter's reads the
  same), and the entry is forgotten. No Maintenance is set while a health check runs
  (LAVA would keep the check's result to itself). An admin's Looping comes back Looping.
- A failed job (Incomplete, Canceled) sets its board Unknown, whoever submitted it: the
  arbiter keeps each board's running job and, once it ends, asks LAVA how.
- On stop (boardlab.lab.arbiterd), LAVA's places are released, but the place of a board
  whose job runs when the arbiter alone stops; health is restored only on boards no
  person holds or is allocated (their entries stay in the state file for the next start).

Why not the other ways: docs/shared-lab.md ("One board, two schedulers"). `Arbiter` reads the coordinator and LAVA, applies the rules, and repeats every POLL_S
(each labgrid-client or lavacli call is a Python process of 0.3-0.5 CPU-s)."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path

from boardlab.facts.places import client
from boardlab.files import atomic_write
from boardlab.lab import rules
from boardlab.lab.listings import parse_devices, parse_places, parse_reservations, waiting
from boardlab.lab.rules import LAVA_OWNER, Seen, decide
from boardlab.lava.errors import LavaError
from boardlab.lava.identities import identity_entry, role_user
from boardlab.lava.server import device_transitions, lavacli

POLL_S = 5.0
KEPT_OVERLAPS = 20


class Arbiter:
    """Applies the rules to each LAVA board of the lab, every POLL_S, through the
    coordinator (labgrid-client, as LAVA's own user) and LAVA (lavacli). Its state file
    keeps what it set aside, each board's running job, the overlaps it ended and its last
    round (when, its PID, its places: sharing.placehold reads them): a restart, or a crash,
    goes on from there."""

    OWNER = {"LG_HOSTNAME": LAVA_OWNER.split("/")[0], "LG_USERNAME": LAVA_OWNER.split("/")[1]}

    def __init__(self, coordinator: str, identity: str | None, boards: dict[str, dict],
                 state_file: Path, echo=print):
        self.coordinator, self.identity, self.boards, self.echo = coordinator, identity, boards, echo
        self.state_file = Path(state_file)
        self.state = rules.load_state(self.state_file.read_text() if self.state_file.exists() else None)
        self.ours = LAVA_OWNER
        self.lava_user = identity_entry(identity).get("username") or role_user("arbiter")
        self.started = False
        self._checks: dict = {}     # job id -> is a health check

    @property
    def aside(self) -> dict:
        return self.state["aside"]

    def _client(self, *args, place=None) -> subprocess.CompletedProcess:
        return client(self.coordinator, *args, place=place, check=False, env=self.OWNER)

    def _job(self, job_id) -> dict:
        return json.loads(lavacli(self.identity, "jobs", "show", str(job_id), "--json") or "{}")

    def _save(self, last_round: dict | None = None) -> None:
        self.state.update({"round": last_round} if last_round else {})
        atomic_write(self.state_file, json.dumps(self.state, indent=1, sort_keys=True))

    def restore(self, board: str) -> None:
        """What it set aside given back (rules.health_after), unless someone else changed the
        health meanwhile (LAVA's device log): their word stands, the entry is forgotten."""
        word = rules.health_changed_by(device_transitions(self.identity, board), self.lava_user)
        entry = self.aside.pop(board)
        if word:
            self.echo(f"{board}: {word['user']} changed its health while set aside ({word['change']}): "
                      f"theirs stands, left as it is")
            return
        health = rules.health_after(entry)
        lavacli(self.identity, "devices", "update", board, "--health", health.upper())
        self.echo(f"{board}: LAVA's again ({health})")

    def look(self) -> tuple[dict, list, dict]:
        """Places, reservations, devices: three calls, whatever the number of boards."""
        r = self._client("-v", "places")
        if r.returncode != 0:
            raise subprocess.SubprocessError(f"labgrid-client places: {(r.stderr or r.stdout).strip()[-300:]}")
        reservations = parse_reservations(self._client("reservations").stdout)
        devices = parse_devices(lavacli(self.identity, "devices", "list", "--all", "--json"))
        return parse_places(r.stdout), reservations, devices

    def seen(self, board: str, place: dict, dev: dict, asks: dict) -> Seen:
        """asks: rules.asks of this round (the boards people's reservations ask for)."""
        job = dev.get("current_job")
        s = Seen(place.get("acquired"), board in asks, dev.get("health", ""), bool(job), self.ours,
                 board in self.aside, by_name=asks.get(board, False))
        if job and s.lava_holds and s.asked and s.health != "Maintenance":   # only then it matters
            if job not in self._checks:
                self._checks[job] = bool(self._job(job).get("health_check"))
            s = dataclasses.replace(s, checking=self._checks[job])
        return s

    def job_ended(self, board: str, dev: dict) -> None:
        """The failed-job rule, once for each job seen running that is no longer."""
        was, now = self.state["jobs"].get(board), dev.get("current_job")
        if was is not None and was != now:
            job = self._job(was)
            if job.get("health_check") and job.get("health") == "Complete":
                self.kept_check(board, was)
            step = rules.after_job(job, dev.get("health", ""), board in self.aside)
            if step == "unknown":
                lavacli(self.identity, "devices", "update", board, "--health", "UNKNOWN")
                self.echo(f"{board}: job {was} failed: Unknown (LAVA checks the board before its next job)")
            elif step == "touched":
                self.aside[board] = {**self.aside[board], "touched": True}
        if now is None:
            self.state["jobs"].pop(board, None)
        else:
            self.state["jobs"][board] = now

    def kept_check(self, board: str, job_id) -> None:
        """A passed health check's figures, read off its log, kept in the board's history
        and judged against the board's own level (lab.healthlog): a board drifting is
        quarantined (Maintenance, the reason its description; no entry of the arbiter's,
        so no round gives it back: `boardlab lab accept` does)."""
        from boardlab.facts.board import load_board
        from boardlab.judge import boardhealth
        from boardlab.lab import healthlog
        from boardlab.lava.health import figures_of_log
        try:
            b = load_board(board)
            unmeasured = {}
            figures = figures_of_log(lavacli(self.identity, "jobs", "logs", "--raw", str(job_id)), b.isa,
                                     unmeasured)
            for family, why in unmeasured.items():
                self.echo(f"{board}: health check {job_id}: {family} not measured ({why})")
            if not figures:
                return
            h = boardhealth.record(b, b.images.default_kernel, figures,
                                   identity=healthlog.reference_identity(b, b.images.default_kernel))
            self.echo(f"{board}: health check {job_id}: performance {h.line()}")
            if h.state == "drifting":   # LAVA's device and the place say it, as `lab check` has them
                self.echo(healthlog.quarantine_line(board, h))
                healthlog.tell_lab(board, healthlog.description(h), "MAINTENANCE", self.identity,
                                   self.coordinator, echo=self.echo)
        except Exception as e:   # the round goes on: its history misses one check, said
            self.echo(f"{board}: health check {job_id}'s figures not kept "
                      f"({str(e).splitlines()[0] if str(e) else type(e).__name__})")

    def act(self, board: str, step: str, seen: Seen, dev: dict) -> None:
        if step in ("acquire", "release"):
            r = self._client(step, place=board)
            if step == "release" and board in self.aside:
                self.aside[board] = {**self.aside[board], "touched": True}
            self.echo(f"{board}: {step} for LAVA: {(r.stdout or r.stderr).strip()}")
        elif step == "maintenance":
            self._set_aside(board, rules.aside_entry(seen.health))
            self.echo(f"{board}: asked for in labgrid: LAVA starts nothing new on it")
        elif step == "restore":
            self.restore(board)
        elif step == "forget":
            self.aside.pop(board)
            self.echo(f"{board}: its health was set {seen.health} by someone else: left as it is")
        elif step == "cancel":
            self.end_overlap(board, seen, dev)
        self._save()

    def _set_aside(self, board: str, entry: dict) -> None:
        self.aside[board] = entry
        self._save()   # before LAVA is told: a crash between leaves an entry the next round forgets
        lavacli(self.identity, "devices", "update", board, "--health", "MAINTENANCE")

    def end_overlap(self, board: str, seen: Seen, dev: dict) -> None:
        """A person holds the place while LAVA job runs on it: the board set aside (unless
        an admin's health stands), the job cancelled, reported."""
        job = dev.get("current_job")
        last = next((o for o in reversed(self.state["overlaps"]) if (o["board"], o["job"]) == (board, job)), None)
        if last and time.time() - last["at"] < 60:
            return   # cancelled already: LAVA is ending it
        if seen.health in rules.USABLE:
            self._set_aside(board, rules.aside_entry(seen.health, touched=True))
        elif board in self.aside:
            self.aside[board] = {**self.aside[board], "touched": True}
        lavacli(self.identity, "jobs", "cancel", str(job), check=False)
        again = ""   # a job is not lost: submitted again, it waits for the board (a check is LAVA's own)
        if not self._job(job).get("health_check"):
            again = lavacli(self.identity, "jobs", "resubmit", str(job), check=False).strip()
            again = f", submitted again as job {again}" if again.isdigit() else ", NOT submitted again"
        report = {"board": board, "holder": seen.holder, "job": job, "at": time.time(),
                  "ended": f"LAVA job {job} cancelled{again}: {seen.holder} holds the place"}
        self.state["overlaps"] = (self.state["overlaps"] + [report])[-KEPT_OVERLAPS:]
        self.echo(f"{board}: OVERLAP (the rule of last resort): {seen.holder} holds it while LAVA job {job} runs "
                  f"on it: job {job} cancelled{again}, the board comes back Unknown")

    def reconcile(self, places: dict, reservations: list, devices: dict) -> str:
        """One line: what the arbiter holds, what LAVA runs, what people hold and want."""
        mine = {b: places.get(b, {}) for b in self.boards}
        held = [b for b, p in mine.items() if p.get("acquired") == self.ours]
        people = [f"{b} ({p['acquired']})" for b, p in mine.items() if p.get("acquired") not in (None, self.ours)]
        running = [f"{b} (job {devices[b]['current_job']})" for b in self.boards
                   if (devices.get(b) or {}).get("current_job")]
        missing = [b for b in self.boards if b not in places or b not in devices]
        over = rules.overlaps(mine, devices, self.ours)
        return (f"holds {len(held)} of {len(self.boards)}; LAVA runs on {', '.join(running) or 'none'}; people "
                f"hold {', '.join(people) or 'none'}; {len(waiting(reservations))} reservation(s) waiting; "
                f"overlaps: {', '.join(o['board'] for o in over) or 'none'}"
                + (f"; not a place or not a device: {', '.join(missing)}" if missing else ""))

    def round(self) -> list[tuple[str, str]]:
        began = time.time()
        places, reservations, devices = self.look()
        if not self.started:
            self.echo(f"arbiter: at start: {self.reconcile(places, reservations, devices)}")
            self.started = True
        done, asks = [], rules.asks(reservations, self.boards, devices, self.ours, self.aside)
        for board in self.boards:
            place, dev = places.get(board), devices.get(board)
            if place is None or dev is None:
                continue
            self.job_ended(board, dev)
            seen = self.seen(board, place, dev, asks)
            if board in self.aside:
                self.aside[board] = rules.observe(self.aside[board], seen)
            step = decide(seen)
            if step:
                self.act(board, step, seen, dev)
                done.append((board, step))
        held = rules.held_after(places, done, self.boards, self.ours)   # what lab.coordinator keeps
        self._save({"at": time.time(), "pid": os.getpid(), "took_s": round(time.time() - began, 3),
                    "boards": len(self.boards), "places": sorted(self.boards), "held": held,
                    "waiting": len(waiting(reservations)),
                    "overlaps": rules.overlaps({b: places[b] for b in self.boards if b in places}, devices,
                                               self.ours)})
        return done

    def run(self, stop=lambda: False, poll: float = POLL_S) -> None:
        while not stop():
            try:
                self.round()
            except (LavaError, subprocess.SubprocessError, OSError, ValueError) as e:   # next round tries again
                self.echo(f"arbiter: {e}")
            time.sleep(poll)


