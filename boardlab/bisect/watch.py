"""`boardlab history watch`: the bisect that starts itself. Run after the nightly builds
(`boardlab nightly`; cron or a systemd timer, as `boardlab lava schedule` prints them): it
asks the history for change points, and for the new ones that are regressions between
two builds named by revisions of the kernel tree it is given, runs `boardlab bisect`
between them on the change points' board, unattended: ONE bisect per board environment
and range, judging every metric that moved there (handle_group); each change point keeps
its own note, pointing to that bisect's result and its own metric's verdict.

What it decides, in one function each (`decide`, `handle`): an improvement is noted, not
bisected; a build not named by a revision cannot be bisected; a bisect's own steps are a
series of their own (history.submit.flavour_of), never watched; a rebased branch is
bisected from the merge base (`bisect_from`). A change point is handled once its bisect
has ended, with the culprit or the reason (it did not regress after all, the skipped
revisions the culprit is among); a bisect that fails (the lab, the tree busy, anything
else) is said and tried again on the next watch, up to MAX_ATTEMPTS, then given up, said,
and the watch goes on to the next one. What became of each change point is kept whole
in <data>/notes.json (history.notes; the history page shows it), SQUAD's annotation of
its build points there: a pointer SQUAD did not take is written on the next watch.
What it has handled is remembered in <data>/watched.json, changed under its lock."""
from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path

from boardlab.bisect import BisectError, BisectInputError, BisectLabFault, git, revert, robot, run
from boardlab import log
from boardlab.errors import InputError
from boardlab.files import update_json
from boardlab.judge import boardhealth
from boardlab.history import changes, notes
from boardlab.history.server import HistoryError, HistoryServer
from boardlab.history.submit import BISECT_FLAVOUR, parse_environment

REVISION = re.compile(r"^([0-9a-f]{7,40})$")
MAX_ATTEMPTS = 3
DONE, FAILED, GIVEN_UP = "done", "failed", "given up"


def revision(build: str) -> str | None:
    """The git revision a build is named by (a nightly build's), or None."""
    m = REVISION.match(build)
    return m.group(1) if m else None


def decide(c: changes.ChangePoint) -> tuple[bool, str]:
    """Bisect this change point? (True, "") or (False, why not)."""
    if parse_environment(c.environment)["flavour"] == BISECT_FLAVOUR:
        return False, "a bisect's own steps: not watched"
    if not (revision(c.before) and revision(c.build)):
        return False, "not revisions of a kernel tree: not bisected"
    worse = c.worse()
    if worse is None:
        return False, "not a metric of the catalogue: not bisected"
    if not worse:
        return False, f"an improvement ({c.change_pct:+.2f} %): not bisected"
    return True, ""


def bisect_from(tree: Path, good: str, bad: str) -> tuple[str | None, str]:
    """(the good end to bisect from, what to say of it). A rebased branch's last good
    build is not an ancestor of its first bad one (git bisect refuses the range): it is
    bisected from their merge base, or said not bisectable when there is none. Revisions
    the tree lacks are left to the bisect to refuse."""
    r = subprocess.run(["git", "-C", str(tree), "merge-base", "--is-ancestor", good, bad],
                       capture_output=True)
    if r.returncode != 1:     # 0: an ancestor; 128: a revision unknown (the bisect says so)
        return good, ""
    base = git(tree, "merge-base", good, bad, check=False)
    if not base:
        return None, f"not bisected: {good} is not an ancestor of {bad} and they have no merge base"
    return base, (f"bisected from their merge base {base[:12]}: {good} is not an ancestor of "
                  f"{bad} (the branch was rebased)")


def same_range(a: changes.ChangePoint, b: changes.ChangePoint) -> bool:
    """Two change points of one board and kernel flavour over one good..bad range of
    builds, whatever the clocks their metrics are counted on (SQUAD's environment names
    the clock: guest_login and free_used moving over one range are one bisect, not two):
    one bisect answers both."""
    def where(c):
        env = parse_environment(c.environment)
        return env["board"], env["flavour"]
    return (where(a), a.before, a.build) == (where(b), b.before, b.build)


def _entry(c: changes.ChangePoint, entry: dict | None) -> dict:
    return dict(entry or {}, change=c.line(), good=revision(c.before), bad=revision(c.build),
                regression=bool(c.worse()))    # the KCIDB export's FAIL (history.kcidb)


def handle(c: changes.ChangePoint, tree: Path, entry: dict | None, bisect=run.start,
           others: list | None = None) -> dict:
    """The change point decided and, if it is to be, bisected: its entry in watched.json
    (state done, failed or given up; result, note, attempts; the culprit's report).
    others: the metric on the other boards and configs over the range (robot.alongside)."""
    return handle_group([c], tree, {notes.key(c): entry}, bisect, {notes.key(c): others})[notes.key(c)]


