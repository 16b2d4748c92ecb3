#!/usr/bin/env python3
"""A newcomer's first run: the main job (scripts/main-job.sh) cold, its steps printed
beside this host's clean kernel build, the yardstick that makes hosts comparable.

Cold means empty image and build caches: the run sees an empty directory bind-mounted
over /var/cache/boardlab (a private mount namespace: the host's own caches stay as they
are, and what the run builds is thrown away after), so the debs are fetched, the board's
images and the build suite's kernel are built as on a fresh machine. The host set-up
(apt, venv) is this host's as it is: idempotent, it is timed but not undone.

The yardstick is a clean kernel build of the default board's config alone, on this host
with nothing else running, taken first in the same bench run (the main job's own build
runs beside the board's suites, --build-alongside, so its time says what shared the host
and is printed, not used). Goal (issue "A newcomer's first run"): the whole cold main job
<= 1.5 x that build, and 0 s spent on images of boards it does not use.

    .venv/bin/python bench/first_run.py [--keep] [--against RUN] [--no-yardstick]
    # the virtual lab must be down

--against RUN: an earlier main job's run directory (e.g. of an older commit): the two
runs metric for metric (the same metrics? any verdict worse?).

Every figure is on the host clock of this machine (its id is printed)."""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.kernelbuilds import alongside  # noqa: E402
from boardlab.kernelbuilds.buildenv import CACHE_DIR  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.pages import timing  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.vlab.host import VirtualLabHost  # noqa: E402

GOAL = 1.5


def cold_main_job(cache: Path, log: Path) -> tuple[int, float, Path | None]:
    """(exit status, seconds, run directory) of the main job with `cache` over CACHE_DIR."""
    script = (f"mount --bind {cache} {CACHE_DIR} && cd {ROOT} && exec bash scripts/main-job.sh")
    t0 = time.monotonic()
    with open(log, "w") as out:
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                           stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - t0
    found = re.findall(r"^results: (\S+)", log.read_text(errors="replace"), re.M)
    return r.returncode, seconds, Path(found[-1]) if found else None


def yardstick_build_s(board_name: str = "qemu-arm") -> float:
    """A clean build of the board's kernel config(s) alone: the seconds of make, summed."""
    board = load_board(board_name)
    return sum(r.real_s for r in alongside.build_all(board, alongside.configs_of(board_name)).values())


def clean_build_s(run: Path) -> float | None:
    try:
        metrics = json.loads((run / "results.json").read_text())["metrics"]
    except (OSError, ValueError, KeyError):
        return None
    return next((m["value"] for m in metrics if m["suite"] == "build" and m["name"] == "real_s"), None)


RANK = {"regressed": 0, "missing": 0, "unknown": 1, "same": 2, "improved": 2}   # worse is lower


def against(before: Path, after: Path) -> int:
    """Print both runs' verdicts metric for metric; the number of verdicts worse after."""
    def verdicts(run):
        return {f"{m['board']} {m['kernel']} {m['suite']}.{m['name']}": (m["verdict"], m["value"])
                for m in json.loads((run / "results.json").read_text())["metrics"]}
    a, b = verdicts(before), verdicts(after)
    print(f"\nmetric for metric: before {before} ({len(a)} metrics), after {after} ({len(b)})")
    print("| metric | before | after | |\n|---|---|---|---|")
    worse = 0
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key, ("absent", None)), b.get(key, ("absent", None))
        bad = key not in b or RANK.get(vb[0], 1) < RANK.get(va[0], 1)
        worse += bad
        print(f"| {key} | {va[0]} {va[1]} | {vb[0]} {vb[1]} | {'WORSE' if bad else ''} |")
    print(f"only before: {sorted(set(a) - set(b)) or 'none'}; only after: {sorted(set(b) - set(a)) or 'none'}; "
          f"verdicts worse after: {worse}")
    return worse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the cold cache directory")
    ap.add_argument("--against", type=Path, help="an earlier main job's run directory, compared metric for metric")
    ap.add_argument("--no-yardstick", action="store_true",
                    help="no build alone first: the run's own build (beside the suites) is the yardstick")
    args = ap.parse_args()
    if VirtualLabHost("vlab").is_up():
        print("first_run: the virtual lab is up; a cold run starts it itself: "
              "boardlab vlab down first", file=sys.stderr)
        return 2
    alone = None
    if not args.no_yardstick:
        print("yardstick: a clean kernel build of qemu-arm's config, alone on this host", flush=True)
        alone = yardstick_build_s()
        print(f"yardstick: {alone:.1f} s", flush=True)
    cache = Path(tempfile.mkdtemp(prefix="boardlab-cold-cache-", dir="/var/tmp"))
    log = cache.with_suffix(".log")
    print(f"cold main job: cache {cache} over {CACHE_DIR}, log {log}", flush=True)
    try:
        status, seconds, run = cold_main_job(cache, log)
        other = [d.name for d in (cache / "images").glob("*") if d.name != "qemu-arm"]
    finally:
        if not args.keep:
            shutil.rmtree(cache, ignore_errors=True)
    host = this_host()["id"]
    if run is None:
        print(f"first_run: the main job printed no run directory (exit {status}); see {log}")
        return 1
    beside = clean_build_s(run)
    build = alone or beside
    print(f"\nhost {host}, host clock; main job exit {status}; run {run}")
    print(f"the run's own clean build (build.real_s, beside the board's suites): "
          f"{'%.1f s' % beside if beside else 'not measured'}")
    yardstick = f"the same build alone, before the run: {alone:.1f} s" if alone else "the run's own build"
    print(f"yardstick: {yardstick}\n")
    print("| step | s | x clean build |\n|---|---:|---:|")
    for name, s in timing.read_steps(run):
        print(f"| {name} | {s:.1f} | {s / build:.2f} |" if build else f"| {name} | {s:.1f} | - |")
        if name == "suites":
            for suite, t in timing.suite_seconds(run / "junit.xml").items():
                print(f"| - {suite} | {t:.1f} | {t / build:.2f} |" if build else f"| - {suite} | {t:.1f} | - |")
    ratio = seconds / build if build else None
    print(f"| total (wall) | {seconds:.1f} | {ratio:.2f} |" if ratio else f"| total (wall) | {seconds:.1f} | - |")
    print(f"\nimages of boards the run does not use: {', '.join(other) if other else 'none built'}")
    if ratio:
        print(f"goal: total <= {GOAL} x clean build: {'met' if ratio <= GOAL else 'NOT met'} ({ratio:.2f} x)")
    worse = against(args.against, run) if args.against else 0
    return 0 if status == 0 and not worse else 1


if __name__ == "__main__":
    sys.exit(main())
