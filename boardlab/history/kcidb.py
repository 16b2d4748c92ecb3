"""`boardlab history export --kcidb`: the lab's history as KCIDB JSON (the schema KernelCI's
common database takes), for a lab that also reports to KernelCI. From SQUAD's API:

- a checkout per build (the kernel as the history names it), a KCIDB build per build and
  board (its architecture from the board's facts); the checkout's validity, the build's
  status and a `boot` test come from what happened (a nightly build's kernel/checkout,
  kernel/build, kernel/boot tests), and are left out where nothing said (a kernel the lab
  did not build);
- a test per metric of each test run: path `boardlab.<suite>.<name>`, its number (the
  mean of the samples, with its unit), status FAIL where it regressed, PASS where judged
  same or better, DONE where it was only measured (KCIDB's status for a measurement);
  environment = SQUAD's `<board>[.<flavour>].<clock>[.<host>]`, and every sample in `misc`.

IDs are `boardlab:<lab>:...` and stable, so a second export of the same history gives the
same objects (KCIDB merges by ID). The document is validated against kcidb-io's own schema
(in the history's venv) before it is written."""
from __future__ import annotations

import json

from boardlab.errors import BoardlabError
from boardlab.facts.board import load_board
from boardlab.history.changes import api_list
from boardlab.history.server import GROUP, HistoryError, HistoryServer, squad_python
from boardlab.history.submit import parse_environment

ORIGIN = "boardlab"
STATUS = {"pass": "PASS", "fail": "FAIL", "skip": "DONE", "xfail": "PASS"}
VALIDATE = ("import json, sys, jsonschema, kcidb_io\n"
            "try:\n"
            "    kcidb_io.schema.LATEST.validate(json.load(sys.stdin))\n"
            "except jsonschema.ValidationError as e:\n"
            "    sys.exit('/'.join(map(str, e.absolute_path)) + ': ' + e.message)\n"
            "print(kcidb_io.schema.LATEST)\n")


def _architecture(board: str) -> str | None:
    try:
        return load_board(board).arch
    except (BoardlabError, AttributeError):
        return None


def _rfc3339(dt: str) -> str:
    return dt.replace("Z", "+00:00") if dt else dt


def document(server: HistoryServer) -> dict:
    """The history as one KCIDB document (not yet validated)."""
    try:
        project = api_list(server, f"/api/projects/?slug={server.project}&group__slug={GROUP}")[0]
    except (OSError, IndexError):
        raise HistoryError(f"no project {GROUP}/{server.project} at {server.url}: boardlab history up") from None
    envs = {e["url"]: e["slug"] for e in api_list(server, f"/api/environments/?project={project['id']}")}
    checkouts, builds, tests = [], {}, []
    prefix = f"{ORIGIN}:{server.lab}"
    for b in api_list(server, f"/api/projects/{project['id']}/builds/"):
        checkout_id = f"{prefix}:{b['version']}"
        checkout = {"id": checkout_id, "origin": ORIGIN, "tree_name": server.lab,
                    "start_time": _rfc3339(b["datetime"]), "comment": f"kernel {b['version']}",
                    "misc": {"kernel": b["version"]}}
        checkouts.append(checkout)
        for run in api_list(server, f"/api/builds/{b['id']}/testruns/"):
            env = envs.get(run["environment"], "")
            board = env.split(".")[0]
            status = {t["name"]: t["status"] for t in api_list(server, f"/api/testruns/{run['id']}/tests/")}
            build_id = f"{checkout_id}:{board}"
            build = builds.setdefault(build_id, {
                "id": build_id, "checkout_id": checkout_id, "origin": ORIGIN, "config_name": b["version"],
                "start_time": _rfc3339(b["datetime"]), "misc": {"board": board}})
            arch = _architecture(board)
            if arch:
                build["architecture"] = arch
            _what_happened(checkout, build, status)
            tests += _tests(server, run, env, build_id, prefix, status)
    return {"version": {"major": 5, "minor": 3}, "checkouts": checkouts,
            "builds": list(builds.values()), "tests": tests}


def _what_happened(checkout: dict, build: dict, status: dict):
    """The checkout's validity and the build's status from the tests that say them (a
    nightly build's kernel/checkout, kernel/build); left out where nothing said (a kernel
    this lab did not build: Debian's), never assumed."""
    if status.get("kernel/checkout") in ("pass", "fail"):
        checkout["valid"] = checkout.get("valid", True) and status["kernel/checkout"] == "pass"
    if status.get("kernel/build") in ("pass", "fail"):
        failed = build.get("status") == "FAIL" or status["kernel/build"] == "fail"
        build["status"] = "FAIL" if failed else "PASS"


def _tests(server: HistoryServer, run: dict, env: str, build_id: str, prefix: str, status: dict) -> list:
    where = parse_environment(env)
    environment = {"comment": env, "misc": {k: where[k] for k in ("board", "clock", "host", "flavour")}}
    out = []
    if status.get("kernel/boot") in ("pass", "fail"):   # the boot itself: KCIDB's boot test
        out.append({"id": f"{prefix}:{run['job_id']}:boot", "build_id": build_id, "origin": ORIGIN,
                    "path": "boot", "status": STATUS[status["kernel/boot"]],
                    "start_time": _rfc3339(run.get("datetime") or ""), "environment": environment,
                    "misc": {"squad_test_run": run["id"]}})
    for m in api_list(server, f"/api/testruns/{run['id']}/metrics/"):
        samples = m.get("measurement_list") or [m["result"]]
        number = {"value": sum(samples) / len(samples)}
        if m.get("unit"):
            number["unit"] = m["unit"]
        out.append({"id": f"{prefix}:{run['job_id']}:{m['name'].replace('/', '.')}",
                    "build_id": build_id, "origin": ORIGIN,
                    "path": "boardlab." + m["name"].replace("/", "."),
                    "status": STATUS.get(status.get(m["name"], "skip"), "DONE"),
                    "number": number, "start_time": _rfc3339(run.get("datetime") or ""),
                    "environment": environment,
                    "misc": {"samples": samples, "squad_test_run": run["id"]}})
    return out


def validate(doc: dict) -> str:
    """Raises HistoryError naming what KCIDB's schema refuses; returns the schema version."""
    r = squad_python("-c", VALIDATE, input=json.dumps(doc))
    if r.returncode != 0:
        last = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
        raise HistoryError(f"KCIDB's schema refuses the export: {last[-1] if last else r.returncode}")
    return r.stdout.strip()
