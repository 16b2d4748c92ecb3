"""`boardlab history export --kcidb`: the lab's history as KCIDB JSON (the schema KernelCI's
common database takes), for a lab that also reports to KernelCI. From SQUAD's API and the
change points the watch recorded (<data>/watched.json, bisect.watch):

- a checkout per build (the kernel as the history names it); for a nightly build the
  kernel tree's own: its commit (git_commit_hash), branch, repository (git_repository_url,
  an https:// one) and name (tree_name); its validity from kernel/checkout;
- a KCIDB build per build and board (its architecture from the board's facts), its status
  from kernel/build; a `boot` test from kernel/boot;
- a test per metric of each test run: path `boardlab.<suite>.<name>`, its number (the
  mean of the samples, with its unit), every sample, its verdict, the interval of its
  difference from the baseline (ci_pct) and the samples each side (n) in `misc`; a test
  per other test the run said (the suites' own, pytest.<file>.<test>; lava.job);
  environment = SQUAD's `<board>[.<flavour>].<clock>[.<host>]`.

Every status comes from what happened, through one mapping (`status`): ERROR for a lab
fault, FAIL for a failed build, boot or test and for a regression (the gate's verdict, or
a change point for the worse the watch recorded), PASS for what passed, DONE for a figure
only measured; nothing is claimed where nothing was said (a kernel the lab did not build).

IDs are `boardlab:<lab>:...` and stable, so a second export of the same history gives the
same objects (KCIDB merges by ID). The document is validated against kcidb-io's own schema
(in the history's venv) before it is written."""
from __future__ import annotations

import json
import re
import urllib.request

from boardlab.errors import BoardlabError
from boardlab.facts.board import load_board
from boardlab.history import kcidbissues as issues
from boardlab.history.changes import api_list
from boardlab.history.server import GROUP, HistoryError, HistoryServer, squad_python
from boardlab.history.submit import BISECT_FLAVOUR, parse_environment
from boardlab.judge import verdict as vd

ORIGIN = "boardlab"
VALIDATE = ("import json, sys, jsonschema, kcidb_io\n"
            "try:\n"
            "    kcidb_io.schema.LATEST.validate(json.load(sys.stdin))\n"
            "except jsonschema.ValidationError as e:\n"
            "    sys.exit('/'.join(map(str, e.absolute_path)) + ': ' + e.message)\n"
            "print(kcidb_io.schema.LATEST)\n")

# what happened to a test (a build, a checkout), and the status each makes: the first that
# happened decides. A lab fault comes first: whatever else the test said, the lab broke under it
LAB_FAULT, FAILED, REGRESSED, CHANGE_POINT = "lab fault", "failed", "regressed", "change point"
PASSED, MEASURED, SKIPPED = "passed", "measured", "skipped"
STATUSES = ((LAB_FAULT, "ERROR"), (FAILED, "FAIL"), (REGRESSED, "FAIL"), (CHANGE_POINT, "FAIL"),
            (PASSED, "PASS"), (MEASURED, "DONE"), (SKIPPED, "SKIP"))
PRIORITY = ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP")   # KCIDB's, for several answers


def status(events) -> str | None:
    """KCIDB's status from what happened, the one mapping. ERROR: the lab broke, not the
    kernel (a boot the lab failed, LAVA's infrastructure, a test that errored in its
    set-up); FAIL: the kernel failed (its build or boot, a test) or a figure regressed
    (the gate's verdict, or a change point for the worse the watch recorded); PASS: it
    passed; DONE: a figure measured with nothing to judge it by; SKIP: it did not run;
    None: nothing said, so nothing claimed."""
    return next((s for event, s in STATUSES if event in events), None)


def events(said: str | None, result: str | None = None, verdict: str | None = None,
           measured: bool = False, change_point: bool = False, board_drifted: bool = False) -> set:
    """What happened to a test, as the history holds it: SQUAD's result (pass, fail, skip,
    xfail), the run's own (judge.outcomes: error is a lab fault), the gate's verdict, a
    figure, a change point the watch recorded there, a figure measured on a board that was
    drifting from its own level (the lab's fault: its figures are not the kernel's)."""
    return {e for e, happened in (
        (LAB_FAULT, result == "error" or (board_drifted and measured)), (FAILED, said == "fail"), (PASSED, said in ("pass", "xfail")),
        (SKIPPED, said == "skip"), (REGRESSED, verdict in (vd.REGRESSED, vd.MISSING)),
        (CHANGE_POINT, change_point), (MEASURED, measured)) if happened}


def _architecture(board: str) -> str | None:
    try:
        return load_board(board).arch
    except (BoardlabError, AttributeError):
        return None


