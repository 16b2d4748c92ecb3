"""The lab at a glance (`boardlab lab status`): every lab host, its exporter and its
boards - up or down, who holds each board (a labgrid user, or a LAVA job), its LAVA
health and last health check, the last result it produced - and LAVA's arbiter (up, its
last round) and the reservations still waiting. A scheduler or cron asks it before
submitting: exit 1 for each of these, each a row's problem: something down; a board
Bad, Retired, in Maintenance, Unknown or Looping; an overlap (a person holds a place
while a LAVA job runs on it); a person's hold older than the lab's limit (places/lab.yaml
`hold_limit_h`); a LAVA job Running on a worker that is offline; a reservation waiting;
an arbiter that is not running while LAVA is. The overlaps the arbiter has ended are
shown on its row (not a problem: ended).

Each source is read whole, once: the coordinator through labgrid-client (`-v places`,
`resources`, `reservations`: boardlab.lab.listings), LAVA through its REST API (public,
read-only: devices, workers, running jobs, the latest finished jobs), the arbiter
through its state file, the virtual lab hosts through their PID files, the results on
disk."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import PROJECT_ROOT
from boardlab.facts.labfacts import ARBITER_STATE, load_lab
from boardlab.facts.labhosts import lab_hosts
from boardlab.facts.places import PlacesError, client
from boardlab.judge import boardhealth
from boardlab.lab import rules
from boardlab.lab.listings import offered, parse_place_show, parse_places, parse_reservations, waiting
from boardlab.procs import running

__all__ = ["parse_place_show"]   # the one place's text, as `show` prints it (tests, people)

LAVA_URL = "http://127.0.0.1:8180/"
ARBITER_LATE_S = 60          # a round older than this: the arbiter is stuck
FLAGGED = ("Maintenance", "Unknown", "Looping")   # LAVA's healths a scheduler should know of


@dataclass
class Row:
    kind: str            # lab host, exporter, board, LAVA, arbiter, reservation
    name: str
    up: bool
    detail: dict = field(default_factory=dict)
    problem: str = ""    # why this row makes the lab not ready ('' when fine)


def _lava_get(url: str, path: str):
    with urllib.request.urlopen(url.rstrip("/") + "/api/v0.2/" + path, timeout=10) as r:
        return json.load(r)


def lava_view(url: str) -> dict:
    """Every device, worker, running job and the latest finished jobs: four requests."""
    get = lambda path: _lava_get(url, path).get("results") or []   # noqa: E731
    devices = {d["hostname"]: d for d in get("devices/?limit=10000")}
    workers = {w["hostname"]: w for w in get("workers/?limit=1000")}
    running_jobs = {j["actual_device"]: j for j in get("jobs/?state=Running&limit=10000") if j.get("actual_device")}
    last: dict = {}
    for j in get("jobs/?state=Finished&ordering=-end_time&limit=1000"):
        last.setdefault((j.get("actual_device"), bool(j.get("health_check"))), j)
    return {"devices": devices, "workers": workers, "running": running_jobs, "last": last}


def lava_board(view: dict, board: str) -> dict | None:
    """A device's health and state, its current job, its worker's state, its last health
    check and last job (None: not a LAVA device)."""
    dev = view["devices"].get(board)
    if dev is None:
        return None
    said = lambda j: j and f"#{j['id']} {j['health']} {(j.get('end_time') or '')[:16]}"   # noqa: E731
    job = view["running"].get(board)
    worker = view["workers"].get(dev.get("worker_host")) or {}
    return {"health": dev.get("health"), "state": dev.get("state"), "current_job": job and job["id"],
            "worker": dev.get("worker_host"), "worker_state": worker.get("state"),
            "last_check": said(view["last"].get((board, True))), "last_job": said(view["last"].get((board, False)))}


def last_results(boards, results: Path) -> dict[str, str]:
    """Each board's newest run directory holding its figures (the newest 200 runs read once)."""
    runs = sorted(results.glob("*/results.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    found: dict = {}
    for p in runs[:200]:
        head = p.read_text(errors="replace")[:200000]
        for b in boards:
            if b not in found and f'"{b}"' in head:
                found[b] = p.parent.name
    return found


def last_result(board: str, results: Path) -> str | None:
    return last_results([board], results).get(board)


def board_problems(place: dict | None, is_offered: bool, lava: dict | None, now: float,
                   limit_h: float) -> list[str]:
    """Why a board makes the lab not ready, each condition once."""
    if place is None:
        return ["no place at the coordinator"]
    out = [] if is_offered else ["its exporter does not offer it"]
    holder = place.get("acquired")
    hours = rules.overdue(place, now, limit_h)
    if hours is not None:
        out.append(f"held by {holder} for {hours:.0f} h (the lab's limit: {limit_h:g} h)")
    if not lava:
        return out
    if lava["health"] in rules.UNAVAILABLE or lava["health"] in FLAGGED:
        out.append(f"LAVA health {lava['health']} (last check {lava['last_check'] or '-'})")
    job = lava.get("current_job")
    if job and holder not in (None, rules.LAVA_OWNER):
        out.append(f"OVERLAP: {holder} holds it while LAVA job {job} runs on it")
    if job and lava.get("worker_state") == "Offline":
        out.append(f"LAVA job {job} Running on worker {lava['worker']}, which is Offline")
    return out


def board_row(name: str, lab_host: str, place: dict | None, is_offered: bool, lava: dict | None,
              last: str | None, now: float, limit_h: float, performance=None) -> Row:
    """performance: the board's health from its own history (boardlab.judge.boardhealth)."""
    holder = place and place["acquired"]
    lava_job = lava and lava.get("current_job")
    held = f"LAVA job {lava_job}" if lava_job else (f"labgrid {holder}" if holder else "-")
    if lava_job and holder not in (None, rules.LAVA_OWNER):
        held = f"labgrid {holder} and LAVA job {lava_job}"
    detail = {"lab host": lab_host, "held by": held, "last result": last or "-"}
    if lava:
        detail.update({"LAVA": f"{lava['health']}, {lava['state']}", "last check": lava["last_check"] or "-",
                       "last LAVA job": lava["last_job"] or "-"})
    problems = board_problems(place, is_offered, lava, now, limit_h)
    if performance is not None:
        detail["performance"] = performance.line()
        if performance.state == "drifting":   # quarantined: `boardlab lab accept` takes it back
            problems.append(performance.line())
    return Row("board", name, not problems, detail, "; ".join(problems))


def arbiter_row(state_file: Path, lava_up: bool, now: float) -> Row | None:
    """LAVA's arbiter from its state file: up (its PID alive, its last round recent), the
    last round, the overlaps it ended. A problem only while LAVA is up without it."""
    if not state_file.exists():
        return Row("arbiter", "-", False, {}, "LAVA is up and no arbiter holds its boards' places "
                                              f"({state_file}: none)") if lava_up else None
    state = json.loads(state_file.read_text() or "{}")
    last = state.get("round") or {}
    at, pid = last.get("at"), last.get("pid")
    alive = bool(pid) and running(int(pid))
    late = at is None or now - at > ARBITER_LATE_S
    ended = [f"{o['board']} {time.strftime('%m-%d %H:%M', time.localtime(o['at']))}: {o['ended']}"
             for o in (state.get("overlaps") or [])[-3:]]
    detail = {"pid": pid or "-", "last round": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if at else "-",
              "round took": f"{last.get('took_s', '-')} s", "boards": last.get("boards", "-"),
              "set aside": ", ".join(sorted(state.get("aside") or {})) or "-",
              "overlaps ended": " | ".join(ended) or "-"}
    why = "" if alive and not late else (f"not running (pid {pid} gone)" if not alive else
                                         f"its last round was {now - at:.0f} s ago" if at else "no round yet")
    return Row("arbiter", "lava-arbiter", not why, detail, why if (lava_up or alive) else "")


def reservation_rows(reservations: list[dict]) -> list[Row]:
    """The reservations waiting for a place, and those allocated one nobody acquired (a
    person walked away: the board is kept from everyone until the coordinator drops it)."""
    def row(r, why):
        return Row("reservation", r["token"], False, {"owner": r.get("owner", "-"), "filters": "; ".join(
            " ".join(f"{k}={v}" for k, v in f.items()) for f in r.get("filters", {}).values())}, why)
    return [row(r, "waiting: no free place matches it yet") for r in waiting(reservations)] + [
        row(r, f"allocated {', '.join((r.get('allocations') or {}).values())}, not acquired: the coordinator "
               f"drops it at {r.get('timeout', 'its timeout')}")
        for r in reservations if r.get("state") == "allocated"]


def glance(lava_url: str | None = LAVA_URL, results: Path = PROJECT_ROOT / "results",
           lab_host: str | None = None, arbiter_state: Path = ARBITER_STATE) -> list[Row]:
    """Every row of the lab (or of one lab host): LAVA, its arbiter, the waiting
    reservations, each host, its exporter, its boards."""
    lab = load_lab()
    hosts = [h for h in lab_hosts() if lab_host in (None, h.name)]
    if not hosts:
        raise InputError(f"no lab host {lab_host!r} (places/*/lab-host.yaml: "
                         f"{', '.join(h.name for h in lab_hosts())})")
    return lab_rows(hosts, lab.coordinator, lava_url, results, arbiter_state, lab.hold_limit_h, time.time())


def lab_rows(hosts, coordinator: str, lava_url: str | None, results: Path, arbiter_state: Path,
             limit_h: float, now: float) -> list[Row]:
    """The rows of these lab hosts (each with name, kind, exporter_name, boards): three
    labgrid-client calls and four LAVA requests, whatever the number of boards."""
    rows, view = [], None
    if lava_url:
        try:
            view = lava_view(lava_url)
        except (OSError, urllib.error.URLError, ValueError, KeyError) as e:
            rows.append(Row("LAVA", lava_url, False, {}, f"no LAVA server answers: {e}"))
    try:
        places = parse_places(client(coordinator, "-v", "places", check=True).stdout)
        resources = client(coordinator, "resources", check=True).stdout
        reservations = parse_reservations(client(coordinator, "reservations", check=True).stdout)
        down = ""
    except PlacesError as e:
        places, resources, reservations, down = {}, "", [], str(e)
    arbiter = arbiter_row(Path(arbiter_state), view is not None, now)
    rows += ([arbiter] if arbiter else []) + reservation_rows(reservations)
    lasts = last_results([b for h in hosts for b in h.boards], results)
    for host in hosts:
        exporter = host.exporter_name or host.name
        if down:
            rows.append(Row("lab host", host.name, False, {"kind": host.kind}, "its coordinator does not answer"))
            rows.append(Row("exporter", exporter, False, {}, down))
        else:
            count = sum(1 for ln in resources.splitlines() if ln.startswith(f"{exporter}/"))
            up, why = _host_up(host, bool(count))
            rows.append(Row("lab host", host.name, up, {"kind": host.kind}, "" if up else why))
            rows.append(Row("exporter", exporter, bool(count), {"resources": count},
                            "" if count else "offers nothing at the coordinator"))
        for name in host.boards:
            place = places.get(name)
            rows.append(board_row(name, host.name, place, bool(place) and offered(resources, place["matches"]),
                                  lava_board(view, name) if view else None, lasts.get(name), now, limit_h,
                                  boardhealth.health_of(name)))
    return rows


def _host_up(host, exported: bool) -> tuple[bool, str]:
    if host.kind != "virtual":   # a real host, seen from here: through its exporter
        return exported, "" if exported else "its exporter is not at the coordinator"
    from boardlab.vlab.host import VirtualLabHost
    return (True, "") if VirtualLabHost(host.name).is_up() else (False, "its services are not running "
                                                                    "(boardlab vlab up)")


def as_json(rows: list[Row]) -> str:
    return json.dumps([{"kind": r.kind, "name": r.name, "up": r.up, **r.detail, "problem": r.problem}
                       for r in rows], indent=1)


def render(rows: list[Row]) -> str:
    out = []
    for r in rows:
        state = "up" if r.up else "DOWN" if r.kind not in ("board", "reservation") else "NOT READY"
        extra = "; ".join(f"{k}: {v}" for k, v in r.detail.items())
        out.append(f"{r.kind:11s} {r.name:12s} {state:9s} {extra}" + (f"\n{'':34s}-> {r.problem}" if r.problem else ""))
    bad = [r for r in rows if r.problem]
    out.append(f"{len(bad)} of {len(rows)} not ready" if bad else f"all {len(rows)} ready")
    return "\n".join(out)
