"""`boardlab history ...`: the results database's verbs."""
from __future__ import annotations

import json
from pathlib import Path

from boardlab.history.server import DEFAULT_PORT, HistoryError, HistoryServer


def cmd_history(args):
    server = HistoryServer(args.lab, port=args.port, data=Path(args.data) if args.data else None)
    if args.action == "up":
        server.up()
    elif args.action == "down":
        server.down()
    st = server.status()
    if args.action == "status" and args.json:
        print(json.dumps(st, indent=2))
    elif args.action != "down":
        state = f"running, pid {st['squad_pid']}" if st["squad_pid"] else "stopped"
        print(f"history {st['lab']}: SQUAD {state}, {st['url']}/{st['project']}/ (data {st['data']})")
    return 3 if args.action == "status" and not st["squad_pid"] else 0


def add_parser(sub):
    h = sub.add_parser("history", help="the lab's results database (SQUAD on 127.0.0.1): up, down, status")
    h.add_argument("action", choices=["up", "down", "status"])
    h.add_argument("--lab", default="vlab", help="the lab: SQUAD's project boardlab/<lab>")
    h.add_argument("--port", type=int, default=None,
                   help=f"127.0.0.1 port of the web server (default {DEFAULT_PORT}, or the last up's)")
    h.add_argument("--data", default=None,
                   help="data directory (default $BOARDLAB_HISTORY_DIR/<lab> or /var/lib/boardlab/history/<lab>)")
    h.add_argument("--json", action="store_true", help="status as JSON")
    h.set_defaults(func=cmd_history, errors=(HistoryError,))