def _rfc3339(dt: str) -> str:
    return dt.replace("Z", "+00:00") if dt else dt


def read(server: HistoryServer) -> list[dict]:
    """The history as SQUAD's API holds it: [{version, datetime, runs: [{id, job_id,
    datetime, environment, tests {name: status}, metrics [...], metadata {...}}]}]."""
    try:
        project = api_list(server, f"/api/projects/?slug={server.project}&group__slug={GROUP}")[0]
    except (OSError, IndexError):
        raise HistoryError(f"no project {GROUP}/{server.project} at {server.url}: boardlab history up") from None
    envs = {e["url"]: e["slug"] for e in api_list(server, f"/api/environments/?project={project['id']}")}
    builds = []
    for b in api_list(server, f"/api/projects/{project['id']}/builds/"):
        runs = [dict(run, environment=envs.get(run["environment"], ""),
                     tests={t["name"]: t["status"] for t in api_list(server, f"/api/testruns/{run['id']}/tests/")},
                     metrics=api_list(server, f"/api/testruns/{run['id']}/metrics/"),
                     metadata=_metadata(run))
                for run in api_list(server, f"/api/builds/{b['id']}/testruns/")]
        builds.append(dict(b, runs=runs))
    return builds


def _metadata(run: dict) -> dict:
    """A test run's metadata (submit.submissions: verdicts, outcomes, tree)."""
    with urllib.request.urlopen(run["metadata_file"], timeout=60) as r:
        text = r.read()
    try:
        doc = json.loads(text)
    except ValueError:      # a run sent without metadata: SQUAD answers 'None'
        return {}
    return doc if isinstance(doc, dict) else {}


def _watch_entries(server: HistoryServer):
    """(metric, environment, build, entry) of each change point the watch recorded
    (bisect.watch's <data>/watched.json), a bisect's own steps left out."""
    path = server.data / "watched.json"
    seen = json.loads(path.read_text()) if path.exists() else {}
    for key, entry in seen.items():
        metric, env, build = (key.split("@", 2) + ["", ""])[:3]
        if parse_environment(env)["flavour"] != BISECT_FLAVOUR:
            yield metric, env, build, entry


def watched(server: HistoryServer) -> dict:
    """{(metric, environment, build): the change point} the watch recorded as a change for
    the worse (`regression`, or, in an entry older than that, a bisect tried: it bisects
    regressions only)."""
    return {(metric, env, build): entry.get("change", "") for metric, env, build, entry in _watch_entries(server)
            if entry.get("regression", entry.get("attempts", 0) > 0)}


def culprits(server: HistoryServer) -> dict:
    """{(metric, environment, build): the watch's entry} of each change point whose bisect
    named a first bad commit (its rev and subject, report, revert, good build)."""
    return {(metric, env, build): entry for metric, env, build, entry in _watch_entries(server)
            if (entry.get("first_bad") or {}).get("rev")}


def document(server: HistoryServer) -> dict:
    """The history as one KCIDB document (not yet validated)."""
    return from_history(server.lab, read(server), watched(server), culprits(server))


def from_history(lab: str, builds: list, regressions: dict, named: dict | None = None) -> dict:
    """read()'s history, watched()'s regressions and culprits()' named commits as one
    KCIDB document: checkouts, builds, tests, and an issue per culprit with its incidents."""
    checkouts, kbuilds, tests, measured = [], {}, [], {}
    prefix = f"{ORIGIN}:{lab}"
    builds = sorted(builds, key=lambda b: b.get("datetime") or "")    # the nights in their order
    for b in builds:
        checkout_id = f"{prefix}:{b['version']}"
        checkout = {"id": checkout_id, "origin": ORIGIN, "start_time": _rfc3339(b["datetime"]),
                    "comment": f"kernel {b['version']}", "misc": {"kernel": b["version"], "lab": lab}}
        checkouts.append(checkout)
        for run in b["runs"]:
            board = run["environment"].split(".")[0]
            _tree(checkout, run["metadata"].get("tree") or {})
            build_id = f"{checkout_id}:{board}"
            build = kbuilds.setdefault(build_id, {
                "id": build_id, "checkout_id": checkout_id, "origin": ORIGIN, "config_name": b["version"],
                "start_time": _rfc3339(b["datetime"]), "misc": {"board": board}})
            arch = _architecture(board)
            if arch:
                build["architecture"] = arch
            _what_happened(checkout, build, run["tests"], run["metadata"].get("outcomes") or {})
            tests += _tests(run, b["version"], build_id, prefix, regressions, measured)
    doc = {"version": {"major": 5, "minor": 3}, "checkouts": checkouts,
           "builds": list(kbuilds.values()), "tests": tests}
    if named:
        doc["issues"], doc["incidents"] = issues.of_culprits(prefix, named, [b["version"] for b in builds], measured)
    return doc


