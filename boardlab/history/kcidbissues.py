"""A culprit the watch named, as KCIDB's issue and incidents (the export's `issues` and
`incidents`, history.kcidb): one issue per first bad commit (culprit: the code), its
report (report_url: the report's file:// URI, report_subject: its first line), whether
its revert confirmed it, and the `#regzbot introduced:` line; an incident per test of a
metric it moved: present at the build the change point began, present again on each
later night the judge still finds the metric regressed against the good build, and
absent (present=false) on the first night the judge finds it back (same or better), after
which nothing more is said of it."""
from __future__ import annotations

from pathlib import Path

from boardlab.errors import BoardlabError
from boardlab.facts.board import load_board
from boardlab.history.submit import parse_environment
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue

CONFIRMED = "confirmed by revert"    # bisect.revert.CONFIRMED, the state the watch keeps
ISSUE_VERSION = 1


def _subject(entry: dict) -> str:
    """The report's first line (its subject, as a mail would carry it), else the commit's."""
    report = Path(entry.get("report") or "")
    if report.is_file():
        first = report.read_text(errors="replace").splitlines()[:1]
        if first and first[0].strip():
            return first[0].strip()
    bad = entry["first_bad"]
    return f"boardlab bisect: {bad['rev'][:12]} {bad.get('subject', '')!r}"


def issue_of(prefix: str, entry: dict) -> dict:
    """The culprit's issue (KCIDB v5): the code is the culprit, never the tool or harness."""
    bad = entry["first_bad"]
    revert = entry.get("revert") or "revert not tried"
    issue = {"id": f"{prefix}:culprit:{bad['rev']}", "version": ISSUE_VERSION, "origin": prefix.split(":")[0],
             "report_subject": _subject(entry), "culprit": {"code": True, "tool": False, "harness": False},
             "comment": f"first bad commit {bad['rev'][:12]} {bad.get('subject', '')!r}; {revert}",
             "misc": {"commit": bad["rev"], "subject": bad.get("subject", ""), "revert": revert,
                      "confirmed_by_revert": revert == CONFIRMED, "bisect": entry.get("run_dir", ""),
                      "regzbot": f"#regzbot introduced: {bad['rev'][:12]}", "moved": []}}
    if entry.get("report"):
        issue["report_url"] = Path(entry["report"]).resolve().as_uri()
    return issue


def _incident(issue: dict, test: dict, present: bool, why: str) -> dict:
    return {"id": f"{issue['id']}:{test['id'].split(':', 2)[2]}", "origin": issue["origin"],
            "issue_id": issue["id"], "issue_version": issue["version"], "test_id": test["id"],
            "present": present, "comment": why}


def judged_back(metric: str, env: str, good: list, later: list) -> str | None:
    """The judge's outcome on a later night's samples against the good build's, on one
    environment (one board, clock and host; nights apart, so not interleaved)."""
    where = parse_environment(env)
    try:
        board = load_board(where["board"])
    except (BoardlabError, OSError):
        board = None
    try:
        side = dict(clock=where["clock"] or None, host=where["host"] or None)
        return decide(catalogue.spec(metric.replace("/", ".")), Figures(good, **side),
                      Figures(later, **side), board).outcome
    except (BoardlabError, ValueError):   # not a catalogue metric, or no figure: nothing said
        return None


def of_culprits(prefix: str, named: dict, versions: list, measured: dict) -> tuple[list, list]:
    """(issues, incidents) from culprits()' {(metric, environment, build): entry},
    versions: the history's builds in their order, measured: {(metric, environment,
    version): [its tests]} (kcidb._tests)."""
    issues, incidents = {}, []
    for (metric, env, build), entry in sorted(named.items()):
        issue = issues.setdefault(entry["first_bad"]["rev"], issue_of(prefix, entry))
        issue["misc"]["moved"].append(f"{metric} on {env} from build {build}")
        for test in measured.get((metric, env, build), []):
            incidents.append(_incident(issue, test, True, f"{metric} moved here: {entry.get('change', '')}"))
        good = [x for t in measured.get((metric, env, entry.get("good") or ""), []) for x in t["misc"]["samples"]]
        for later in (versions[versions.index(build) + 1:] if build in versions and good else []):
            tests = measured.get((metric, env, later), [])
            outcome = judged_back(metric, env, good, [x for t in tests for x in t["misc"]["samples"]]) if tests else None
            if outcome == vd.REGRESSED:
                incidents += [_incident(issue, t, True, f"{metric} still regressed against build "
                                                        f"{entry['good']}") for t in tests]
            elif outcome in (vd.SAME, vd.IMPROVED):
                incidents += [_incident(issue, t, False, f"{metric} back: {outcome} against build "
                                                         f"{entry['good']}") for t in tests]
                break
    return list(issues.values()), incidents
