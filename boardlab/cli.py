"""The `boardlab` command."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from boardlab.errors import BoardlabError, InputError
from boardlab.facts.board import QEMU_CLOCKS, env_path
from boardlab.facts.labfacts import default_board
from boardlab.bisect import cli as bisect_cli
from boardlab.history import cli as history_cli
from boardlab.images import cli as images_cli
from boardlab.kernel import cli as kernel_cli
from boardlab.lab import cli as lab_cli
from boardlab.lava import cli as lava_cli
from boardlab.measure import clocks, families, workloads


def cmd_vlab(args):
    from boardlab.services.daemons import ServiceError
    from boardlab.vlab.host import VirtualLabHost
    from boardlab.images.boardimages import build_locked
    from boardlab.images.images import ImageBuildError
    from boardlab.vlab.lab import VirtualLab, format_lab_status, format_status, status_json
    try:
        lab = VirtualLabHost(args.lab) if args.lab else VirtualLab()
        show = format_status if args.lab else format_lab_status
        if args.action == "up":
            lab.up(args.board)
            print(show(lab.status()))
        elif args.action == "down":
            VirtualLab().down(force=args.force, host=args.lab)   # through the leases, one host or all
        elif args.action == "build":
            for name in args.board:
                lab.board(name)
            for b in (b for b in lab.boards if not args.board or b.name in args.board):
                build_locked(b, force=args.force)
        elif args.action == "clock":
            if args.setting not in (None, *QEMU_CLOCKS):
                raise InputError(f"boardlab vlab clock {args.setting}: {' or '.join(QEMU_CLOCKS)}")
            for name, clock in lab.clock(args.setting).items():
                print(f"{name}: {clock}" + ("" if not args.setting else " from its next power-on"))
        elif args.action == "load":
            from boardlab.vlab.boardload import at_switch
            for name in args.board:   # a board of no virtual lab host: one line, exit 2
                lab.board(name)
            for b in (b for b in lab.boards if not args.board or b.name in args.board):
                print(f"{b.name}: {at_switch(b, args.setting)}" + ("" if not args.setting else " from its next power-on"))
        else:
            st = lab.status()
            print(status_json(st) if args.json else show(st))
            return 0 if lab.is_up() else 3
    except (ServiceError, ImageBuildError) as e:   # the lab's own (LabError) and its services'
        print(f"boardlab vlab {args.action}: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_gen(args):
    from boardlab.envgen import write_all
    stale = write_all(check=args.check)
    for p in stale:
        print(f"{'stale' if args.check else 'wrote'}: {p}")
    return 1 if (args.check and stale) else 0


def cmd_boot(args):
    """Boot a board to a shell once, print its milestones (a smoke test by hand)."""
    from boardlab.boot.session import open_env
    from boardlab.boot.bootlog import milestone_lines
    from boardlab.boot.strategy import BootError
    from boardlab.vlab.host import prepare_if_virtual
    env = open_env(args.env or env_path(default_board()))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    prepare_if_virtual(strategy.board)
    strategy.select(kernel=args.kernel, root=args.root, phase_log=args.phases)
    try:
        strategy.transition("shell")
        rec = strategy.last_boot
        print("\n".join(milestone_lines(strategy.board, rec)))
        print(f"console log: {rec.log_path}")
        print("\n".join(target.get_driver("ShellDriver").run_check("uname -a")))
        if args.phases:
            from boardlab.judge.bootspans import format_boot
            print(format_boot(rec, clocks.guest_clock(strategy.board, rec.qemu_clock)))
    except BootError as e:
        print(f"boot failed: {e}", file=sys.stderr)
        return 1
    finally:
        if not args.keep_on:
            strategy.transition("off")
    return 0


def cmd_report(args):
    from boardlab.pages.report import html_page, markdown
    try:
        if args.timing:
            from boardlab.pages import timing
            print(timing.table(Path(args.run)), end="")
            return 0
        if args.study:
            from boardlab.pages import study_table
            print(study_table.markdown([args.run] + ([args.run2] if args.run2 else [])), end="")
            return 0
        print(markdown(args.run, args.run2, with_summary=True), end="")
        out = Path(args.html) if args.html else (
            Path(args.run) / "report.html" if Path(args.run).is_dir() else Path("report.html"))
        html_page(args.run, args.run2, out)
        print(f"\nHTML report: {out}")
    except ValueError as e:   # the study table of a run with none of the study's boards
        print(f"boardlab report: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_baselines(args):
    if args.action == "seed-reference":
        from boardlab.judge.reference import seed
        written = seed()
    else:
        from boardlab.judge.results import Metric, load_run, update_baselines
        from boardlab.measure import kernelid
        if not args.runs:
            print("boardlab baselines update: name one or more run directories", file=sys.stderr)
            return 2
        docs = [load_run(r, reference=True, judged=True) for r in args.runs]   # exit 2, nothing written
        harnesses = {d["meta"].get("source") for d in docs}   # lava runs: LAVA's own file
        if len(harnesses) > 1:
            print(f"boardlab baselines update: runs of different harnesses "
                  f"({', '.join(sorted(h or 'pytest' for h in harnesses))}): pool one kind at a time",
                  file=sys.stderr)
            return 2
        harness = harnesses.pop()
        runs = [[Metric(**m) for m in d["metrics"]] for d in docs]
        if args.keep_host_bound:
            from boardlab.facts.board import load_board
            from boardlab.judge.decide import host_bound
            runs = [[m for m in run if not host_bound(m.clock, load_board(m.board), m.key)] for run in runs]
        identities = {}
        for d in docs:   # runs pooled into one baseline must be of one kernel
            for target, ident in d["meta"].get("kernels", {}).items():
                if target in identities and kernelid.differs(identities[target], ident):
                    print(f"boardlab baselines update: {target}: the runs measured two kernels under "
                          f"one name ({' / '.join(kernelid.differs(identities[target], ident))}): "
                          f"pool one at a time", file=sys.stderr)
                    return 2
                identities[target] = kernelid.merge(identities.get(target), ident)
        written = update_baselines(runs, harness=harness, identities=identities)
    for p in written:
        print(f"wrote: {p}")
    return 0


def cmd_compare(args):
    from boardlab.history.submit import land_compare
    from boardlab.ab import compare
    from boardlab.vlab.host import prepare_if_virtual
    try:
        sides, rows, files = compare.compare(
            str(args.env or env_path(args.board or default_board())), args.kernel or [],
            families=tuple(f.strip() for f in args.families.split(",")), repeats=args.repeats,
            max_repeats=args.max_repeats, jitter_s=args.jitter_seconds,
            out_dir=Path(args.out) if args.out else None, prepare_board=prepare_if_virtual,
            phase_log=args.phases, root=args.root, tools=args.tools)
    except (ValueError, FileNotFoundError) as e:
        raise InputError(str(e)) from None   # main: one line, exit 2
    print(files["markdown"].read_text() + f"\n{files['html']}  {files['json']}")
    land_compare(files["json"])   # the booted kernels' figures, where the lab keeps a history
    return 1 if any(r.cmp and r.cmp.outcome == "regressed" for r in rows) else 0


def cmd_places(args):
    from boardlab.facts.labhosts import lab_hosts
    from boardlab.facts.labfacts import load_lab
    from boardlab.facts.places import sync
    coordinator = args.coordinator or os.environ.get("LG_COORDINATOR") or load_lab().coordinator
    # default: the lab hosts on the lab's management network (places/lab.yaml)
    for lab in [args.lab] if args.lab else [h.name for h in lab_hosts() if h.management]:
        done = sync(lab, coordinator)   # PlacesError: exit 1, said by main()
        print("\n".join(done) if done else f"places of {lab}: up to date")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="boardlab", description="embedded Linux board lab")
    sub = ap.add_subparsers(dest="cmd", required=True)
    _vlab_parser(sub)
    g = sub.add_parser("gen", help="write every generated file from boards/*.yaml and places/*/lab-host.yaml",
                       description="From the board and lab-host facts: the labgrid environments (lab/, "
                                   "lab/remote/), each lab host's exporter, places, ser2net, tftpd-hpa, NFS "
                                   "exports and pdudaemon configs (places/<host>/), and LAVA's device types "
                                   "and dictionaries (jobs/). The facts are checked first: a bad one is one "
                                   "line and exit 2, nothing written.")
    g.add_argument("--check", action="store_true", help="only report stale files (exit 1)")
    g.set_defaults(func=cmd_gen)
    b = sub.add_parser("boot", help="boot a board to a shell once and print its milestones")
    b.add_argument("--env", default=None, help="a labgrid environment (default: the lab's default board's, lab/<board>.yaml)")
    b.add_argument("--kernel", default=None)
    b.add_argument("--root", default=None, choices=["ramdisk", "nfs"])
    b.add_argument("--keep-on", action="store_true", help="leave the board running")
    b.add_argument("--phases", action="store_true", help="with the kernel's phase log: where the time went")
    b.set_defaults(func=cmd_boot)
    _report_parser(sub)
    bs = sub.add_parser("baselines", help="update RUN...: baselines pooled over runs; "
                                          "seed-reference: the study's numbers")
    bs.add_argument("action", choices=["update", "seed-reference"])
    bs.add_argument("runs", nargs="*", help="update: run directories (results.json) to pool")
    bs.add_argument("--keep-host-bound", action="store_true",
                    help="update: leave the baselines of host-bound figures (host clock, a virtual "
                         "board's realtime clock) as they are; write only what any host can be judged by")
    bs.set_defaults(func=cmd_baselines)
    pl = sub.add_parser("places", help="sync: create/update the lab hosts' places on the coordinator")
    pl.add_argument("action", choices=["sync"])
    pl.add_argument("--lab", default=None, help="one lab host (places/<lab>/places.yaml); default: every "
                                               "one on the lab's management network")
    pl.add_argument("--coordinator", default=None,
                    help="coordinator HOST:PORT (default: $LG_COORDINATOR, else the lab's, places/lab.yaml)")
    from boardlab.facts.places import PlacesError
    pl.set_defaults(func=cmd_places, errors=(PlacesError,))
    _compare_parser(sub)
    for room in (bisect_cli, lava_cli, kernel_cli, lab_cli, images_cli):
        room.add_parser(sub)
    history_cli.add_parser(sub).set_defaults(watch=bisect_cli.cmd_watch)
    return ap


def _vlab_parser(sub):
    v = sub.add_parser("vlab", help="the virtual lab (its hosts, management network and coordinator): "
                                    "up, down, status, build, clock, load")
    v.add_argument("action", choices=["up", "down", "status", "build", "clock", "load"])
    v.add_argument("setting", nargs="?",
                   help="clock: the QEMU clock of the lab's boards from their next power-on "
                        "(deterministic: icount, for measurements; realtime: as fast as the host); "
                        "load: work on the board no test asked for (none, steady:PERCENT: the sick "
                        "board, bursts:PERCENT[@SEED] or perboot:PERCENT[@SEED]: known noise, lan:MS[@SEED] or "
                        "LOAD+lan:MS: a delay on its LAN; boardlab/facts/loads.py)")
    v.add_argument("--lab", help="one lab host only (places/<lab>/lab-host.yaml; default: the whole lab)")
    v.add_argument("--json", action="store_true", help="status as JSON")
    v.add_argument("--force", action="store_true", help="build: even if up to date; down: even in use")
    v.add_argument("--board", action="append", default=[],
                   help="up, build: this board's images (repeatable); up builds none otherwise: "
                        "a board's images are built when it is first used. load: this board only "
                        "(boardlab vlab load SETTING --board BOARD)")
    v.set_defaults(func=cmd_vlab)


def _compare_parser(sub):
    c = sub.add_parser("compare", help="kernel A against kernel B on one board: interleaved "
                                        "boots, each metric's delta, interval and verdict")
    c.add_argument("--kernel", action="append", metavar="A|B",
                   help="twice: a kernel of the board, a uImage file, tftp:<file>, a run "
                        "directory or baseline:<board>:<kernel>")
    c.add_argument("--board", default=None, help="lab/<board>.yaml (default: the lab's default board)")
    c.add_argument("--env", default=None, help="a labgrid environment instead of --board's")
    c.add_argument("--families", default=",".join(f.name for f in families.FAMILIES if f.on_boot and f.default),
                   help="what each boot measures (comma separated; FAMILY:NAME[+NAME]: those figures' runs only)")
    c.add_argument("--repeats", type=int, default=5, help="boots per kernel at least (default 5)")
    c.add_argument("--max-repeats", type=int, default=10,
                   help="more boots while a verdict is unknown, up to this many (default 10)")
    c.add_argument("--jitter-seconds", type=int, default=workloads.JITTER_RUN_S, help="cyclictest per boot "
                   f"(default the suite's {workloads.JITTER_RUN_S}: a shorter run's maximum is not decidable)")
    c.add_argument("--phases", action="store_true", help="boot with the kernel's phase log (initcall_debug): "
                   "where the boot time went, span by span (compared, not recorded: it moves the figures)")
    c.add_argument("--root", default="ramdisk", choices=["ramdisk", "nfs"],
                   help="the root both kernels boot on (default ramdisk)")
    c.add_argument("--tools", default=None, choices=families.TOOL_SETS,
                   help=f"whose programs measure {', '.join(f.name for f in families.FAMILIES if f.tools)} (default: each family's "
                        "record for the board's CPU; the figures say the set)")
    c.add_argument("--out", default=None, help="directory (default results/compare-<time>)")
    c.set_defaults(func=cmd_compare)


def _report_parser(sub):
    r = sub.add_parser("report", help="study-style table of a run, or of two side by side")
    r.add_argument("run", help="results directory, or baseline:<board>:<kernel>")
    r.add_argument("run2", nargs="?", help="the second (B) of the comparison")
    r.add_argument("--html", help="where the HTML page goes (default: RUN/report.html)")
    r.add_argument("--study", action="store_true",
                   help="the study's table: its 2.4.25 and 2.6.11.7 numbers beside the run's "
                        "kernels, for each of the run's boards the study measured")
    r.add_argument("--timing", action="store_true",
                   help="where the run's time went: its steps (the main job's steps.tsv) and suites")
    r.set_defaults(func=cmd_report)


def main(argv=None):
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # `history submit --if-kept RUN`: argparse gives a '*' positional only the words before
    # the first option; the run directories after it are the same list
    words = next((n for n in ("runs", "words") if isinstance(getattr(args, n, None), list)), None)
    if extra and words and not any(e.startswith("-") for e in extra):
        getattr(args, words).extend(extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    verb = f" {args.verb}" if getattr(args, "verb", None) else ""
    try:
        return args.func(args)
    except InputError as e:   # bad input or usage: said before anything was written or powered
        print(f"boardlab {args.cmd}{verb}: {e}", file=sys.stderr)
        return 2
    except getattr(args, "errors", ()) as e:   # a command's own errors: it failed
        print(f"boardlab {args.cmd}{verb}: {e}", file=sys.stderr)
        return 1
    except BoardlabError as e:   # a busy board, an unwritable run directory, a failed boot
        print(f"boardlab {args.cmd}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:   # Ctrl-C: the strategy has powered the board off and freed it
        print(f"boardlab {args.cmd}{verb}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:   # `boardlab report RUN | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
