"""`boardlab lava VERB`: one subcommand per verb, each with only its own arguments."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import yaml

from boardlab import lava, yamltext
from boardlab.sharing.placehold import UNSHARED, place_held
from boardlab.errors import one_line
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import default_board
from boardlab.files import atomic_write
from boardlab.history.submit import land
from boardlab.judge.verdict import MISSING, OTHER_HOST, REGRESSED, UNKNOWN
from boardlab.measure.clocks import switch_clock
from boardlab.vlab.host import prepare_if_virtual


def _testdefs_url(args, work, board, suites) -> str:
    """--testdefs-url, or the job's definitions as a tarball in work (file://, jobs.job_testdefs)."""
    return args.testdefs_url or lava.jobs.job_testdefs(work.resolve(), board, suites).as_uri()


def _render(board, args, work):
    """The job of --board/--kernel/--root/--suites, checked before the definitions' tarball is written."""
    suites = args.suites.split(",")
    lava.check_request(board, args.kernel, suites, args.root)
    return lava.render_job(board, args.kernel, suites, args.root, quick=args.quick, jitter_duration=args.jitter_duration,
                           testdefs_url=_testdefs_url(args, work, board, suites),
                           image_base=args.image_base)


def _report_invalid(errors: dict) -> int:
    for path, err in errors.items():
        print(f"{path}: invalid: {err}", file=sys.stderr)
    return 1 if errors else 0


def cmd_render(args):
    board = load_board(args.board or default_board())
    work = Path(args.out or f"results/lava-{board.name}")
    text = lava.dump_job(_render(board, args, work))
    if not args.out:
        print(text, end="")
        return 0
    atomic_write(work / "job.yaml", text)
    atomic_write(work / "device.yaml", lava.render_device(board))
    print(f"wrote: {work / 'job.yaml'}\nwrote: {work / 'device.yaml'}")
    return 0


def cmd_validate(args):
    if (missing := [f for f in args.files if not Path(f).is_file()]):
        raise lava.LavaInputError(f"{missing[0]}: no such file")
    files = [(("device" if f.endswith("device.yaml") else "job"), Path(f)) for f in args.files]
    errors = lava.validate(files)
    print(f"{len(files) - len(errors)} of {len(files)} valid (LAVA's own schemas)")
    return _report_invalid(errors)


def cmd_run(args):
    board = load_board(args.board or default_board())
    lab = lava.lab_of(board)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = Path(args.run_dir or f"results/lava-{stamp}-{board.name}").resolve()
    job = _render(board, args, work)
    lava.check_tftp_root(lab)
    lava.check_nfs_export(lab, job)
    lava.check_board_reachable(board)
    prepare_if_virtual(board)
    files = lava.prepare_run(board, job, work, lab)
    if _report_invalid(lava.validate([("device", files["device"]), ("job", files["job"])])):
        return 1
    job_id = int(time.time()) % 1_000_000
    qemu_clock = switch_clock(board)   # the clock the job's boots will run on
    with place_held(board, "lava-run") as hold:   # a board shared with LAVA: held as a person's
        rc, log = lava.lava_run(files, work, job_id, owner=hold.holder if hold else UNSHARED)
    return _results(log, board, job["metadata"]["boardlab.kernel"], work,
                    f"lava-run-{job_id}", lava_rc=rc, qemu_clock=qemu_clock, job=job)


def _results(log_path, board, kernel, run_dir, job_ref, lava_rc=0, host=None, qemu_clock=None,
             job=None):
    entries = lava.read_log(Path(log_path).read_text())
    res = lava.results_from_log(entries, board, kernel, run_dir, job_ref, host=host, qemu_clock=qemu_clock,
                                settings=lava.settings_of(job or {}), log_path=log_path)
    expected = lava.expected_of(job or {})
    if expected:   # the job's expected test cases: one not reported is missing, and fails
        res.mark_missing(board.name, kernel, set(expected), expected)
    for m in res.metrics:
        print(f"  {m.describe()}")
    failed = [m for m in res.metrics if m.verdict in (REGRESSED, MISSING)]
    missing = [m for m in res.metrics if m.verdict == MISSING]
    unknown = [m for m in res.metrics if m.verdict == UNKNOWN]
    other = [m for m in res.metrics if m.verdict == OTHER_HOST]
    lava_failed = [c for c in lava.test_cases(entries) if c.get("result") == "fail"]
    unmeasured = res.meta.get("lava_unmeasured", {})
    problem = lava.job_failure(entries)
    for attempt in lava.retried_attempts(entries):
        print(f"warning: LAVA retried: {attempt}", file=sys.stderr)
    for why in unmeasured.values():
        print(f"failed to measure: {why}", file=sys.stderr)
    print(f"results: {res.path} ({len(res.metrics)} metrics, {len(failed) - len(missing)} regressed, "
          f"{len(missing)} missing (figures the job should have given), {len(unknown)} unknown, "
          f"{len(other)} not judged (baseline from another host); "
          f"families not measured: {len(unmeasured)}; LAVA test cases failed: {len(lava_failed)})")
    if problem:
        print(f"LAVA job did not complete: {problem}", file=sys.stderr)
    land(Path(run_dir), board.lab_host)   # into the lab's history, if it keeps one
    if problem or lava_rc:
        return 1
    return 1 if (failed or lava_failed or unmeasured) else 0