def _decided(points: list, entries: dict) -> tuple[dict, list]:
    """({key: entry}, the change points to bisect): each decided; one on a drifting board
    is the lab's, not the kernel's: tried again later, naming no culprit."""
    out, go = {}, []
    for c in points:
        key = notes.key(c)
        entry = _entry(c, entries.get(key))
        ok, why = decide(c)
        drift = boardhealth.not_the_kernel(parse_environment(c.environment)["board"]) if ok else None
        if drift:
            out[key] = _failed(entry, entry.get("attempts", 0), drift)
        elif ok:
            go.append(c)
            out[key] = entry
        else:
            out[key] = dict(entry, state=DONE, result=why, note=why)
    return out, go


def handle_group(points: list, tree: Path, entries: dict, bisect=run.start, others_of: dict | None = None) -> dict:
    """Change points of one board environment and one good..bad range (same_range), each
    decided, those to be bisected in ONE bisect of all their metrics -> {key: its entry}:
    each change point keeps its own entry and note, all pointing to the one bisect's
    result, each with its own metric's verdict at the first bad commit (or why it was not
    bisected: it did not regress at the bad end). others_of: {key: the metric on the other
    boards and configs over the range}, for the culprit's report."""
    out, go = _decided(points, entries)
    if not go:
        return out
    first = out[notes.key(go[0])]
    good, said = bisect_from(tree, first["good"], first["bad"])
    if good is None:
        return dict(out, **{notes.key(c): dict(out[notes.key(c)], state=DONE, result=said, note=said)
                            for c in go})
    said = f"{said}; " if said else ""
    metrics = [c.metric.replace("/", ".") for c in go]
    attempts = {notes.key(c): out[notes.key(c)].get("attempts", 0) + 1 for c in go}
    try:
        b = bisect(tree, good, first["bad"], ",".join(metrics), board=go[0].environment.split(".")[0])
    except (BisectLabFault, BisectInputError) as e:    # the lab or the tree, not the kernel: again later
        return dict(out, **{k: _failed(out[k], n, f"{said}bisect failed: {_line(e)}") for k, n in attempts.items()})
    except BisectError as e:                     # it ended, with a reason (did not regress, ...)
        return dict(out, **{k: dict(out[k], state=DONE, attempts=n, result=f"{said}not bisected: {_line(e)}",
                                    note=f"{said}not bisected: {_line(e)}") for k, n in attempts.items()})
    except Exception as e:  # noqa: BLE001 - unattended: said, kept, tried again; the watch goes on
        return dict(out, **{k: _failed(out[k], n, f"{said}bisect failed: {type(e).__name__}: {_line(e)}")
                            for k, n in attempts.items()})
    dropped_of = getattr(b, "dropped", None) or {}
    report = _report(b, {metric: {"others": (others_of or {}).get(notes.key(c)), "seen": c.line()}
                         for c, metric in zip(go, metrics) if metric not in dropped_of})
    for c, metric in zip(go, metrics):
        key = notes.key(c)
        dropped = dropped_of.get(metric)
        others = [m for m in metrics if m != metric]
        if dropped:      # bisected with others, but this one did not regress at the bad end
            result = (f"{said}not bisected: {metric} {dropped}; the bisect of "
                      f"{', '.join(others)} over the range went on without it")
            note = f"{result} (bisect {b.run_dir})"
        else:
            result = said + _result(b)
            at = ((b.first_bad or {}).get("metrics") or {}).get(metric)
            where = f"; {report['revert']}; report {report['report']}" if report else ""
            note = (f"{result} (bisect {b.run_dir}{where})"
                    + (f"; {run.verdict_line(metric, at)}" if at else ""))
        out[key] = dict(out[key], state=DONE, attempts=attempts[key], run_dir=b.run_dir,
                        first_bad=None if dropped else b.first_bad, candidates=b.candidates,
                        result=result, note=note, **({"bisected_with": others} if others else {}),
                        **({} if dropped else report))
    return out


def _report(b, sections: dict) -> dict:
    """The culprit's report (written by the bisect) completed with the change points and
    what the history measured alongside, one section per metric ({metric: {others, seen}}):
    {"report": its path, "revert": what the revert found}, or {} when the bisect wrote none."""
    path = Path(b.run_dir) / robot.REPORT
    if not (b.first_bad and path.exists() and sections):
        return {}
    try:
        robot.write(b.run_dir, sections=sections)
    except Exception as e:  # noqa: BLE001 - unattended: the culprit and the bisect's report stand
        log.progress(f"watch: {path}: not completed with the history's figures: {type(e).__name__}: {_line(e)}")
    return {"report": str(path), "revert": revert.load(b.run_dir)["state"]}


