"""`boardlab places sync`: create or update a lab host's places on a labgrid
coordinator from places/<host>/places.yaml, idempotently (a second run changes
nothing), through labgrid-client as a lab admin would type it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from boardlab.errors import LabFault
from boardlab.facts.board import PLACES_DIR, FactsError
from boardlab.facts.labhosts import load_lab_host
from boardlab import yamltext


class PlacesError(LabFault):
    part = "coordinator"


def client(coordinator, *args, place=None, check=True, env=None, timeout=60):
    """labgrid-client as a person types it; env: variables over this process's (the owner:
    LG_HOSTNAME, LG_USERNAME); timeout: seconds (subprocess.TimeoutExpired past it)."""
    exe = shutil.which("labgrid-client") or os.path.join(os.path.dirname(sys.executable),
                                                         "labgrid-client")
    cmd = [exe, "-x", coordinator] + (["-p", place] if place else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, **env} if env else None)
    if check and r.returncode != 0:
        out = (r.stderr or r.stdout).strip()
        if "coordinator is unavailable" in out or "Could not connect to coordinator" in out:
            raise PlacesError(f"the labgrid coordinator {coordinator} is not reachable "
                              f"(labgrid-client: {out.splitlines()[-1].strip()}); is it running?")
        raise PlacesError(f"{' '.join(cmd[1:])}: {' / '.join(out.splitlines())}")
    return r


def sync(lab_name: str, coordinator: str) -> list[str]:
    """Returns what was done, one line per change."""
    lab = load_lab_host(lab_name)
    path = PLACES_DIR / lab.name / "places.yaml"
    if not path.exists():
        raise FactsError(f"{path}: missing; run `boardlab gen`")
    wanted = yamltext.load(path.read_text()) or {}
    existing = set(client(coordinator, "places").stdout.split())
    done = []
    for name, spec in wanted.items():
        if name not in existing:
            client(coordinator, "create", place=name)
            done.append(f"{name}: created")
        show = client(coordinator, "show", place=name).stdout
        for pattern in spec["matches"]:
            if pattern not in show:
                client(coordinator, "add-match", pattern, place=name)
                done.append(f"{name}: match {pattern}")
        tags = [f"{k}={v}" for k, v in spec["tags"].items() if f"{k}={v}" not in show]
        if tags:
            client(coordinator, "set-tags", *tags, place=name)
            done.append(f"{name}: tags {' '.join(tags)}")
    return done