def _job_of_dir(src: Path) -> dict:
    """A lava-run directory's job.yaml, checked, and its job.log there: or one line why not."""
    for name in ("job.yaml", "job.log"):
        if not (src / name).is_file():
            raise lava.LavaInputError(f"{src / name}: not there (a lava-run directory holds "
                                      f"job.yaml and job.log)")
    try:
        job = yamltext.load((src / "job.yaml").read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise lava.LavaInputError(f"{src / 'job.yaml'}: not YAML ({one_line(e)})") from None
    if not isinstance(job, dict):
        raise lava.LavaInputError(f"{src / 'job.yaml'}: not a LAVA job (a mapping with "
                                  f"device_type, actions, ...)")
    return job


def cmd_results(args):
    """JOB: a lava-run directory (with job.log and job.yaml) or a server job id."""
    src = Path(args.job)
    if src.is_dir():
        job = _job_of_dir(src)
        try:
            board, kernel = lava.board_of_job(job)
        except lava.LavaError as e:
            raise lava.LavaInputError(f"{src / 'job.yaml'}: {e}") from None
        out = Path(args.run_dir) if args.run_dir else src
        return _results(src / "job.log", board, kernel, out, f"lava-run:{src.name}", job=job)
    if not args.job.isdigit():
        raise lava.LavaInputError(f"{args.job}: neither a lava-run directory nor a LAVA job id")
    out = Path(args.run_dir or f"results/lava-job-{args.job}")
    out.mkdir(parents=True, exist_ok=True)
    info = yamltext.load(lava.lavacli(args.identity, "jobs", "show", args.job, "--yaml")) or {}
    if info.get("state") != "Finished":
        print(f"job {args.job} is {info.get('state')}: these are the results so far", file=sys.stderr)
    job = yamltext.load(lava.lavacli(args.identity, "jobs", "definition", args.job))
    (out / "job.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    (out / "job.log").write_text(lava.lavacli(args.identity, "jobs", "logs", "--raw", args.job))
    board, kernel = lava.board_of_job(job)
    # the worker that ran it is not identified: its host-bound figures are not judged
    worker = {"id": None, "hostname": None, "note": f"the LAVA worker of job {args.job}"}
    return _results(out / "job.log", board, kernel, out, f"job:{args.job}", host=worker, job=job)


def _scheduled(args) -> dict:
    sched_path = Path(args.schedule or lava.SCHEDULE)
    sched = lava.load_schedule(sched_path)
    if args.job:
        jobs = {n: s for n, s in sched["jobs"].items() if n in args.job}
        missing = set(args.job) - set(jobs)
        if missing:
            raise lava.LavaFault(f"{sched_path}: no job {', '.join(sorted(missing))} "
                                 f"(has: {', '.join(sched['jobs'])})")
    else:
        jobs = lava.schedule_jobs(sched, args.when)
    if not jobs:
        raise lava.LavaInputError(f"{sched_path}: no job runs {args.when!r}")
    return jobs


def cmd_submit(args):
    work = Path(args.out or "results/lava-submit")
    ids = []
    for name, spec in _scheduled(args).items():
        board, suites = load_board(spec["board"]), spec.get("suites", lava.DEFAULT_SUITES)
        job = lava.render_job(board, spec.get("kernel"), suites, spec.get("root"), quick=spec.get("quick", False),
                              jitter_duration=spec.get("jitter_duration"), image_base=args.image_base,
                              testdefs_url=_testdefs_url(args, work, board, suites))
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
        healths = [lava.wait_for_job(args.identity, job_id, args.wait) for job_id in ids]
        return 1 if any(h != "Complete" for h in healths) else 0
    return 0


def cmd_server(args):
    from boardlab.lava.localserver import LocalLavaServer, ServerError
    srv = LocalLavaServer(Path(args.run_dir or "/run/boardlab/lava-server"), port=args.port,
                          identity=args.identity or "boardlab-vlab")
    try:
        if args.action == "up":
            srv.up()
            print(f"LAVA server {srv.url} (lavacli identity {srv.identity}); "
                  f"stop it: boardlab lava server down")
        else:
            srv.down()
    except ServerError as e:
        if args.action == "up":
            srv.down()   # leave nothing half started
        raise lava.LavaFault(str(e)) from None
    return 0


def cmd_schedule(args):
    sched = lava.load_schedule(Path(args.schedule or lava.SCHEDULE),
                               times=("on_calendar",) if args.systemd else ("cron",))
    if args.systemd:
        for name, text in lava.systemd_units(sched).items():
            print(f"# /etc/systemd/system/{name}\n{text}")
    else:
        print(lava.cron_lines(sched), end="")
    return 0


# ---- the parsers ------------------------------------------------------------------------------

def _job_options(p):
    p.add_argument("--board", default=None, help="board facts name (default: the lab's default board, places/lab.yaml)")
    p.add_argument("--kernel", default=None, help="default: the board's default kernel")
    p.add_argument("--root", default=None, choices=["ramdisk", "nfs"])
    p.add_argument("--suites", default=",".join(lava.DEFAULT_SUITES),
                   help=f"comma separated: {', '.join(lava.DEFAULT_SUITES)} (the metric families)")
    p.add_argument("--quick", action="store_true", help="the latency programs' short timing loops")
    p.add_argument("--jitter-duration", type=int, default=None, help="seconds (default 60, quick mode too)")
    _image_options(p)


def _image_options(p):
    p.add_argument("--testdefs-url", default=None,
                   help="tarball of jobs/testdefs the worker can fetch (default: made locally, file://)")
    p.add_argument("--image-base", default=None, help="URL of the images (default: file:// images.dir)")


def _identity(p):
    p.add_argument("--identity", default=os.environ.get("LAVACLI_IDENTITY"),
                   help="lavacli identity (default: $LAVACLI_IDENTITY or lavacli's default)")


def add_parser(sub):
    """`boardlab lava` and its verbs, on the main command's subparsers."""
    lv = sub.add_parser("lava", help="LAVA: render, validate, run (lava-run here), submit, "
                                     "results, schedule, server")
    verbs = lv.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("render", help="a job (and with --out its device config) as LAVA takes it")
    _job_options(p)
    p.add_argument("--out", default=None, help="directory for job.yaml and device.yaml (default: stdout)")
    p.set_defaults(func=cmd_render)
    p = verbs.add_parser("validate", help="check rendered files with LAVA's own schemas")
    p.add_argument("files", nargs="+", help="rendered files (*device.yaml: a device config)")
    p.set_defaults(func=cmd_validate)
    p = verbs.add_parser("run", help="run a job with lava-run on this host, then its results")
    _job_options(p)
    p.add_argument("--run-dir", default=None, help="where the job files and results.json go")
    p.set_defaults(func=cmd_run)
    p = verbs.add_parser("results", help="results.json of a lava-run directory or a server job")
    p.add_argument("job", help="a lava-run directory, or a LAVA server's job id")
    p.add_argument("--run-dir", default=None, help="where results.json goes")
    _identity(p)
    p.set_defaults(func=cmd_results)
    p = verbs.add_parser("submit", help="submit scheduled jobs to a LAVA server")
    p.add_argument("--when", default="nightly", help="the schedule group")
    p.add_argument("--job", action="append", default=None, help="only this scheduled job (repeatable)")
    p.add_argument("--schedule", default=None, help="default: jobs/schedule.yaml of the project")
    p.add_argument("--out", default=None, help="directory for the rendered jobs")
    p.add_argument("--wait", type=float, default=0, help="wait up to N s for the jobs")
    p.add_argument("--dry-run", action="store_true", help="render only")
    _image_options(p)
    _identity(p)
    p.set_defaults(func=cmd_submit)
    p = verbs.add_parser("schedule", help="cron lines (default) or systemd timers of the schedule")
    p.add_argument("--schedule", default=None, help="default: jobs/schedule.yaml of the project")
    p.add_argument("--cron", action="store_true", help="cron lines (the default)")
    p.add_argument("--systemd", action="store_true", help="systemd timer units")
    p.set_defaults(func=cmd_schedule)
    p = verbs.add_parser("server", help="a LAVA server and worker on this host, for the virtual lab")
    p.add_argument("action", choices=["up", "down"])
    p.add_argument("--port", type=int, default=8180, help="its port on 127.0.0.1")
    p.add_argument("--run-dir", default=None, help="default: /run/boardlab/lava-server")
    _identity(p)
    p.set_defaults(func=cmd_server)
    lv.set_defaults(errors=(lava.LavaError,))
