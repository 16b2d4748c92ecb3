#!/usr/bin/env python3
"""A shared lab through its routine: jobs, people and routine events at once, with what it costs.
While LAVA jobs run and people (labgrid-client as dev/alice, dev/bob) hold and wait, N routine events
at random moments (seeded), one at a time (EVENTS, Chaos's methods). Counted: overlaps (the power
switches' request logs by source address), jobs lost (a job the arbiter cancelled and submitted again counts
as its resubmission), boards wedged (unusable longer than two arbiter rounds: recovery()), each event's time to recover
(docs/shared-lab.md). Host clock. It brings the lab and a LAVA server up and down itself, refuses a lab already up, and ends only what it started, by PID.

    .venv/bin/python bench/chaos.py [--rounds 22] [--seed 1]     # 22: each of the 11 kinds of event twice"""
import argparse, collections, contextlib, json, os, random, re, signal, statistics, subprocess, sys, tempfile, threading, time, urllib.request  # noqa: E401
from datetime import datetime, time as daytime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import shared_board as sb  # noqa: E402   its submit
from boardlab.lava import server as lava  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.facts.labfacts import load_lab  # noqa: E402
from boardlab.facts.labhosts import load_lab_host  # noqa: E402
from boardlab.lab.arbiterd import place_tags  # noqa: E402
from boardlab.lab.listings import parse_places, parse_reservations  # noqa: E402
from boardlab.lab.rules import LAVA_OWNER, USABLE, asks  # noqa: E402
from boardlab.lava.arbiterstart import last_round_at  # noqa: E402
from boardlab.lava.health import health_check_job  # noqa: E402
from boardlab.lava.identities import role_identity  # noqa: E402
from boardlab.lava.jobs import dump_job  # noqa: E402
from boardlab.lava.localserver import LocalLavaServer  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.vlab import flash, leases  # noqa: E402
from boardlab.vlab.lab import VirtualLab, kept_up  # noqa: E402
from boardlab.vlab.mgmt import daemons  # noqa: E402

EVENTS = ("coordinator_restart", "arbiter_sigkill", "lava_scheduler_restart", "board_broken_repaired", "hourly_recheck",
          "reservation_arch_arm",   # Chaos's methods: each returns what it did, once it has ended
          # the shared lab, round two: restarts with jobs queued, a person racing a restarted coordinator, an
          # admin's word, a normal stop of the arbiter mid-job, a reservation never acquired
          "lava_server_restart_queued", "tight_loop_after_coordinator_restart", "admin_maintenance_during_hold",
          "arbiter_sigterm_during_job", "walked_away_reservation")
LG = str(ROOT / ".venv/bin/labgrid-client")
SCHEDULER = ["lava-server", "manage", "lava-scheduler", "--level", "INFO", "--log-file", "-"]   # as `up` runs it
PUT = re.compile(r'^(\d\d):(\d\d):(\d\d) (\S+) "PUT /outlet/(\d+)/value', re.M)


def power_requests(text: str, outlets: dict, start: float) -> list[tuple[float, str, str]]:
    """A power switch's log (`HH:MM:SS source "PUT /outlet/N/value ...`, local time) from `start` on
    -> [(epoch s, source address, board)]; the day moves on at midnight."""
    day, out = datetime.fromtimestamp(start).date(), []
    for m in PUT.finditer(text):
        at = lambda: datetime.combine(day, daytime(*(int(x) for x in m.groups()[:3]))).timestamp()  # noqa: E731
        if out and at() < out[-1][0] - 43200:
            day += timedelta(days=1)
        out.append((at(), m[4], outlets.get(int(m[5]), f"outlet {m[5]}")))
    return out


def overlaps(requests, people, lava, sources: dict, margin: float = 1.0) -> list[tuple[float, str, str]]:
    """The requests [(t, source, board)] one side made more than `margin` s inside the other side's
    hold of that board (holds: [(board, start, end)]; sources: address -> 'lava' or 'person')."""
    against = {"lava": people, "person": lava}
    return [(t, src, b) for t, src, b in requests if src in sources
            and any(hb == b and s + margin < t < e - margin for hb, s, e in against[sources[src]])]


