"""`boardlab history watch`: the bisect that starts itself. Run after the nightly builds
(`boardlab nightly`; cron or a systemd timer, as `boardlab lava schedule` prints them): it
asks the history for change points, and for each new one that is a regression between
two builds named by revisions of the kernel tree it is given, runs `boardlab bisect`
between them on the change point's board and metric, unattended, and notes the first bad
commit on the build in SQUAD.

What it decides, in one function each (`decide`, `handle`): an improvement is noted, not
bisected; a build not named by a revision cannot be bisected; a bisect's own steps are a
series of their own (history.submit.flavour_of), never watched. A change point is handled
once its bisect has ended, with the culprit or the reason (it did not regress after all,
no first bad commit); a bisect that fails (the lab, the tree busy, anything else) is said
and tried again on the next watch, up to MAX_ATTEMPTS, and the watch goes on to the next
one. A note SQUAD did not take is kept and written on the next watch: none is lost.
What it has handled is remembered in <data>/watched.json."""
from __future__ import annotations

import json
import re
from pathlib import Path

from boardlab.bisect import BisectError, BisectInputError, LabFault, run
from boardlab.errors import InputError
from boardlab.files import atomic_write
from boardlab.history import changes
from boardlab.history.server import HistoryError, HistoryServer
from boardlab.history.submit import BISECT_FLAVOUR, parse_environment

REVISION = re.compile(r"^([0-9a-f]{7,40})$")
MAX_ATTEMPTS = 3
DONE, FAILED = "done", "failed"


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


def handle(c: changes.ChangePoint, tree: Path, entry: dict | None, bisect=run.start) -> dict:
    """The change point decided and, if it is to be, bisected: its entry in watched.json
    (state done or failed, result, note, attempts)."""
    entry = dict(entry or {}, change=c.line(), good=revision(c.before), bad=revision(c.build),
                 regression=bool(c.worse()))    # the KCIDB export's FAIL (history.kcidb)
    go, why = decide(c)
    if not go:
        return dict(entry, state=DONE, result=why, note=why if why.startswith("an improvement") else "")
    attempt = entry.get("attempts", 0) + 1
    try:
        b = bisect(tree, entry["good"], entry["bad"], c.metric.replace("/", "."),
                   board=c.environment.split(".")[0])
    except (LabFault, BisectInputError) as e:    # the lab or the tree, not the kernel: again later
        return dict(entry, state=FAILED, attempts=attempt, result=f"bisect failed: {_line(e)}")
    except BisectError as e:                     # it ended, with a reason (did not regress, ...)
        return dict(entry, state=DONE, attempts=attempt, result=f"not bisected: {_line(e)}",
                    note=f"not bisected: {_line(e)}")
    except Exception as e:  # noqa: BLE001 - unattended: said, kept, tried again; the watch goes on
        return dict(entry, state=FAILED, attempts=attempt,
                    result=f"bisect failed: {type(e).__name__}: {_line(e)}")
    result = (f"first bad commit {b.first_bad['rev'][:12]} {b.first_bad['subject']!r}"
              if b.first_bad else "no first bad commit found")
    return dict(entry, state=DONE, attempts=attempt, run_dir=b.run_dir, first_bad=b.first_bad,
                result=result, note=f"{result} (bisect {b.run_dir})")


def _line(e: Exception) -> str:
    return (str(e).splitlines() or [""])[0]


def _due(entry: dict | None) -> bool:
    return entry is None or (entry.get("state") == FAILED and entry.get("attempts", 0) < MAX_ATTEMPTS)


def _note(server: HistoryServer, c, entry: dict, progress) -> None:
    """The entry's note on the change point's build; kept as not noted when SQUAD does not
    take it (the next watch writes it)."""
    if not entry.get("note") or entry.get("noted"):
        return
    try:
        changes.annotate(server, [c], note=entry["note"])
        entry["noted"] = True
    except (HistoryError, OSError) as e:
        entry["noted"] = False
        progress(f"watch: {c.build}: the note is kept for the next watch: {_line(e)}")


def watch(server: HistoryServer, tree: Path, board=None, metric=None, progress=print,
          bisect=run.start) -> list[dict]:
    """Each change point not handled yet, decided and bisected; returns the entries of
    those handled (or tried) in this watch."""
    path = server.data / "watched.json"
    seen = json.loads(path.read_text()) if path.exists() else {}
    done = []
    for c in changes.find(server, board=board, metric=metric):
        key = f"{c.metric}@{c.environment}@{c.build}"
        if _due(seen.get(key)):
            if decide(c)[0]:
                progress(f"watch: {c.line()}: bisecting {c.before}..{c.build} in {tree}")
            seen[key] = handle(c, tree, seen.get(key), bisect)
            atomic_write(path, json.dumps(seen, indent=1) + "\n")   # handled: never twice
            progress(f"watch: {key}: {seen[key]['state']}: {seen[key]['result']}")
            done.append(seen[key])
        noted = seen[key].get("noted")
        _note(server, c, seen[key], progress)
        if seen[key].get("noted") != noted:      # the note's fate kept; nothing else changed
            atomic_write(path, json.dumps(seen, indent=1) + "\n")
    return done


def cmd_watch(args):
    if not args.tree:
        raise InputError("--tree (the kernel tree the builds are revisions of) is needed")
    tree = Path(args.tree)
    if not (tree / ".git").exists():
        raise InputError(f"--tree {args.tree}: not a git work tree")
    server = HistoryServer(args.lab, port=args.port, data=Path(args.data) if args.data else None)
    done = watch(server, tree, board=args.board, metric=args.metric)
    failed = [d for d in done if d["state"] == FAILED]
    print(f"history {server.lab}: {len(done)} change point(s) handled"
          + (f", {len(failed)} failed (tried again on the next watch)" if failed else ""))
    return 1 if failed or any(d.get("first_bad") for d in done) else 0   # a culprit named: say so