def _tree(checkout: dict, tree: dict):
    """The checkout's source, from a nightly build's kernel tree (submit.tree_of)."""
    if re.fullmatch(r"[0-9a-f]{40}", tree.get("commit", "")):
        checkout["git_commit_hash"] = tree["commit"]
    if tree.get("name"):
        checkout["tree_name"] = tree["name"]
    if tree.get("branch"):
        checkout["git_repository_branch"] = tree["branch"]
    if tree.get("url", "").startswith("https://"):
        checkout["git_repository_url"] = tree["url"]
    elif tree.get("url"):          # KCIDB takes https:// only: the rest is said beside
        checkout["misc"]["repository"] = tree["url"]


def _worst(*statuses) -> str | None:
    return min((s for s in statuses if s), key=PRIORITY.index, default=None)


def _what_happened(checkout: dict, build: dict, said: dict, outcomes: dict | None = None):
    """The checkout's validity and the build's status from the tests that say them (a
    nightly build's kernel/checkout, kernel/build); left out where nothing said (a kernel
    this lab did not build: Debian's), never assumed; a failure is not undone by another
    board's run."""
    def of(test):
        return status(events(said.get(test), ((outcomes or {}).get(test) or {}).get("result")))
    if of("kernel/checkout") in ("PASS", "FAIL"):
        checkout["valid"] = checkout.get("valid", True) and of("kernel/checkout") == "PASS"
    if of("kernel/build"):
        build["status"] = _worst(build.get("status"), of("kernel/build"))


def _path(name: str) -> str:
    """A SQUAD test's name as a KCIDB path: boardlab.<suite>.<name>, what KCIDB's pattern
    refuses made '_'; kernel/boot is KCIDB's boot test."""
    if name == "kernel/boot":
        return "boot"
    return "boardlab." + ".".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in re.split(r"[/.]", name) if p)


def _tests(run: dict, version: str, build_id: str, prefix: str, regressions: dict, measured: dict) -> list:
    """The run's tests; measured: {(metric, environment, version): [its tests]} filled in
    (an issue's incidents are tests of the metric it moved)."""
    env = run["environment"]
    where = parse_environment(env)
    environment = {"comment": env, "misc": {k: where[k] for k in ("board", "clock", "host", "flavour")}}
    metrics = {m["name"]: m for m in run["metrics"]}
    verdicts, outcomes = run["metadata"].get("verdicts") or {}, run["metadata"].get("outcomes") or {}
    out = []
    for name in sorted(set(run["tests"]) | set(metrics)):
        if name in ("kernel/checkout", "kernel/build"):    # the checkout's and the build's
            continue
        m, judged, said = metrics.get(name), verdicts.get(name) or {}, outcomes.get(name) or {}
        change = regressions.get((name, env, version))
        drifting = run["metadata"].get("board_drifting")
        st = status(events(run["tests"].get(name), said.get("result"), judged.get("verdict"),
                           m is not None, change is not None, bool(drifting)))
        if st is None:
            continue
        misc = {"squad_test_run": run["id"], **judged}    # verdict, ci_pct, delta_pct, n, why
        if said.get("why"):
            misc["why"] = said["why"]
        if drifting and m is not None:
            misc["lab"] = f"the board changed, not the kernel: it was {drifting}"
        if change is not None:
            misc["change_point"] = change
        test = {"id": f"{prefix}:{run['job_id']}:{name.replace('/', '.')}", "build_id": build_id,
                "origin": ORIGIN, "path": _path(name), "status": st,
                "start_time": _rfc3339(run.get("datetime") or ""), "environment": environment, "misc": misc}
        if m is not None:
            misc["samples"] = m.get("measurement_list") or [m["result"]]
            test["number"] = {"value": sum(misc["samples"]) / len(misc["samples"])}
            if m.get("unit"):
                test["number"]["unit"] = m["unit"]
            measured.setdefault((name, env, version), []).append(test)
        out.append(test)
    return out


def validate(doc: dict) -> str:
    """Raises HistoryError naming what KCIDB's schema refuses; returns the schema version."""
    r = squad_python("-c", VALIDATE, input=json.dumps(doc))
    if r.returncode != 0:
        last = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
        raise HistoryError(f"KCIDB's schema refuses the export: {last[-1] if last else r.returncode}")
    return r.stdout.strip()
