"""`boardlab lab check BOARD`: the board's health check through labgrid, the rule LAVA's
health-check job runs (boardlab.judge.health)."""
from __future__ import annotations

import os
import time
from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import board_path, env_path, load_board
from boardlab.judge.health import CheckFailed, check_board


def env_of(board: str, env: str | None) -> Path:
    """The board's labgrid environment (lab/<board>.yaml), or the one given."""
    if env:
        if not Path(env).is_file():
            raise InputError(f"{env}: no such labgrid environment")
        return Path(env)
    if not board_path(board).is_file():
        raise InputError(f"{board_path(board)}: no such board")
    return env_path(load_board(board).name)


def cmd_check(args) -> int:
    env = env_of(args.board, args.env)
    from boardlab.vlab.host import prepare_if_virtual
    prepare_if_virtual(load_board(args.board))
    log_dir = Path(args.log_dir or f"results/lab-check-{args.board}-{time.strftime('%Y%m%d-%H%M%S')}")
    check = check_board(env, log_dir)
    print(f"console logs: {log_dir}")
    return _performance(load_board(args.board), check) if check.measured and not args.no_history else 0


def _performance(board, check) -> int:
    """The check's figures kept in the board's history and judged against its own level: a
    board drifting is quarantined (exit 1)."""
    from boardlab.judge import boardhealth
    from boardlab.lab import healthlog
    health = boardhealth.record(board, check.kernel, check.measured,
                                identity=healthlog.reference_identity(board, check.kernel))
    print(f"{board.name}: performance: {health.line()} ({boardhealth.path_of(board.name)})")
    if health.state != "drifting":
        return 0
    print(healthlog.quarantine_line(board.name, health))
    _tell_lab(board, healthlog.description(health), "MAINTENANCE")
    return 1


def _tell_lab(board, description: str, health: str) -> None:
    from boardlab.sharing.placehold import shared_with_lava
    from boardlab.facts.labfacts import load_lab
    from boardlab.lab import healthlog
    from boardlab.lava.server import RECHECK_IDENTITY
    shared = shared_with_lava(board) is not None
    healthlog.tell_lab(board.name, description, health, RECHECK_IDENTITY, load_lab().coordinator, lava=shared)


def cmd_accept(args) -> int:
    from boardlab.judge import boardhealth
    boardhealth.accept(args.board, args.reason)
    from boardlab.judge.boardhealth import RECENT, REFERENCE_MIN
    print(f"{args.board}: its new level accepted ({args.reason}): its next {REFERENCE_MIN + RECENT} checks make its reference")
    _tell_lab(load_board(args.board), "", "UNKNOWN")
    return 0


def cmd_recheck(args):
    from boardlab.lava.server import recheck
    print(f"{len(recheck(args.identity))} Bad board(s) set Unknown: LAVA checks each before any job")
    return 0


def cmd_status(args) -> int:
    if args.board:
        from boardlab.judge.mdc import DEFAULT_BUDGET
        return _detectable(args.board, DEFAULT_BUDGET if args.budget is None else args.budget)
    from boardlab.lab import glance
    rows = glance.glance(None if args.no_lava else args.lava, lab_host=args.lab_host,
                         arbiter_state=Path(args.arbiter_state) if args.arbiter_state else glance.ARBITER_STATE)
    print(glance.as_json(rows) if args.json else glance.render(rows))
    return 1 if any(r.problem for r in rows) else 0


def cmd_power(args) -> int:
    from boardlab.lab.powerguard import power
    power(args.board, args.action)
    return 0


def _detectable(board: str, budget: int) -> int:
    """`lab status --board B`: the smallest change each stored figure of the board decides."""
    from boardlab.pages import detectable_page
    if not board_path(board).is_file():
        raise InputError(f"{board_path(board)}: no such board")
    if budget < 1:
        raise InputError(f"--budget {budget}: boots, 1 or more")
    text = detectable_page.render(board, budget)
    print(text or f"{board}: no stored baseline with samples (kernels/*/{board}.yaml): nothing to say yet")
    return 0


def add_parser(sub):
    lab = sub.add_parser("lab", help="status: the lab at a glance; check: a board's health check through "
                                     "labgrid; recheck: LAVA's Bad boards checked again")
    verbs = lab.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("status", help="every lab host, exporter and board: up or down, who holds it, "
                                        "LAVA health, last check and result, LAVA's arbiter, waiting "
                                        "reservations; exit 1 when something is down, Bad, in Maintenance, "
                                        "Unknown or Looping, overlapping, held too long or waiting")
    p.add_argument("--lab-host", default=None, help="only this lab host and its boards")
    p.add_argument("--lava", default="http://127.0.0.1:8180/", help="the LAVA server (default: the local one)")
    p.add_argument("--no-lava", action="store_true", help="a lab without LAVA")
    p.add_argument("--arbiter-state", default=None, help="LAVA's arbiter's state file (default: this "
                                                          "host's, /var/lib/boardlab/arbiter/arbiter.json)")
    p.add_argument("--json", action="store_true", help="as JSON (for a scheduler)")
    p.add_argument("--board", default=None, help="instead: what this board can see, the smallest change "
                                                 "each of its stored figures decides (docs/detectable/<board>.md)")
    p.add_argument("--budget", type=int, default=None, help="with --board: boots a side (default the suites' 5)")
    p.set_defaults(func=cmd_status)
    p = verbs.add_parser("check", help="power on, to a shell (and on its NFS root), the boot and memory "
                                       "within their bands, power off: exit 0 good, 1 bad (with why)")
    p.add_argument("board", help="a board (boards/<board>.yaml)")
    p.add_argument("--env", default=None, help="a labgrid environment instead of lab/<board>.yaml")
    p.add_argument("--log-dir", default=None, help="console logs (default results/lab-check-<board>-<time>)")
    p.add_argument("--no-history", action="store_true", help="keep no figures in the board's health history")
    p.set_defaults(func=cmd_check, errors=(CheckFailed,))
    p = verbs.add_parser("accept", help="a drifting board's new level accepted (repaired, re-baselined): "
                                        "its reference starts again, LAVA checks it before any job")
    p.add_argument("board", help="a board (boards/<board>.yaml)")
    p.add_argument("--reason", required=True, help="why, kept in its history")
    p.set_defaults(func=cmd_accept)
    p = verbs.add_parser("recheck", help="each board LAVA has as Bad set Unknown, so LAVA runs its "
                                         "health check before any job: a repaired board comes back by itself "
                                         "(hourly from the schedule)")
    from boardlab.lava.server import RECHECK_IDENTITY
    p.add_argument("--identity", default=os.environ.get("LAVACLI_IDENTITY") or RECHECK_IDENTITY,
                   help=f"lavacli identity (default: $LAVACLI_IDENTITY, else the project's {RECHECK_IDENTITY}, "
                        "which `boardlab lava server up` writes and the hourly unit uses)")
    p.set_defaults(func=cmd_recheck)
    p = verbs.add_parser("power", help="LAVA's power command (its device dictionaries name it): only while "
                                       "the board's place is LAVA's, its job's NFS root exported to it alone")
    p.add_argument("board", help="a board (boards/<board>.yaml)")
    p.add_argument("action", choices=["on", "off"])
    p.set_defaults(func=cmd_power)
    return lab
