"""`boardlab history watch`: the bisect that starts itself. Run after the nightly runs
(cron or a systemd timer, as `boardlab lava schedule` prints them for the jobs): it asks
the history for change points, and for each new one whose two builds are revisions of
the kernel tree it is given (a build named by its git revision, or `bisect-<rev>` as the
bisect's own steps are) runs `boardlab bisect` between them on the change point's board
and metric, unattended, and notes the first bad commit on the build in SQUAD. What it has
handled is remembered (<data>/watched.json): a change point is bisected once."""
from __future__ import annotations

import json
import re
from pathlib import Path

from boardlab.bisect import run
from boardlab.errors import InputError
from boardlab.files import atomic_write
from boardlab.history import changes
from boardlab.history.server import HistoryServer

REVISION = re.compile(r"^(?:bisect-)?([0-9a-f]{7,40})$")


def revision(build: str) -> str | None:
    """The git revision a build is named by, or None."""
    m = REVISION.match(build)
    return m.group(1) if m else None


def watch(server: HistoryServer, tree: Path, board=None, metric=None, progress=print) -> list[dict]:
    """Bisect each change point not handled yet; returns what was done, one dict each."""
    path = server.data / "watched.json"
    seen = json.loads(path.read_text()) if path.exists() else {}
    done = []
    for c in changes.find(server, board=board, metric=metric):
        key = f"{c.metric}@{c.environment}@{c.build}"
        if key in seen:
            continue
        good, bad = revision(c.before), revision(c.build)
        entry = {"change": c.line(), "good": good, "bad": bad}
        if not (good and bad):
            entry["result"] = "not revisions of a kernel tree: not bisected"
        else:
            progress(f"watch: {c.line()}: bisecting {good}..{bad} in {tree}")
            b = run.start(tree, good, bad, c.metric.replace("/", "."), board=c.environment.split(".")[0])
            entry["run_dir"] = b.run_dir
            entry["first_bad"] = b.first_bad
            entry["result"] = (f"first bad commit {b.first_bad['rev'][:12]} {b.first_bad['subject']!r}"
                               if b.first_bad else "no first bad commit found")
            changes.annotate(server, [c], note=f"{entry['result']} (bisect {b.run_dir})")
        progress(f"watch: {key}: {entry['result']}")
        seen[key] = entry
        atomic_write(path, json.dumps(seen, indent=1) + "\n")
        done.append(entry)
    return done


def cmd_watch(args):
    if not args.tree:
        raise InputError("--tree (the kernel tree the builds are revisions of) is needed")
    server = HistoryServer(args.lab, port=args.port, data=Path(args.data) if args.data else None)
    done = watch(server, Path(args.tree), board=args.board, metric=args.metric)
    print(f"history {server.lab}: {len(done)} new change point(s) handled")
    return 1 if any(d.get("first_bad") for d in done) else 0   # a culprit named: say so