def _failed(entry: dict, attempt: int, result: str) -> dict:
    """A bisect that failed: tried again on the next watch, or given up after MAX_ATTEMPTS,
    said (the history page shows the note), never dropped in silence."""
    if attempt < MAX_ATTEMPTS:
        return dict(entry, state=FAILED, attempts=attempt, result=result,
                    note=f"{result} (attempt {attempt} of {MAX_ATTEMPTS}: tried again on the next watch)")
    return dict(entry, state=GIVEN_UP, attempts=attempt, result=result,
                note=f"given up after {attempt} attempts: {result}")


def record(entry: dict) -> dict:
    """The change point's record for the history page (history.notes), its note whole."""
    return {"change": entry["change"], "state": entry["state"], "note": entry.get("note") or entry["result"],
            **({"report": entry["report"]} if entry.get("report") else {})}


def _result(b) -> str:
    """What a bisect that ended found, in a line: the culprit, or the skipped revisions it
    is among (a range all skipped), or that none was found."""
    if b.first_bad:
        return f"first bad commit {b.first_bad['rev'][:12]} {b.first_bad['subject']!r}"
    if b.candidates:
        return ("no first bad commit: skipped revisions only, it is one of "
                + ", ".join(f"{c['rev'][:12]} {c['subject']!r} ({c['why']})" for c in b.candidates))
    return "no first bad commit found"


def _line(e: Exception) -> str:
    return (str(e).splitlines() or [""])[0]


def _due(entry: dict | None) -> bool:
    return entry is None or (entry.get("state") == FAILED and entry.get("attempts", 0) < MAX_ATTEMPTS)


def _point(server: HistoryServer, c, entry: dict, progress) -> None:
    """The pointer to the history page on the change point's build in SQUAD; kept as not
    noted when SQUAD does not take it (the next watch writes it). The note itself is in
    notes.json already."""
    if entry.get("noted"):
        return
    try:
        changes.annotate(server, [c])
        entry["noted"] = True
    except (HistoryError, OSError) as e:
        entry["noted"] = False
        progress(f"watch: {c.build}: the note is kept for the next watch: {_line(e)}")


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _store(path: Path, key: str, entry: dict) -> None:
    """One change point's entry into watched.json, read afresh and written whole under its
    lock: what another watch wrote meanwhile is kept."""
    update_json(path, lambda seen: seen.__setitem__(key, entry))


def watch(server: HistoryServer, tree: Path, board=None, metric=None, progress=print,
          bisect=run.start) -> list[dict]:
    """Each change point not handled yet, decided and bisected, its record kept for the
    page; returns the entries of those handled (or tried) in this watch."""
    path = server.data / "watched.json"
    records = notes.read(server.data)
    series, _ = changes.sample_series(server, board, metric)    # also the culprit report's other boards
    points = changes.find(server, board=board, metric=metric, samples=series)
    done, handled = [], set()
    for c in points:
        key = notes.key(c)
        entry = _load(path).get(key)    # afresh: another watch may have handled it meanwhile
        if key not in handled and _due(entry):
            group = [c]
            if decide(c)[0]:           # the others of its board and range: one bisect for all
                group += [p for p in points if p is not c and notes.key(p) not in handled
                          and same_range(p, c) and decide(p)[0] and _due(_load(path).get(notes.key(p)))]
                progress(f"watch: {c.environment}: bisecting {c.before}..{c.build} in {tree} for "
                         + ", ".join(p.line() for p in group))
            got = handle_group(group, tree, {notes.key(p): _load(path).get(notes.key(p)) for p in group},
                               bisect, {notes.key(p): robot.alongside(p, series, points) for p in group})
            for k, e in got.items():
                _store(path, k, e)     # handled: never twice
                progress(f"watch: {k}: {e['state']}: {e['result']}")
                done.append(e)
                handled.add(k)
            entry = got[key]
        if records.get(key) != record(entry):
            notes.keep(server.data, key, record(entry))
        noted = entry.get("noted")
        _point(server, c, entry, progress)
        if entry.get("noted") != noted:      # the pointer's fate kept; nothing else changed
            _store(path, key, entry)
    return done


def cmd_watch(args):
    if not args.tree:
        raise InputError("--tree (the kernel tree the builds are revisions of) is needed")
    tree = Path(args.tree)
    if not (tree / ".git").exists():
        raise InputError(f"--tree {args.tree}: not a git work tree")
    server = HistoryServer(args.lab, port=args.port, data=Path(args.data) if args.data else None)
    bisect = functools.partial(run.start, revert=False) if args.no_revert else run.start
    done = watch(server, tree, board=args.board, metric=args.metric, bisect=bisect)
    failed = [d for d in done if d["state"] == FAILED]
    given_up = [d for d in done if d["state"] == GIVEN_UP]
    print(f"history {server.lab}: {len(done)} change point(s) handled"
          + (f", {len(failed)} failed (tried again on the next watch)" if failed else "")
          + (f", {len(given_up)} given up (said on the history page)" if given_up else ""))
    return 1 if failed or given_up or any(d.get("first_bad") for d in done) else 0   # a culprit named: say so
