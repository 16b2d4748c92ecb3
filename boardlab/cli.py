"""The `boardlab` command."""
from __future__ import annotations

import argparse
import os
import sys

from .baselines import BaselineError
from .facts import FactsError


def cmd_vlab(args):
    from .vlab.host import LabError, VirtualLab, format_status, status_json
    from .vlab.images import ImageBuildError, build_images
    try:
        lab = VirtualLab(args.lab)
        if args.action == "up":
            lab.up()
            print(format_status(lab.status()))
        elif args.action == "down":
            lab.down()
        elif args.action == "build":
            for b in lab.boards:
                build_images(b, force=args.force)
        elif args.action == "clock":
            for name, clock in lab.clock(args.clock).items():
                print(f"{name}: {clock}" + ("" if not args.clock else " from its next power-on"))
        else:
            st = lab.status()
            print(status_json(st) if args.json else format_status(st))
            return 0 if lab.is_up() else 3
    except (LabError, ImageBuildError) as e:
        print(f"boardlab vlab {args.action}: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_gen(args):
    from .envgen import write_all
    stale = write_all(check=args.check)
    for p in stale:
        print(f"{'stale' if args.check else 'wrote'}: {p}")
    return 1 if (args.check and stale) else 0


def cmd_boot(args):
    """Boot a board to a shell once and print its milestones (a smoke test by hand)."""
    from labgrid import Environment
    from .strategy import BootError
    env = Environment(args.env)
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    strategy.select(kernel=args.kernel, root=args.root)
    try:
        strategy.transition("shell")
        rec = strategy.last_boot
        for name, t in rec.milestones.items():
            print(f"{name:16s} {t:8.3f} s")
        print(f"console log: {rec.log_path}")
        out = target.get_driver("ShellDriver").run_check("uname -a")
        print("\n".join(out))
    except BootError as e:
        print(f"boot failed: {e}", file=sys.stderr)
        return 1
    finally:
        if not args.keep_on:
            strategy.transition("off")
    return 0


def cmd_report(args):
    from pathlib import Path
    from .report import html_page, markdown
    try:
        print(markdown(args.run, args.run2), end="")
        out = Path(args.html) if args.html else (
            Path(args.run) / "report.html" if Path(args.run).is_dir() else Path("report.html"))
        html_page(args.run, args.run2, out)
        print(f"\nHTML report: {out}")
    except FileNotFoundError as e:
        print(f"boardlab report: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_baselines(args):
    if args.action == "seed-reference":
        from .reference import seed
        written = seed()
    else:
        from .results import Metric, load_run, update_baselines
        if not args.runs:
            print("boardlab baselines update: name one or more run directories", file=sys.stderr)
            return 2
        try:
            docs = [load_run(r) for r in args.runs]
        except FileNotFoundError as e:
            print(f"boardlab baselines update: {e}", file=sys.stderr)
            return 1
        harnesses = {d["meta"].get("source") for d in docs}   # lava runs: LAVA's own file
        if len(harnesses) > 1:
            print(f"boardlab baselines update: runs of different harnesses "
                  f"({', '.join(sorted(h or 'pytest' for h in harnesses))}): pool one kind at a time",
                  file=sys.stderr)
            return 2
        harness = harnesses.pop()
        runs = [[Metric(**m) for m in d["metrics"]] for d in docs]
        if args.keep_host_bound:
            from .clocks import host_bound
            from .facts import load_board
            runs = [[m for m in run if not host_bound(m.clock, load_board(m.board))] for run in runs]
        written = update_baselines(runs, reset_tolerances=args.reset_tolerances, harness=harness)
    for p in written:
        print(f"wrote: {p}")
    return 0


def cmd_places(args):
    from .places import PlacesError, sync
    try:
        done = sync(args.lab, args.coordinator)
    except PlacesError as e:
        print(f"boardlab places sync: {e}", file=sys.stderr)
        return 1
    print("\n".join(done) if done else f"places of {args.lab}: up to date")
    return 0


def _testdefs_url(lava, args, work) -> str:
    """--testdefs-url, or a tarball of jobs/testdefs made in work (a file:// URL)."""
    return args.testdefs_url or lava.testdefs_tarball(work.resolve() / "boardlab-testdefs.tar.gz").as_uri()


def _render(lava, board, args, work, measured_on=None):
    """The job of --board/--kernel/--root/--suites. measured_on: the host id of the machine
    that runs it, when known (lava-run here): only then are host-bound metrics gated."""
    return lava.render_job(board, args.kernel, args.suites.split(","), args.root,
                           quick=args.quick, jitter_duration=args.jitter_duration,
                           testdefs_url=_testdefs_url(lava, args, work), image_base=args.image_base,
                           measured_on=measured_on)


def _report_invalid(errors: dict) -> int:
    for path, err in errors.items():
        print(f"{path}: invalid: {err}", file=sys.stderr)
    return 1 if errors else 0


def cmd_lava(args):
    import time
    from pathlib import Path
    from . import lava
    from .facts import load_board
    from .results import atomic_write
    try:
        if args.action == "render":
            board = load_board(args.board)
            work = Path(args.out or f"results/lava-{board['name']}")
            job = _render(lava, board, args, work)
            text = lava.dump_job(job)
            if args.out:
                atomic_write(work / "job.yaml", text)
                atomic_write(work / "device.yaml", lava.render_device(board))
                print(f"wrote: {work / 'job.yaml'}\nwrote: {work / 'device.yaml'}")
            else:
                print(text, end="")
            return 0
        if args.action == "validate":
            files = [(("device" if f.endswith("device.yaml") else "job"), Path(f)) for f in args.files]
            errors = lava.validate(files)
            print(f"{len(files) - len(errors)} of {len(files)} valid (LAVA's own schemas)")
            return _report_invalid(errors)
        if args.action == "run":
            board = load_board(args.board)
            lab = lava.lab_of(board)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            work = Path(args.run_dir or f"results/lava-{stamp}-{board['name']}").resolve()
            from .clocks import this_host
            job = _render(lava, board, args, work, measured_on=this_host()["id"])
            lava.check_tftp_root(lab)
            lava.check_nfs_export(lab, job)
            lava.check_board_reachable(board)
            files = lava.prepare_run(board, job, work, lab)
            if _report_invalid(lava.validate([("device", files["device"]), ("job", files["job"])])):
                return 1
            job_id = int(time.time()) % 1_000_000
            from .clocks import switch_clock
            qemu_clock = switch_clock(board)   # the clock the job's boots will run on
            rc, log = lava.lava_run(files, work, job_id)
            return _results(lava, log, board, job["metadata"]["boardlab.kernel"], work,
                            f"lava-run-{job_id}", lava_rc=rc, qemu_clock=qemu_clock)
        if args.action == "results":
            return _cmd_results(lava, args)
        if args.action == "submit":
            return _cmd_submit(lava, args)
        if args.action == "server":
            from .lavaserver import LocalLavaServer, ServerError
            if args.job not in ("up", "down"):
                raise lava.LavaError("boardlab lava server up|down")
            srv = LocalLavaServer(Path(args.run_dir or "/run/boardlab/lava-server"), port=args.port,
                                  identity=args.identity or "boardlab-vlab")
            try:
                if args.job == "up":
                    srv.up()
                    print(f"LAVA server {srv.url} (lavacli identity {srv.identity}); "
                          f"stop it: boardlab lava server down")
                else:
                    srv.down()
            except ServerError as e:
                if args.job == "up":
                    srv.down()   # leave nothing half started
                raise lava.LavaError(str(e)) from None
            return 0
        if args.action == "schedule":
            sched = lava.load_schedule(Path(args.schedule or lava.SCHEDULE))
            if args.systemd:
                for name, text in lava.systemd_units(sched).items():
                    print(f"# /etc/systemd/system/{name}\n{text}")
            else:
                print(lava.cron_lines(sched), end="")
            return 0
    except lava.LavaError as e:
        print(f"boardlab lava {args.action}: {e}", file=sys.stderr)
        return 1
    return 2


def _results(lava, log_path, board, kernel, run_dir, job_ref, lava_rc=0, host=None,
             qemu_clock=None):
    from pathlib import Path
    from .baselines import OTHER_HOST
    entries = lava.read_log(Path(log_path).read_text())
    res = lava.results_from_log(entries, board, kernel, run_dir, job_ref, host=host,
                                qemu_clock=qemu_clock)
    for m in res.metrics:
        print(f"  {m.describe()}")
    failed = [m for m in res.metrics if m.verdict == "fail"]
    other = [m for m in res.metrics if m.verdict == OTHER_HOST]
    lava_failed = [c for c in lava.test_cases(entries) if c.get("result") == "fail"]
    problem = lava.job_failure(entries)
    for attempt in lava.retried_attempts(entries):
        print(f"warning: LAVA retried: {attempt}", file=sys.stderr)
    print(f"results: {res.path} ({len(res.metrics)} metrics, {len(failed)} over their baseline, "
          f"{len(other)} not judged (baseline from another host); "
          f"LAVA test cases failed: {len(lava_failed)})")
    if problem:
        print(f"LAVA job did not complete: {problem}", file=sys.stderr)
    if problem or lava_rc:
        return 1
    return 1 if (failed or lava_failed) else 0


def _cmd_results(lava, args):
    """JOB: a lava-run directory (with job.log and job.yaml) or a server job id."""
    from pathlib import Path
    import yaml
    src = Path(args.job)
    if src.is_dir():
        job = yaml.safe_load((src / "job.yaml").read_text())
        board, kernel = lava.board_of_job(job)
        out = Path(args.run_dir) if args.run_dir else src
        return _results(lava, src / "job.log", board, kernel, out, f"lava-run:{src.name}")
    if not args.job.isdigit():
        raise lava.LavaError(f"{args.job}: neither a lava-run directory nor a LAVA job id")
    out = Path(args.run_dir or f"results/lava-job-{args.job}")
    out.mkdir(parents=True, exist_ok=True)
    info = yaml.safe_load(lava.lavacli(args.identity, "jobs", "show", args.job, "--yaml")) or {}
    if info.get("state") != "Finished":
        print(f"job {args.job} is {info.get('state')}: these are the results so far", file=sys.stderr)
    job = yaml.safe_load(lava.lavacli(args.identity, "jobs", "definition", args.job))
    (out / "job.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    (out / "job.log").write_text(lava.lavacli(args.identity, "jobs", "logs", "--raw", args.job))
    board, kernel = lava.board_of_job(job)
    # the worker that ran it is not identified: its host-bound figures are not judged
    worker = {"id": None, "hostname": None, "note": f"the LAVA worker of job {args.job}"}
    return _results(lava, out / "job.log", board, kernel, out, f"job:{args.job}", host=worker)


def _cmd_submit(lava, args):
    from pathlib import Path
    from .facts import load_board
    sched_path = Path(args.schedule or lava.SCHEDULE)
    sched = lava.load_schedule(sched_path)
    if args.job:
        jobs = {n: s for n, s in sched["jobs"].items() if n in args.job}
        missing = set(args.job) - set(jobs)
        if missing:
            raise lava.LavaError(f"{sched_path}: no job {', '.join(sorted(missing))} "
                                 f"(has: {', '.join(sched['jobs'])})")
    else:
        jobs = lava.schedule_jobs(sched, args.when)
    if not jobs:
        raise lava.LavaError(f"{sched_path}: no job runs {args.when!r}")
    work = Path(args.out or "results/lava-submit")
    url = _testdefs_url(lava, args, work)
    ids = []
    for name, spec in jobs.items():
        board = load_board(spec["board"])
        job = lava.render_job(board, spec.get("kernel"), spec.get("suites", lava.DEFAULT_SUITES),
                              spec.get("root"), quick=spec.get("quick", False),
                              jitter_duration=spec.get("jitter_duration"), testdefs_url=url,
                              image_base=args.image_base)
        job["metadata"]["boardlab.schedule"] = name
        path = work / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lava.dump_job(job))
        if args.dry_run:
            print(f"{name}: rendered {path} (not submitted)")
            continue
        out = lava.lavacli(args.identity, "jobs", "submit", str(path)).split()
        ids += out
        print(f"{name}: submitted as job {' '.join(out)}")
    if args.wait and ids:
        bad = 0
        for job_id in ids:
            health = lava.wait_for_job(args.identity, job_id, args.wait)
            bad += health != "Complete"
        return 1 if bad else 0
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="boardlab", description="embedded Linux board lab")
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vlab", help="the virtual lab host: up, down, status, build, clock")
    v.add_argument("action", choices=["up", "down", "status", "build", "clock"])
    v.add_argument("clock", nargs="?", choices=["deterministic", "realtime"],
                   help="clock: the QEMU clock of the lab's boards from their next power-on "
                        "(deterministic: icount, for measurements; realtime: as fast as the host)")
    v.add_argument("--lab", default="vlab", help="lab host (places/<lab>/lab-host.yaml)")
    v.add_argument("--json", action="store_true", help="status as JSON")
    v.add_argument("--force", action="store_true", help="build: rebuild even if up to date")
    v.set_defaults(func=cmd_vlab)
    g = sub.add_parser("gen", help="regenerate lab/*.yaml from boards/*.yaml")
    g.add_argument("--check", action="store_true", help="only report stale files (exit 1)")
    g.set_defaults(func=cmd_gen)
    b = sub.add_parser("boot", help="boot a board to a shell once and print its milestones")
    b.add_argument("--env", default="lab/qemu-arm.yaml")
    b.add_argument("--kernel", default=None)
    b.add_argument("--root", default=None, choices=["ramdisk", "nfs"])
    b.add_argument("--keep-on", action="store_true", help="leave the board running")
    b.set_defaults(func=cmd_boot)
    r = sub.add_parser("report", help="study-style table of a run, or of two side by side")
    r.add_argument("run", help="results directory, or baseline:<board>:<kernel>")
    r.add_argument("run2", nargs="?", help="the second (B) of the comparison")
    r.add_argument("--html", help="where the HTML page goes (default: RUN/report.html)")
    r.set_defaults(func=cmd_report)
    bs = sub.add_parser("baselines", help="update RUN...: baselines pooled over runs; "
                                          "seed-reference: the study's numbers")
    bs.add_argument("action", choices=["update", "seed-reference"])
    bs.add_argument("runs", nargs="*", help="update: run directories (results.json) to pool")
    bs.add_argument("--keep-host-bound", action="store_true",
                    help="update: leave the baselines of host-bound figures (host clock, a virtual "
                         "board's realtime clock) as they are; write only what any host can be judged by")
    bs.add_argument("--reset-tolerances", action="store_true",
                    help="update: each metric's tolerance from kernels/tolerances.yaml, not the old "
                         "baseline's (after a change of clock or method)")
    bs.set_defaults(func=cmd_baselines)
    pl = sub.add_parser("places", help="sync: create/update a lab host's places on a coordinator")
    pl.add_argument("action", choices=["sync"])
    pl.add_argument("--lab", default="vlab", help="lab host (places/<lab>/places.yaml)")
    pl.add_argument("--coordinator", default=os.environ.get("LG_COORDINATOR", "127.0.0.1:20408"),
                    help="coordinator HOST:PORT (default: $LG_COORDINATOR or 127.0.0.1:20408)")
    pl.set_defaults(func=cmd_places)
    lv = sub.add_parser("lava", help="LAVA: render, validate, run (lava-run here), submit, "
                                     "results, schedule, server up|down")
    lv.add_argument("action", choices=["render", "validate", "run", "submit", "results", "schedule",
                                       "server"])
    lv.add_argument("job", nargs="?", help="results: a lava-run directory or a server job id; "
                                           "server: up or down (a LAVA server + worker here)")
    lv.add_argument("files", nargs="*", help="validate: rendered files (*device.yaml = device)")
    lv.add_argument("--board", default="qemu-arm")
    lv.add_argument("--kernel", default=None, help="default: the board's default kernel")
    lv.add_argument("--root", default=None, choices=["ramdisk", "nfs"])
    lv.add_argument("--suites", default="boot-time,memory,lmbench,jitter",
                    help="comma separated: boot-time, memory, lmbench, jitter")
    lv.add_argument("--quick", action="store_true", help="short lmbench and jitter runs")
    lv.add_argument("--jitter-duration", type=int, default=None, help="seconds (default 60, quick 10)")
    lv.add_argument("--testdefs-url", default=None,
                    help="tarball of jobs/testdefs the worker can fetch (default: made locally, file://)")
    lv.add_argument("--image-base", default=None, help="URL of the images (default: file:// images.dir)")
    lv.add_argument("--out", default=None, help="render/submit: directory for the job files")
    lv.add_argument("--run-dir", default=None, help="run/results: where results.json goes")
    lv.add_argument("--schedule", default=None, help="default: jobs/schedule.yaml of the project")
    lv.add_argument("--when", default="nightly", help="submit: the schedule group")
    lv.add_argument("--job", action="append", dest="job_names", default=None,
                    help="submit: only this scheduled job (repeatable)")
    lv.add_argument("--identity", default=os.environ.get("LAVACLI_IDENTITY"),
                    help="lavacli identity (default: $LAVACLI_IDENTITY or lavacli's default)")
    lv.add_argument("--wait", type=float, default=0, help="submit: wait up to N s for the jobs")
    lv.add_argument("--port", type=int, default=8180, help="server: its port on 127.0.0.1")
    lv.add_argument("--dry-run", action="store_true", help="submit: render only")
    lv.add_argument("--cron", action="store_true", help="schedule: cron lines (default)")
    lv.add_argument("--systemd", action="store_true", help="schedule: systemd timer units")
    lv.set_defaults(func=cmd_lava)
    args = ap.parse_args(argv)
    if getattr(args, "func", None) is cmd_lava:
        if args.action == "validate" and args.job:
            args.files = [args.job] + args.files
        if args.action == "submit":
            args.job = args.job_names
    try:
        return args.func(args)
    except (FactsError, BaselineError) as e:
        print(f"boardlab: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
