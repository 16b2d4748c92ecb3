"""`boardlab history ...`: the results database's verbs."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from boardlab.errors import InputError

from boardlab.history.server import DEFAULT_PORT, HistoryError, HistoryServer
from boardlab.judge.results import load_run


def _land(server, args):   # the main job: only where history is kept
    from boardlab.history.submit import land
    for run in args.runs:   # a bad run is bad input whether or not the lab keeps a history
        load_run(Path(run))
    for run in args.runs:
        if land(Path(run), args.lab) and server.is_up():   # the series beside the run's report
            from boardlab.history import charts
            boards = sorted({m["board"] for m in load_run(Path(run))["metrics"]})
            out = charts.page(server, Path(run) / "history", board=boards[0] if len(boards) == 1 else None)
            print(f"history {server.lab}: {out}")
    return 0


def _submit(server, args):
    from boardlab.history import submit
    subs = [s for run in args.runs for s in submit.submissions(Path(run))]   # every run read first
    if not server.keeps_history():   # a queue no one will send: refused before it is made
        raise InputError(f"lab {server.lab} keeps no history ({server.data} has no submit token): "
                         f"`boardlab history up --lab {server.lab}` starts one; nothing queued")
    if subs:   # queued before it is sent: nothing is lost if SQUAD is down
        submit.queue(server, subs)
    added, had, left = submit.flush(server, progress=print)
    print(f"history {server.lab}: {added} added, {had} there already, {left} left queued"
          + (f" ({submit.queue_dir(server)}; SQUAD down? boardlab history up)" if left else ""))
    return 1 if left else 0


def _changes(server, args):
    from boardlab.history import changes
    points = changes.find(server, board=args.board, metric=args.metric, since=args.since)
    for c in points:
        print(c.line())
    noted = changes.annotate(server, points) if points else 0
    print(f"history {server.lab}: {len(points)} change point(s)"
          + (f", {noted} noted on their builds in SQUAD" if points else ""))
    return 0


def _export(server, args):
    if not args.kcidb:
        raise InputError("--kcidb (the one format it writes) is needed")
    from boardlab.files import atomic_write
    from boardlab.history import kcidb
    doc = kcidb.document(server)
    version = kcidb.validate(doc)
    out = Path(args.out or f"results/history-{server.lab}.kcidb.json")
    atomic_write(out, json.dumps(doc, indent=1) + "\n")
    print(f"history {server.lab}: {len(doc['checkouts'])} checkouts, {len(doc['builds'])} builds, "
          f"{len(doc['tests'])} tests, {len(doc.get('issues', []))} issues "
          f"({len(doc.get('incidents', []))} incidents), valid KCIDB {version}: {out}")
    return 0


def _page(server, args):
    from boardlab.history import charts
    out = charts.page(server, Path(args.out or f"results/history-{server.lab}"), board=args.board,
                      metric=args.metric, since=args.since)
    print(f"history {server.lab}: {out}")
    return 0


def _server(server, args):   # up, down, status
    if args.action == "up":
        server.up()
    elif args.action == "down":
        server.down()
    st = server.status()
    if args.action == "status" and args.json:
        print(json.dumps(st, indent=2))
    elif args.action != "down":
        state = f"running, pid {st['squad_pid']}" if st["squad_pid"] else "stopped"
        print(f"history {st['lab']}: SQUAD {state}, {st['url']}/{st['project']}/ "
              f"(data {st['data']}, database: {st['db']})")
    return 3 if args.action == "status" and not st["squad_pid"] else 0


ACTIONS = {"submit": _submit, "flush": _submit, "changes": _changes, "export": _export, "page": _page,
           "up": _server, "down": _server, "status": _server}


def check_filters(args):
    """--since and --metric, checked before the history is asked: a typo would otherwise
    match nothing, and say 0 change points in silence."""
    if getattr(args, "since", None):
        try:
            dt.date.fromisoformat(args.since)
        except ValueError:
            raise InputError(f"--since {args.since}: not a date (YYYY-MM-DD)") from None
    if getattr(args, "metric", None):
        from boardlab.measure import catalogue
        key = args.metric.replace("/", ".")
        if key.split(".", 1)[0] in catalogue.SPAN_KINDS:
            catalogue.span(key)
        else:
            catalogue.spec(key)     # UnknownMetric: one line naming the catalogue


def cmd_history(args):
    check_filters(args)
    if args.action == "watch":   # the bisect's own verb (bisect.watch), set by the command line
        return args.watch(args)
    server = HistoryServer(args.lab, port=args.port, data=Path(args.data) if args.data else None,
                           db=args.db)
    if args.action == "submit" and args.if_kept:
        return _land(server, args)
    return ACTIONS[args.action](server, args)


def add_parser(sub):
    h = sub.add_parser("history", help="the lab's results database (SQUAD on 127.0.0.1): up, down, status; "
                                         "submit RUN... (queued, then sent); flush (the queue); "
                                         "changes (change points, Apache Otava); watch (bisect new ones); "
                                         "page (the series as charts, change points marked); "
                                         "export --kcidb (KCIDB JSON, validated)")
    h.add_argument("action", choices=["up", "down", "status", "submit", "flush", "changes", "watch",
                                      "page", "export"])
    h.add_argument("runs", nargs="*", help="submit: run directories (results.json)")
    h.add_argument("--lab", default="vlab", help="the lab: SQUAD's project boardlab/<lab>")
    h.add_argument("--port", type=int, default=None,
                   help=f"127.0.0.1 port of the web server (default {DEFAULT_PORT}, or the last up's)")
    h.add_argument("--data", default=None,
                   help="data directory (default $BOARDLAB_HISTORY_DIR/<lab> or /var/lib/boardlab/history/<lab>)")
    h.add_argument("--json", action="store_true", help="status as JSON")
    h.add_argument("--db", choices=["sqlite", "postgresql"], default=None,
                   help="up: where SQUAD keeps its database: a SQLite file in the data directory (default), "
                        "or the host's PostgreSQL cluster (the LAVA server's); kept from the first up")
    h.add_argument("--board", help="changes, page: this board's series only")
    h.add_argument("--metric", help="changes: this metric only (suite.name)")
    h.add_argument("--since", help="changes: builds from this date on (YYYY-MM-DD)")
    h.add_argument("--out", help="page: the directory of history.html (default results/history-<lab>); "
                                 "export: the file (default results/history-<lab>.kcidb.json)")
    h.add_argument("--kcidb", action="store_true", help="export: as KCIDB JSON (kcidb-io's schema)")
    h.add_argument("--tree", help="watch: the kernel tree (git) whose revisions the builds are")
    h.add_argument("--no-revert", action="store_true",
                   help="watch: do not confirm a culprit by reverting it (as `boardlab bisect --no-revert`)")
    h.add_argument("--if-kept", action="store_true",
                   help="submit: only if the lab keeps a history (`history up` was run: its token exists); "
                        "queued while SQUAD is down")
    h.set_defaults(func=cmd_history, errors=(HistoryError,))
    return h
