"""The lab at a glance (`boardlab lab status`): every lab host, its exporter and its
boards - up or down, who holds each board (a labgrid user, or a LAVA job), its LAVA
health and last health check, and the last result it produced. A scheduler or cron asks
it before submitting: exit 1 when something is down or Bad.

Each source is read the way its users read it: the coordinator through labgrid-client
(`show` of each place, as a person would type it), LAVA through its REST API (public
read-only), the virtual lab hosts through their PID files, the results on disk."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import PROJECT_ROOT, load_board
from boardlab.facts.labfacts import load_lab
from boardlab.facts.labhosts import lab_hosts
from boardlab.facts.places import PlacesError, client
from boardlab.lab.listings import parse_place_show

LAVA_URL = "http://127.0.0.1:8180/"


@dataclass
class Row:
    kind: str            # lab host, exporter, board, LAVA
    name: str
    up: bool
    detail: dict = field(default_factory=dict)
    problem: str = ""    # why this row makes the lab not ready ('' when fine)


def _lava_get(url: str, path: str):
    with urllib.request.urlopen(url.rstrip("/") + "/api/v0.2/" + path, timeout=10) as r:
        return json.load(r)


def lava_board(url: str, board: str) -> dict:
    """A device's health and state, its current job, its last health check and last job."""
    dev = _lava_get(url, f"devices/{board}/")
    last = lambda q: (_lava_get(url, f"jobs/?actual_device={board}&state=Finished{q}"   # noqa: E731
                                     "&ordering=-end_time&limit=1").get("results") or [None])[0]
    check, job = last("&health_check=True"), last("&health_check=False")
    said = lambda j: j and f"#{j['id']} {j['health']} {(j.get('end_time') or '')[:16]}"   # noqa: E731
    return {"health": dev.get("health"), "state": dev.get("state"),
            "current_job": dev.get("current_job"), "last_check": said(check), "last_job": said(job)}


def last_result(board: str, results: Path) -> str | None:
    """The newest run directory holding figures of this board, with when."""
    runs = sorted(results.glob("*/results.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for p in runs[:200]:
        if f'"{board}"' in p.read_text(errors="replace")[:200000]:
            return p.parent.name
    return None


def board_row(board, place: dict | None, lava: dict | None, results: Path) -> Row:
    holder = place and place["acquired"]
    lava_job = lava and lava.get("current_job")
    held = f"LAVA job {lava_job}" if lava_job else (f"labgrid {holder}" if holder else "-")
    detail = {"lab host": board.lab_host, "held by": held, "last result": last_result(board.name, results) or "-"}
    problem = ""
    if place is None:
        problem = "no place at the coordinator"
    elif not all(place["resources"].values()) or not place["resources"]:
        problem = "its exporter does not offer it"
    if lava:
        detail.update({"LAVA": f"{lava['health']}, {lava['state']}", "last check": lava["last_check"] or "-",
                       "last LAVA job": lava["last_job"] or "-"})
        if lava["health"] in ("Bad", "Retired"):
            problem = problem or f"LAVA health {lava['health']} (last check {lava['last_check']})"
    return Row("board", board.name, not problem, detail, problem)


def glance(lava_url: str | None = LAVA_URL, results: Path = PROJECT_ROOT / "results",
           lab_host: str | None = None) -> list[Row]:
    """Every row of the lab (or of one lab host), each host, its exporter, its boards."""
    lab = load_lab()
    rows = []
    lava_up = None
    if lava_url:
        try:
            _lava_get(lava_url, "devices/?limit=1")
            lava_up = True
        except (OSError, urllib.error.URLError, ValueError) as e:
            rows.append(Row("LAVA", lava_url, False, {}, f"no LAVA server answers: {e}"))
    hosts = [h for h in lab_hosts() if lab_host in (None, h.name)]
    if not hosts:
        raise InputError(f"no lab host {lab_host!r} (places/*/lab-host.yaml: "
                         f"{', '.join(h.name for h in lab_hosts())})")
    for host in hosts:
        rows.extend(_host_rows(host, lab.coordinator, lava_url if lava_up else None, results))
    return rows


def _host_rows(host, coordinator, lava_url, results) -> list[Row]:
    rows = []
    try:
        r = client(coordinator, "resources", check=True)
        exporter = host.exporter_name or host.name
        offered = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{exporter}/")]
        up, why = _host_up(host, bool(offered))
        rows.append(Row("lab host", host.name, up, {"kind": host.kind}, "" if up else why))
        rows.append(Row("exporter", exporter, bool(offered), {"resources": len(offered)},
                        "" if offered else "offers nothing at the coordinator"))
        places = {b: parse_place_show(client(coordinator, "show", place=b, check=False).stdout)
                  for b in host.boards}
    except PlacesError as e:
        rows.append(Row("lab host", host.name, False, {"kind": host.kind}, "its coordinator does not answer"))
        rows.append(Row("exporter", host.exporter_name or host.name, False, {}, str(e)))
        places = {}
    for name in host.boards:
        lava = None
        if lava_url:
            try:
                lava = lava_board(lava_url, name)
            except (OSError, urllib.error.URLError, ValueError):
                lava = None   # not a LAVA device
        rows.append(board_row(load_board(name), places.get(name), lava, results))
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
        state = "up" if r.up else "DOWN" if r.kind != "board" else "NOT READY"
        extra = "; ".join(f"{k}: {v}" for k, v in r.detail.items())
        out.append(f"{r.kind:9s} {r.name:12s} {state:9s} {extra}" + (f"\n{'':32s}-> {r.problem}" if r.problem else ""))
    bad = [r for r in rows if r.problem]
    out.append(f"{len(bad)} of {len(rows)} not ready" if bad else f"all {len(rows)} ready")
    return "\n".join(out)