def usable(v: dict | None, ours: str = LAVA_OWNER) -> bool:
    """As the rules leave a board: no overlap, not Bad; LAVA's (a health LAVA schedules on, or
    Maintenance while its job ends or a person's reservation waits for it), or a person's, held
    or allocated, in Maintenance. LAVA's, in Maintenance, idle and wanted by nobody: wedged."""
    if not v or v["health"] in ("Bad", "Retired") or (v["job"] and v["holder"] not in (None, ours)):
        return False
    if v["holder"] == ours:
        return v["health"] in USABLE or (v["health"] == "Maintenance" and bool(v["job"] or v["reservation"]))
    return v["health"] == "Maintenance" and bool(v["holder"] or v["reservation"])


def recovery(end: float, samples: list, rounds, look_s: float = 4.0) -> tuple[float | None, list[str]]:
    """After an event that ended at `end`: s until every board was usable (None: not seen), and the boards wedged:
    unusable, from the event's end on, for longer than two arbiter rounds (twice the median interval between its
    rounds, plus the looks' own interval) before a look saw them usable again, or to the last look; said with their
    state then. A board the arbiter gives back by its next round (a person's hold ended: re-acquired, then its
    health) is unusable that long at most; one it never gives back, or an arbiter that stopped, is wedged."""
    after = sorted((s for s in samples if s[0] >= end), key=lambda s: s[0])
    back = next((round(t - end, 1) for t, v in after if v and all(map(usable, v.values()))), None)
    views = [(t, v) for t, v in after if v]
    if not views:
        return back, ["(no answer)"]
    ends = sorted(set(rounds))
    period = statistics.median(b - a for a, b in zip(ends, ends[1:])) if len(ends) > 1 else 5.0
    limit = 2 * period + look_s
    state = lambda v: ", ".join(f"{k} {x}" for k, x in v.items() if x) if v else "no view"  # noqa: E731  why
    wedged = {}
    for board in views[0][1]:
        since, last = None, None
        for t, v in views:
            ok = usable(v.get(board))
            if not ok:
                since, last = max(t, end) if since is None else since, v.get(board)
            if since is not None and t - since > limit and board not in wedged:   # usable again or not: too long
                wedged[board] = f"{board} ({state(last)}, {t - since:.0f} s)"
            if ok:
                since = None
    return back, sorted(wedged.values())


def rest(url: str, path: str):
    with urllib.request.urlopen(f"{url}api/v0.2/{path}", timeout=10) as r:
        return json.load(r)


