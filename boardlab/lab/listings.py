"""The coordinator's and LAVA's lists, each read whole in one call and parsed here (pure
functions, tested on their own output): every place with its holder (`labgrid-client -v
places`), the reservations (`labgrid-client reservations`), the resources exporters offer
(`labgrid-client resources`), every device (`lavacli devices list --all --json`). One
`labgrid-client` call is a Python process of about 0.5 CPU-s (DESIGN.md 10): a lab of
fifty boards is read in the same few calls as a lab of two."""
from __future__ import annotations

import json
import re
from datetime import datetime
from fnmatch import fnmatchcase


def _when(text: str) -> float | None:
    """labgrid's `datetime.fromtimestamp(...)` as it printed it (this host's local time)."""
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        return None


def parse_places(text: str) -> dict[str, dict]:
    """`labgrid-client -v places` (labgrid 26.0.1: print_places, then Place.show at level
    1) -> {place: {acquired: 'host/user' or None, reservation: token or None, tags: {k: v},
    matches: [pattern], changed: epoch s or None, comment: str}}. `changed` is the place's
    last change: its acquisition, for a held place (the coordinator touches it then)."""
    places, current, section = {}, None, None
    for line in text.splitlines():
        head = re.match(r"^Place '(.+)':$", line)
        if head:
            current = places[head.group(1)] = {"acquired": None, "reservation": None, "tags": {},
                                               "matches": [], "changed": None, "comment": ""}
            section = None
            continue
        if current is None or not line.startswith("  "):
            continue
        if line.startswith("    "):
            if section == "matches":
                current["matches"].append(line.strip().split(" -> ")[0])
            continue
        key, _, value = line.strip().partition(":")
        value = value.strip()
        section = key
        if key == "acquired":
            current["acquired"] = None if value == "None" else value
        elif key == "reservation":
            current["reservation"] = value or None
        elif key == "tags":
            current["tags"] = dict(kv.split("=", 1) for kv in value.split(", ") if "=" in kv)
        elif key == "changed":
            current["changed"] = _when(value)
        elif key == "comment":
            current["comment"] = value
    return places


def parse_place_show(text: str) -> dict:
    """`labgrid-client -p PLACE show` -> {acquired: 'host/user' or None, reservation:
    token or None, resources: {class: available}} (its own text, as a person reads it)."""
    acquired = re.search(r"^\s*acquired: (.+)$", text, re.M)
    reservation = re.search(r"^\s*reservation: (.+)$", text, re.M)
    resources = {m.group(1): m.group(2) == "True" for m in re.finditer(
        r"^(?:Matching|Acquired) resource '(\w+)'.*?'avail': (True|False)", text, re.M | re.S)}
    holder = acquired.group(1).strip() if acquired else "None"
    return {"acquired": None if holder == "None" else holder,
            "reservation": reservation.group(1).strip() if reservation else None,
            "resources": resources}


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


def waiting(reservations: list[dict]) -> list[dict]:
    """The reservations still waiting for a place (none free matches them yet)."""
    return [r for r in reservations if r.get("state") == "waiting"]


def offered(resources_text: str, matches: list[str]) -> bool:
    """Whether an exporter offers a resource the place matches: `labgrid-client
    resources` lists the available ones as exporter/group/class."""
    paths = [ln.strip().split("/") for ln in resources_text.splitlines() if ln.count("/") >= 2]
    for pattern in matches:
        parts = pattern.split("/")
        for path in paths:
            if all(fnmatchcase(p, m) for p, m in zip(path[:3], parts[:3])):
                return True
    return False


def parse_devices(text: str) -> dict[str, dict]:
    """`lavacli devices list --all --json` (LAVA's scheduler.devices.list: hostname, type,
    health, state, current_job) -> {hostname: that dict}."""
    return {d["hostname"]: d for d in json.loads(text or "[]")}
