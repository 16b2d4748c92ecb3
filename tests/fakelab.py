"""A lab of places and LAVA devices at the subprocess boundary: `labgrid-client` and
`lavacli` answered as they answer (places printed by labgrid 26.0.1's own Place.show,
reservations by Reservation.show, devices as LAVA's scheduler.devices.list returns
them), and their verbs acting on it (acquire, release, health, cancel; reserve, wait,
cancel-reservation, show, with the coordinator's scheduling of waiting reservations onto
free places, by tags or name). No coordinator, no LAVA, no QEMU: for the arbiter's
tests, the place hold's (sharing.placehold) and bench/fifty_boards.py."""
import contextlib
import io
import itertools
import json
import os
import subprocess
import time

from labgrid.remote.common import Place, Reservation, ReservationState, ResourceMatch

REAL_RUN = subprocess.run


class FakeLab:
    def __init__(self, boards, lab_host="vlab"):
        now = time.time()
        self.lab_host = lab_host
        self.places = {b: {"acquired": None, "reservation": None, "changed": now,
                           "tags": {"board": b, "arch": "arm"}} for b in boards}
        self.reservations = []          # {token, owner, state, filters, allocations}
        self.devices = {b: {"hostname": b, "type": "qemu-arm", "health": "Good", "state": "Idle",
                            "current_job": None, "pipeline": True} for b in boards}
        self.jobs = {}                  # id -> lavacli jobs show's dict
        self.logs = {}                  # id -> its raw log (lavacli jobs logs --raw)
        self.descriptions = {}          # device -> its description, where set
        self.calls = []
        self.worker_state = "Online"
        self.up = True                  # the coordinator answers
        self.while_waiting = []         # what happens while `labgrid-client wait` waits (an arbiter's round)
        self._tokens = (f"TOKEN{n:05d}" for n in itertools.count(1))
        # LAVA's device log of health changes, newest first, as its device page shows it
        self.transitions = {b: [] for b in boards}
        self.lava_user = "boardlab-arbiter"   # whose lavacli calls these are (the arbiter's)

    def device_transitions(self, identity, device) -> list[dict]:
        """lava.server.device_transitions, from the fake's log."""
        self.calls.append(("page", device))
        return list(self.transitions[device])

    def set_health(self, board, health, user):
        """A health change, logged as LAVA logs one (xmlrpc api: 'Old → New (xmlrpc api)')."""
        old = self.devices[board]["health"]
        self.devices[board]["health"] = health
        self.transitions[board].insert(0, {"when": "Dec. 6, 7:31a.m.", "user": user,
                                           "change": f"{old} → {health} (xmlrpc api)"})

    # ---- what the world does -------------------------------------------------------
    def person_acquires(self, board, owner="vm/alice"):
        self.places[board].update(acquired=owner, changed=time.time())

    def reserve(self, board, owner="vm/alice", state="waiting", token="QDZJOR11YX"):
        self.reservations.append({"token": token, "owner": owner, "state": state,
                                  "filters": {"main": {"board": board}},
                                  "allocations": {"main": board} if state == "allocated" else {}})

    def start_job(self, board, job_id, health_check=False):
        self.jobs[job_id] = {"id": job_id, "state": "Running", "health": "Unknown", "health_check": health_check,
                             "actual_device": board, "submitter": "someone"}
        self.devices[board].update(current_job=job_id, state="Running")

    def end_job(self, job_id, health="Complete"):
        job = self.jobs[job_id]
        job.update(state="Finished", health=health)
        self.devices[job["actual_device"]].update(current_job=None, state="Idle")

    def restart_coordinator(self):
        """labgrid 26.0.1: every acquisition and reservation dropped (DESIGN.md 10)."""
        for p in self.places.values():
            p.update(acquired=None, reservation=None)
        self.reservations = []

    # ---- the subprocess boundary ----------------------------------------------------
    def run(self, cmd, *args, **kwargs):
        exe = os.path.basename(str(cmd[0]))
        if exe == "labgrid-client":
            self.calls.append(("labgrid-client", *cmd[3:]))
            env = kwargs.get("env") or {}
            out, rc = self.labgrid(list(cmd[3:]), f"{env.get('LG_HOSTNAME')}/{env.get('LG_USERNAME')}")
        elif exe == "lavacli":
            self.calls.append(tuple(cmd))
            args = list(cmd[1:])
            if args[:1] == ["-i"]:
                args = args[2:]
            out, rc = self.lavacli(args)
        else:
            return REAL_RUN(cmd, *args, **kwargs)
        return subprocess.CompletedProcess(cmd, rc, out, "" if rc == 0 else out)

    def labgrid(self, args, owner):
        if not self.up:   # labgrid 26.0.1's client when nothing listens at its address
            return ("ERROR:root:coordinator is unavailable: failed to connect to all addresses\n"
                    "Server error: Could not connect to coordinator"), 1
        self.schedule()
        place = None
        if args[:1] == ["-p"]:
            place, args = args[1], args[2:]
            if place.startswith("+"):   # a reservation token: the place allocated to it
                token = place[1:]
                place = next((p for p, r in self._allocated().items() if r["token"] == token), None)
                if place is None:
                    return f"labgrid-client: error: reservation token {token} matches nothing", 1
        verbose = args[:1] == ["-v"]
        args = args[1:] if verbose else args
        if args[:1] in (["reserve"], ["wait"], ["cancel-reservation"], ["show"]):
            return self.reservation_verb(args, owner, place)
        if args == ["places"]:
            return self.places_text(verbose), 0
        if args == ["reservations"]:
            return self.reservations_text(), 0
        if args == ["resources"]:
            return "".join(f"{self.lab_host}/{b}/{c}\n" for b in sorted(self.places)
                           for c in ("NetworkPowerPort", "NetworkSerialPort", "RemoteTFTPProvider")), 0
        p = self.places[place]
        if args == ["acquire"]:
            if p["acquired"] or any(r["allocations"].get("main") == place and r["owner"] != owner
                                    for r in self.reservations):
                return f"place {place} is already acquired by {p['acquired']}", 1
            p.update(acquired=owner, changed=time.time())
            self.schedule()
            return f"acquired place {place}", 0
        if args[:1] == ["set-comment"]:
            p["comment"] = " ".join(args[1:])
            return "", 0
        if args == ["release"]:
            if p["acquired"] and p["acquired"].split("/")[1] != owner.split("/")[1]:
                return f"place {place} is acquired by a different user ({p['acquired']}), use --kick", 1
            p.update(acquired=None, changed=time.time())
            self.schedule()
            return f"released place {place}", 0
        raise AssertionError(f"labgrid-client {args}: not in the fake")

    def reservation_verb(self, args, owner, place):
        if args[0] == "reserve":   # reserve [--wait] [--shell] KEY=VALUE...
            token = next(self._tokens)
            self.reservations.append({"token": token, "owner": owner, "state": "waiting", "allocations": {},
                                      "filters": {"main": dict(a.split("=", 1) for a in args if "=" in a)}})
            self.schedule()
            return f"export LG_TOKEN={token}\n", 0
        if args[0] == "cancel-reservation":
            self.reservations = [r for r in self.reservations if r["token"] != args[1]]
            self.schedule()
            return "", 0
        if args[0] == "show":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                print(f"Place '{place}':")
                self.place(place).show(level=1)
            return out.getvalue(), 0
        res = next((r for r in self.reservations if r["token"] == args[1]), None)   # wait TOKEN
        if res is None:
            return f"Server error: reservation {args[1]} not found", 1
        if res["state"] == "waiting":   # time passes while it waits
            for happen in self.while_waiting:
                happen()
            self.schedule()
        if res["state"] == "waiting":
            raise subprocess.TimeoutExpired(["labgrid-client", "wait", args[1]], 30)
        return self.reservations_text([res]), 0

    def _allocated(self) -> dict:
        return {r["allocations"]["main"]: r for r in self.reservations if r["allocations"].get("main")}

    def schedule(self):
        """The coordinator's schedule_reservations: allocated reservations follow their
        place (acquired, allocated again after a release); waiting ones, oldest first, get
        a place nobody holds or is allocated whose tags (and name) match their filter."""
        for r in self.reservations:
            if r["state"] in ("allocated", "acquired"):
                r["state"] = "acquired" if self.places[r["allocations"]["main"]]["acquired"] else "allocated"
        for r in self.reservations:
            if r["state"] != "waiting":
                continue
            taken = self._allocated()
            for name, p in sorted(self.places.items()):
                if p["acquired"] is None and name not in taken and \
                        all({**p["tags"], "name": name}.get(k) == v for k, v in r["filters"]["main"].items()):
                    r.update(state="allocated", allocations={"main": name})
                    break

    def lavacli(self, args):
        if args == ["devices", "list", "--all", "--json"]:
            return json.dumps([self.devices[b] for b in sorted(self.devices)]), 0
        if args[:2] == ["devices", "update"] and args[3] == "--health":
            self.set_health(args[2], args[4].capitalize(), self.lava_user)
            if "--description" in args:
                self.descriptions[args[2]] = args[args.index("--description") + 1]
            return "", 0
        if args[:2] == ["jobs", "show"]:
            return json.dumps(self.jobs[int(args[2])]), 0
        if args[:3] == ["jobs", "logs", "--raw"]:   # the job's log, as the server gives it back
            return self.logs.get(int(args[3]), ""), 0
        if args[:2] == ["jobs", "cancel"]:
            self.end_job(int(args[2]), "Canceled")
            return "", 0
        if args[:2] == ["jobs", "resubmit"]:   # a copy of the job, queued: its new id
            new = max(self.jobs) + 1
            self.jobs[new] = {**self.jobs[int(args[2])], "id": new, "state": "Submitted", "health": "Unknown",
                              "actual_device": None}
            return f"{new}\n", 0
        raise AssertionError(f"lavacli {args}: not in the fake")

    def rest(self, url, path):
        """LAVA's REST API (api/v0.2) as glance asks it: devices, workers, jobs."""
        self.calls.append(("GET", path))
        jobs = [j for j in self.jobs.values() if f"state={j['state']}" in path]
        results = {"devices": [{"hostname": d["hostname"], "health": d["health"], "state": d["state"],
                                "worker_host": f"boardlab-{self.lab_host}"} for d in self.devices.values()],
                   "workers": [{"hostname": f"boardlab-{self.lab_host}", "state": self.worker_state}],
                   "jobs": [{"id": j["id"], "health": j["health"], "actual_device": j["actual_device"],
                             "health_check": j["health_check"], "end_time": None} for j in jobs]}
        return {"results": results[path.split("/")[0]]}

    def places_text(self, verbose=True) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for name in sorted(self.places):   # labgrid's print_places -v
                print(f"Place '{name}':")
                self.place(name).show(level=1)
        return out.getvalue()

    def place(self, name) -> Place:
        p = self.places[name]
        return Place(name=name, tags=p["tags"], matches=[ResourceMatch(self.lab_host, name, "*")],
                     acquired=p["acquired"], created=p["changed"] - 3600, changed=p["changed"],
                     reservation=p["reservation"] or next(
                         (r["token"] for r in self.reservations if r["allocations"].get("main") == name), None))

    def reservations_text(self, reservations=None) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for r in self.reservations if reservations is None else reservations:
                res = Reservation(owner=r["owner"], token=r["token"], state=ReservationState[r["state"]],
                                  filters=r["filters"], allocations={k: [v] for k, v in r["allocations"].items()})
                print(f"Reservation '{res.token}':")
                res.show(level=1)
        return out.getvalue()