class Chaos:
    def __init__(self, srv, args, boards):
        self.srv, self.args, self.boards, self.labs = srv, args, boards, VirtualLab()
        self.rng, self.rng_people = random.Random(args.seed), random.Random(args.seed + 1)
        self.stop, self.done, self.submitting = threading.Event(), threading.Event(), False
        self.broken = None   # how to repair the board broken now
        self.samples, self.rounds, self.holds, self.rows, self.jobs = [], set(), [], [], {}   # jobs: id -> board
        self.state, self.tags = srv.arbiter_state, {b: place_tags(b) for b in boards}
        # what the round-two events count: Submitted jobs a restart ended, a person's acquisitions while a LAVA
        # job ran, an admin's health changes undone, LAVA places freed while their job ran
        self.ended_queued, self.mid_job, self.undone, self.freed_mid_job = [], [], [], []
        self.downs = []   # when the LAVA server went down: its running jobs' dispatchers end there
        self.files = {b: Path(srv.run_dir) / f"job-{b}.yaml" for b in boards}
        for b, f in self.files.items():
            f.write_text(dump_job({**health_check_job(load_board(b)), "job_name": f"chaos: {b}", "priority": "medium"}))

    def lg(self, user: str, *args, popen=False):
        cmd, env = [LG, "-x", load_lab().coordinator, *args], {"LG_USERNAME": user, "LG_HOSTNAME": "dev", "PATH": "/usr/bin:/bin"}
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env) \
            if popen else subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)

    def person(self, user: str, board: str):
        while not self.stop.wait(self.rng_people.uniform(10, 40)):
            try:
                self.hold(user, f"board={board}")
            except subprocess.SubprocessError as e:   # a labgrid-client that hung: the next turn
                print(time.strftime("%T"), f"dev/{user}: {e}", flush=True)

    def hold(self, user: str, filt: str) -> dict | None:
        """A person's turn: reserve --wait, acquire, power cycle, a while, power off, release."""
        t0, p = time.time(), self.lg(user, "reserve", "--wait", "--shell", filt, popen=True)
        while p.poll() is None and not self.stop.is_set() and time.time() - t0 < 900:
            time.sleep(0.5)
        p.kill()
        token = re.search(r"LG_TOKEN=(\S+)", p.communicate()[0] or "")
        if not token:
            return print(time.strftime("%T"), f"dev/{user}: reserve {filt}: not granted (status {p.returncode})", flush=True)
        place = re.search(r"Place '(.+)'", self.lg(user, "-p", f"+{token[1]}", "show").stdout)
        ok, start = bool(place) and self.lg(user, "-p", f"+{token[1]}", "acquire").returncode == 0, time.time()
        if ok:
            ok = self.lg(user, "-p", place[1], "power", "cycle").returncode == 0
            time.sleep(self.rng_people.uniform(10, 30))
            ok = self.lg(user, "-p", place[1], "power", "off").returncode == 0 and ok
        h = {"board": place and place[1], "start": start, "end": time.time(), "waited": start - t0, "ok": ok}
        self.lg(user, "-p", f"+{token[1]}", "release")
        self.lg(user, "cancel-reservation", token[1])
        return self.holds.append(h) or h

    def look(self) -> dict | None:
        """Each board's holder and reservation at the coordinator, LAVA health and job (None: no answer)."""
        t, views = time.time(), None
        try:
            r = self.lg("chaos", "-v", "places")
            devs = {d["hostname"]: d for d in rest(self.srv.url, "devices/?limit=100")["results"]}
            jobs = {j["actual_device"]: j["id"] for j in rest(self.srv.url, "jobs/?state=Running&limit=100")["results"]}
            places = parse_places(r.stdout) if r.returncode == 0 else None
            views = places and {b: {"holder": places.get(b, {}).get("acquired"), "job": jobs.get(b), "health": (
                devs.get(b) or {}).get("health"), "reservation": places.get(b, {}).get("reservation")} for b in self.boards}
            if views and any(not usable(v) and v["holder"] == LAVA_OWNER for v in views.values()):
                reservations = parse_reservations(self.lg("chaos", "reservations").stdout)   # only then: 0.5 CPU-s
                aside = (json.loads(self.state.read_text()) if self.state.exists() else {}).get("aside") or {}
                asked = asks(reservations, self.tags, {b: {"health": v["health"], "current_job": v["job"]}
                                                       for b, v in views.items()}, LAVA_OWNER, aside)
                for b, v in views.items():   # set aside for a person who waits (the arbiter's own rule)
                    v["reservation"] = v["reservation"] or ("waiting" if b in asked else None)
        except (OSError, ValueError, KeyError, subprocess.SubprocessError):
            pass
        self.samples.append((t, views))
        return views

    def background(self):
        """The arbiter's rounds every 0.5 s, a look every 4 s, a job for each board with none unfinished every 10 s."""
        next_look = next_submit = 0.0
        while not self.done.wait(0.5):
            self.rounds.add(last_round_at(self.state))
            if time.time() >= next_look:
                self.look()
                next_look = time.time() + 4
            if self.submitting and time.time() >= next_submit:
                next_submit = time.time() + 10
                try:
                    for b in self.boards:
                        mine = [j for j, jb in self.jobs.items() if jb == b]
                        if not mine or rest(self.srv.url, f"jobs/{max(mine)}/")["state"] == "Finished":
                            self.jobs[int(sb.submit(self.srv, self.files[b]))] = b
                except Exception as e:   # noqa: BLE001  the server restarting: the next turn submits
                    print(time.strftime("%T"), f"submit: {e}"[:200], flush=True)

    def settle(self, end: float):
        """Looks every 2 s until every board is usable after the arbiter's second round, or --recover-s."""
        while time.time() < end + self.args.recover_s:
            t, views, two = time.time(), self.look(), sorted(r for r in self.rounds if r > end)[1:2]
            if two and t > two[0] and views and all(map(usable, views.values())):
                break
            time.sleep(2)
        return recovery(end, self.samples, self.rounds)

    def coordinator_restart(self):
        self.labs.stop_service("coordinator")
        self.labs.start_service("coordinator")
        return f"coordinator pid {daemons().pid('coordinator')}"

    def arbiter_sigkill(self):
        pid = int(json.loads(self.state.read_text())["round"]["pid"])
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if parent != self.srv.pids.get("arbiter"):   # only the child of our server's supervisor
            return f"pid {pid} is not our supervisor's child: left alone"
        os.kill(pid, signal.SIGKILL)
        return f"pid {pid} killed"

    def lava_scheduler_restart(self):
        os.killpg(pid := self.srv.pids["scheduler"], signal.SIGTERM)
        (kill := threading.Timer(20, os.killpg, (pid, signal.SIGKILL))).start()   # if still running (unreaped: ours)
        with contextlib.suppress(ChildProcessError):   # reaped already, by subprocess's clean-up of lost Popens
            os.waitpid(pid, 0)
        kill.cancel()
        self.srv._spawn("scheduler", SCHEDULER)
        return f"pid {pid} stopped, {self.srv.pids['scheduler']} started"

    def board_broken_repaired(self):
        board, t0 = self.rng.choice(self.boards), time.time()
        b, how = load_board(board), self.rng.choice(("tftpd stopped", "U-Boot erased"))
        if how == "U-Boot erased":   # its own flash (vlab.flash); repaired: flashed again
            flash.erase(b, load_lab_host(b.lab_host))
            self.broken = lambda: flash.write(b, load_lab_host(b.lab_host))
        else:
            self.labs.host_of(board).stop_service("tftpd")
            self.broken = lambda: self.labs.host_of(board).start_service("tftpd")
        while time.time() - t0 < self.args.break_s and ((self.look() or {}).get(board) or {}).get("health") != "Bad":
            time.sleep(5)
        bad = ((self.samples[-1][1] or {}).get(board) or {}).get("health") == "Bad"
        self.broken = self.broken() and None
        return f"{board} {how}: {'Bad' if bad else 'not Bad'} after {time.time() - t0:.0f} s; {self.hourly_recheck()}"

    def hourly_recheck(self):
        r = subprocess.run([sys.executable, "-m", "boardlab.cli", "lab", "recheck", "--identity", role_identity(
            self.srv.identity, "recheck")], cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        return ((r.stdout or r.stderr).strip().splitlines() or [f"exit {r.returncode}"])[-1][:70]

    def reservation_arch_arm(self):
        h = self.hold("bob", "arch=arm")
        return f"dev/bob granted {h['board']} after {h['waited']:.0f} s" if h else "dev/bob: not granted"

    def running(self) -> dict:
        """{board: its Running LAVA job} now ({} when the server does not answer)."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            return {j["actual_device"]: j["id"] for j in rest(self.srv.url, "jobs/?state=Running&limit=100")["results"]
                    if j["actual_device"] in self.boards}
        return {}

    def wait_running(self, limit: float = 300) -> tuple[str, int] | None:
        t0 = time.time()
        while time.time() - t0 < limit:
            if run := self.running():
                return self.rng.choice(sorted(run.items()))
            time.sleep(2)
        return None

    def lava_server_restart_queued(self):
        """`lava server down`/`up` with a job queued for each board (behind its running one, or a person's hold)."""
        queued = {int(sb.submit(self.srv, self.files[b])): b for b in self.boards}
        self.jobs.update(queued)
        before = {j: rest(self.srv.url, f"jobs/{j}/")["state"] for j in queued}
        self.downs.append(time.time())
        self.srv.down()
        self.srv.up(self.boards)
        after = {j: rest(self.srv.url, f"jobs/{j}/") for j in queued}
        ended = [j for j, d in after.items() if before[j] == "Submitted" and d["state"] == "Finished"]
        self.ended_queued += ended
        return (f"{len(queued)} queued ({', '.join(sorted(set(before.values())))}); after up: "
                f"{', '.join(sorted({d['state'] for d in after.values()}))}; Submitted ended: {len(ended)}")

    def tight_loop_after_coordinator_restart(self):
        """dev/carol acquires a board with a LAVA job running, in a tight loop, from the moment the restarted
        coordinator answers, for 20 s."""
        found = self.wait_running()
        if not found:
            return "no LAVA job ran within 300 s: not tried"
        board, job = found
        self.labs.stop_service("coordinator")
        self.labs.start_service("coordinator")
        t0, tries, got = time.time(), 0, []
        while time.time() - t0 < 20:
            tries += 1
            if self.lg("carol", "-p", board, "acquire").returncode == 0:
                got.append(job in self.running().values())
                self.lg("carol", "-p", board, "release")
            time.sleep(0.1)
        self.mid_job += [board for g in got if g]
        return f"dev/carol, {tries} tries on {board} (job {job}): {len(got)} acquired, {sum(got)} while the job ran"

    def admin_maintenance_during_hold(self):
        """An admin sets Maintenance on a board a person holds; after the hold ends and two arbiter rounds, is it
        still Maintenance? (then the admin gives it back: Unknown)."""
        board = self.rng.choice(self.boards)
        person = threading.Thread(target=self.hold, args=("dave", f"board={board}"), daemon=True)
        person.start()
        t0 = time.time()
        while time.time() - t0 < 600 and ((self.look() or {}).get(board) or {}).get("holder") != "dev/dave":
            time.sleep(2)
        if ((self.samples[-1][1] or {}).get(board) or {}).get("holder") != "dev/dave":
            return f"dev/dave did not get {board} within 600 s: not tried"
        lava.lavacli(self.srv.identity, "devices", "update", board, "--health", "MAINTENANCE")
        person.join(900)
        end = time.time()
        while len([r for r in self.rounds if r > end]) < 3 and time.time() - end < 120:
            time.sleep(1)
        health = rest(self.srv.url, f"devices/{board}/")["health"]
        if health != "Maintenance":
            self.undone.append(board)
        lava.lavacli(self.srv.identity, "devices", "update", board, "--health", "UNKNOWN")
        return f"{board}: the admin's Maintenance during dev/dave's hold: {health} after it and 3 rounds"

    def arbiter_sigterm_during_job(self):
        """A normal stop of the arbiter (SIGTERM) while a LAVA job runs: its place stays LAVA's until the job ends."""
        found = self.wait_running()
        if not found:
            return "no LAVA job ran within 300 s: not tried"
        board, job = found
        pid = int(json.loads(self.state.read_text())["round"]["pid"])
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if parent != self.srv.pids.get("arbiter"):
            return f"pid {pid} is not our supervisor's child: left alone"
        os.kill(pid, signal.SIGTERM)
        t0, freed = time.time(), 0
        while time.time() - t0 < 900 and job in self.running().values():
            places = parse_places(self.lg("chaos", "-v", "places").stdout)
            if places.get(board, {}).get("acquired") != LAVA_OWNER and job in self.running().values():
                freed += 1
            time.sleep(1)
        if freed:
            self.freed_mid_job.append(board)
        return f"pid {pid} SIGTERM during job {job} on {board}: its place not LAVA's in {freed} looks while it ran"

    def walked_away_reservation(self):
        """A broad reservation never acquired (clock=deterministic): how many boards it costs, for 60 s."""
        out = self.lg("erin", "reserve", "--shell", "clock=deterministic").stdout
        token = re.search(r"token: (\S+)", out) or re.search(r"LG_TOKEN=(\S+)", out)
        t0, most = time.time(), 0
        while time.time() - t0 < 60:
            views = self.look() or {}
            most = max(most, sum(v["health"] == "Maintenance" and v["holder"] == LAVA_OWNER for v in views.values()))
            time.sleep(4)
        if token:
            self.lg("erin", "cancel-reservation", token[1])
        return f"dev/erin reserved clock=deterministic and walked away: at most {most} board(s) in Maintenance for it"

    def run(self):
        threading.Thread(target=self.background, daemon=True).start()
        print(time.strftime("%T"), "before the first round (usable after s, wedged):", self.settle(time.time()), flush=True)
        self.submitting = True
        people = [threading.Thread(target=self.person, args=ub, daemon=True) for ub in zip(("alice", "bob"), self.boards * 2)]
        [p.start() for p in people]
        order = [e for _ in range(self.args.rounds) for e in self.rng.sample(EVENTS, len(EVENTS))]
        for i, kind in enumerate(order[:self.args.rounds]):
            time.sleep(self.rng.uniform(*self.args.gap))
            if others := [h for h in leases.holders() if h["pid"] != os.getpid()]:   # their power requests would count
                print(time.strftime("%T"), f"stopped before round {i + 1}: the lab is in use by {leases.describe(others)}")
                break
            t0 = time.time()
            try:
                did = getattr(self, kind)()
            except Exception as e:   # noqa: BLE001  an event that failed is a row too
                did = f"FAILED: {type(e).__name__}: {e}"[:200]
            self.rows.append((i + 1, time.strftime("%T", time.localtime(t0)), kind.replace("_", " "), did,
                              round(time.time() - t0, 1), *self.settle(time.time())))
            print(time.strftime("%T"), " | ".join(map(str, self.rows[-1])), flush=True)
        self.stop.set()
        self.submitting = False
        [p.join(300) for p in people]
        deadline = time.time() + self.args.drain_s
        while time.time() < deadline and any(rest(self.srv.url, f"jobs/{j}/")["state"] != "Finished" for j in self.jobs):
            time.sleep(10)

    def report(self, t0: float, first: int, logs: dict):
        jobs = {j["id"]: j for j in rest(self.srv.url, "jobs/?ordering=-id&limit=1000")["results"] if j["id"] > first}
        again = {o["job"]: int(m.group(1)) for o in json.loads(self.state.read_text())["overlaps"]
                 if (m := re.search(r"submitted again as job (\d+)", o["ended"]))}   # the arbiter's overlap rule

        def last(j):   # a job cancelled by the overlap rule lives on as its resubmission
            return last(again[j]) if j in again else j
        ends = collections.Counter(jobs[last(j)]["health"] if jobs.get(last(j), {}).get("state") == "Finished"
                                   else "never finished" for j in self.jobs)
        iso = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() if s else time.time()  # noqa: E731
        # its jobs and health checks: LAVA's holds; a job the server's down found running held
        # the board until then (`down` stops its lava-run by PID: no LAVA request after it),
        # though LAVA ends it only at the next up
        lava = [(j["actual_device"], iso(j["start_time"]),
                 min([iso(j["end_time"])] + [t for t in self.downs if iso(j["start_time"]) < t]))
                for j in jobs.values() if j.get("start_time") and j.get("actual_device")]
        requests, sources = [], {load_lab().management_ip: "person"}
        for host, (log, offset) in logs.items():
            sources[load_lab_host(host).management_ip] = "lava"
            with open(log, "rb") as f:
                f.seek(offset if log.stat().st_size >= offset else 0)
                outlets = {load_board(b).power.index: b for b in self.boards if load_board(b).lab_host == host}
                requests += power_requests(f.read().decode(errors="replace"), outlets, t0)
        over = overlaps(requests, [(h["board"], h["start"], h["end"]) for h in self.holds], lava, sources)
        host, by = this_host(), collections.Counter(sources.get(src, src) for _, src, _ in requests)
        print(f"\nhost {host['id']} ({host['cpus']} CPUs), host clock, {time.strftime('%F %T', time.localtime(t0))}"
              f" to {time.strftime('%T')}; seed {self.args.seed}, {len(self.rows)} rounds; boards {', '.join(self.boards)}")
        print("| round | at | event | what it did | took s | usable after s | wedged |\n" + "|---" * 7 + "|")
        print("\n".join("| " + " | ".join("-" if x is None else ", ".join(x) or "none" if isinstance(x, list) else str(x)
                                          for x in r) + " |" for r in self.rows))
        print(f"overlaps (a power request by one side inside the other's hold): {len(over)} of {len(requests)} "
              f"requests (LAVA's workers {by['lava']}, people {by['person']}); the arbiter ended "
              f"{sum(o['at'] >= t0 for o in json.loads(self.state.read_text())['overlaps'])}")
        print("".join(f"  {time.strftime('%T', time.localtime(t))} {b}: from {src}\n" for t, src, b in over), end="")
        lost, how = sum(n for h, n in ends.items() if h not in ("Complete", "Incomplete")), ", ".join(
            f"{h} {n}" for h, n in sorted(ends.items()))
        print(f"jobs lost (never Complete or Incomplete): {lost} of {len(self.jobs)} ({how}); boards wedged: "
              f"{sum(len(r[-1]) for r in self.rows)}; people's holds: {len(self.holds)}, {sum(h['ok'] for h in self.holds)} "
              f"power-cycled and off as asked, reserve waits (s): {sorted(round(h['waited']) for h in self.holds)}")
        print(f"Submitted jobs a restart ended: {len(self.ended_queued)}; a person's acquisitions while a LAVA job ran: "
              f"{len(self.mid_job)}; admin health changes undone: {len(self.undone)}; LAVA places freed while their job "
              f"ran (arbiter SIGTERM): {len(self.freed_mid_job)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--boards", type=lambda s: s.split(","), default="qemu-arm,qemu-ppc", help="comma separated")
    ap.add_argument("--gap", type=float, nargs=2, default=(10.0, 60.0), help="s before each event (uniform)")
    ap.add_argument("--break-s", type=float, default=180.0, help="a board broken at most this long")
    ap.add_argument("--recover-s", type=float, default=300.0, help="an event's recovery watched at most this long")
    ap.add_argument("--drain-s", type=float, default=900.0, help="the last jobs waited for at most this long")
    boards = (args := ap.parse_args(argv)).boards
    if leases.holders() or daemons().pid("coordinator"):
        sys.exit("the virtual lab is up or in use: this bench restarts its services, it needs the lab to itself")
    logs = {h: (p, p.stat().st_size if p.exists() else 0)   # each power switch's log, read from here on
            for h in {load_board(b).lab_host for b in boards} for p in [Path(load_lab_host(h).run_dir) / "logs/power-switch.log"]}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0, work = time.time(), Path(tempfile.mkdtemp(prefix="bench-chaos-"))
    with kept_up("vlab", boards=boards), LocalLavaServer(work / "server", identity="boardlab-chaos") as srv:
        srv.up(boards)
        first = max((j["id"] for j in rest(srv.url, "jobs/?ordering=-id&limit=1")["results"]), default=0)
        chaos = Chaos(srv, args, boards)
        try:
            chaos.run()
            chaos.report(t0, first, logs)
        finally:
            [e.set() for e in (chaos.stop, chaos.done)]
            if chaos.broken:   # a board left broken: repaired
                chaos.broken()


if __name__ == "__main__":
    main()
