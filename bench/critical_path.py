#!/usr/bin/env python3
"""The main job's critical path: its parts each alone on this host, then the main job
(scripts/main-job.sh) itself, against set-up + images + max(build, suites). Goal (issue
"The house", item 9): the main job within 1.1 x that sum.

The parts, one after the other, with nothing else running (the virtual lab down at the start):
- set-up: `scripts/setup-host.sh --main-job`, as the main job calls it. On a host already
  set up that is its idempotent re-run (checks only); the bench says whether it installed
  anything.
- images: `boardlab vlab build --board <the lab's default board>`; cached unless --cold,
  and said which. --cold removes the board's own image directory (its images.dir, which
  must be <cache>/images/<board>) before this part and again before the main job, so both
  build them; nothing else is removed (the debs, the kernel source, other boards' images
  stay).
- build: the build suite's kernel build, the process the main job's --build-alongside
  starts (boardlab.kernelbuilds.alongside.BuildAlongside: each kernels/*/<board>.config, clean,
  -j<cores>, nice 19), alone.
- suites: the main job's pytest command word for word with --ignore=testsuites/test_build.py:
  the board's suites without the build suite (the lab is brought up before it, untimed).
Then the main job, timed whole, with the lab down as a person starts it.

The parts are separate runs, so each is clean; what the sum leaves out is the main job's
own: its lab up (services), pytest's start, the build suite's boot of the fresh kernel
(it needs the build, so it follows max(build, suites)) and the report. That lands in the
gap printed. Beside each part alone: the same part inside the main job (its steps.tsv,
junit.xml, and the build's own seconds in results.json).

    .venv/bin/python bench/critical_path.py [--cold] [--rounds N]
    # as root (the set-up, the lab), the virtual lab down, nothing else running

--rounds N repeats the whole (parts alone, main job) N times, the order turned every other
round (parts then main job, main job then parts), so a host whose speed drifts over the
hour weighs on both sides alike; each round's ratio is its own main job against its own
parts, and the summary gives their median and range: on a host whose speed moves by 10 %
in half an hour one round is no measure of a 1.1 x goal.

Every figure is on the host clock of this machine (its id is printed). Logs and the run
directories go to results/critical-path-<date>-<time>/."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.kernelbuilds import alongside, kbuild  # noqa: E402
from boardlab.images.boardimages import build_lock  # noqa: E402
from boardlab.kernelbuilds.buildenv import CACHE_DIR  # noqa: E402
from boardlab.errors import InputError  # noqa: E402
from boardlab.facts.board import load_board  # noqa: E402
from boardlab.facts.labfacts import default_board  # noqa: E402
from boardlab.measure import hostload  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.pages import timing  # noqa: E402
from boardlab.vlab.lab import VirtualLab, kept_up  # noqa: E402

GOAL = 1.1
PARTS = ("set-up", "images", "build", "suites")
BUILD_SUITE = "testsuites/test_build.py"
GAP = "lab up, pytest's start, the fresh kernel's boot after the build, the report"


# ---- the pure core: figures from given times and logs ----------------------------------

def critical_path(alone: dict) -> tuple[float, str]:
    """set-up + images + max(build, suites), and which of build and suites is the longer."""
    longer = "build" if alone["build"] >= alone["suites"] else "suites"
    return alone["set-up"] + alone["images"] + alone[longer], longer


def cpu_bound(alone: dict, cpu: dict, cores: int) -> tuple[float, float]:
    """What the host's cores allow: (set-up + images + the build's and the suites' busy
    CPU-seconds alone shared over `cores`, the least time the two side by side can take
    however well they overlap; the cores that would bring that within GOAL x the critical
    path)."""
    path, _ = critical_path(alone)
    work = cpu["build"] + cpu["suites"]
    room = GOAL * path - alone["set-up"] - alone["images"]
    return alone["set-up"] + alone["images"] + work / cores, (work / room if room > 0 else float("inf"))


def rounds_summary(rounds: list[tuple[dict, float, dict]]) -> str:
    """Each round's (parts alone, main job s, the parts in the main job) as its ratio, and
    their median and range. The parts inside the main job ran side by side at one host
    speed: what they show (the build suite's wait after the suites) holds under drift."""
    ratios = []
    lines = ["| round | order | set-up | images | build | suites | critical path | main job | ratio "
             "| in it: suites | build | build suite |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, (alone, main_s, in_main) in enumerate(rounds):
        path, _ = critical_path(alone)
        ratios.append(main_s / path if path > 0 else float("inf"))
        lines.append(f"| {i + 1} | {round_order(i)} | {alone['set-up']:.1f} | {alone['images']:.1f} | "
                     f"{alone['build']:.1f} | {alone['suites']:.1f} | {path:.1f} | {main_s:.1f} | {ratios[-1]:.2f} x "
                     f"| {_s(in_main.get('suites'))} | {_s(in_main.get('build'))} | {_s(in_main.get('build suite'))} |")
    mid = statistics.median(ratios)
    met = sum(r <= GOAL for r in ratios)
    lines += ["", "in it: the same parts inside the main job; the build suite is its wait for the build "
                  "after the suites, then the fresh kernel's boot",
              f"main job / critical path over {len(ratios)} rounds: median {mid:.2f} x "
              f"({min(ratios):.2f}-{max(ratios):.2f}); within {GOAL} x in {met} of {len(ratios)} "
              f"(goal: {'met' if mid <= GOAL else 'NOT met'} by the median)"]
    return "\n".join(lines) + "\n"


def round_order(i: int) -> str:
    """Rounds alternate which comes first, so a drifting host weighs on both sides."""
    return "parts, then main job" if i % 2 == 0 else "main job, then parts"


def _s(seconds) -> str:
    return "-" if seconds is None else f"{seconds:.1f}"


def report(alone: dict, main_s: float, in_main: dict, notes: dict, host: dict, cpu: dict | None = None) -> str:
    """The parts alone beside the same parts in the main job, the sum, the gap, the ratio,
    and (cpu: each part's busy CPU-seconds alone) what the host's cores allow."""
    path, longer = critical_path(alone)
    ratio = main_s / path if path > 0 else float("inf")
    lines = [f"host {host['id']} ({host['cpus']} cores), host clock, seconds", "",
             "| part | alone | in the main job | |", "|---|---:|---:|---|"]
    lines += [f"| {p} | {_s(alone[p])} | {_s(in_main.get(p))} | {notes.get(p, '')} |" for p in PARTS]
    lines += [f"| main job | | {_s(main_s)} | {notes.get('main job', '')} |", "",
              f"critical path: set-up + images + max(build, suites) = {alone['set-up']:.1f} + "
              f"{alone['images']:.1f} + max({alone['build']:.1f}, {alone['suites']:.1f}) = {path:.1f} s "
              f"(the longer: {longer})",
              f"the main job beyond it: {main_s - path:+.1f} s ({GAP})",
              f"main job / critical path: {ratio:.2f} x (goal <= {GOAL} x: "
              f"{'met' if ratio <= GOAL else 'NOT met'})"]
    if cpu:
        least, cores = cpu_bound(alone, cpu, host["cpus"])
        lines += [f"the cores' bound: busy CPU-seconds alone, build {cpu['build']:.1f} + suites {cpu['suites']:.1f}, "
                  f"over {host['cpus']} cores: the main job takes at least {least:.1f} s here "
                  f"({least / path:.2f} x the critical path); within {GOAL} x it needs {cores:.1f} cores "
                  f"({'this host has them' if cores <= host['cpus'] else 'out of reach on this host'})"]
    return "\n".join(lines) + "\n"


def in_main_job(run: Path, board: str) -> tuple[dict, str]:
    """The parts as the main job's run directory shows them ({part: s or None}), and a
    line on the rest of its steps (what the critical path leaves out)."""
    try:
        steps = dict(timing.read_steps(run))
    except InputError:
        steps = {}
    suites = timing.suite_seconds(run / "junit.xml")
    try:
        build = json.loads((run / "results.json").read_text())["meta"].get("build_alongside_s")
    except (OSError, ValueError, KeyError):
        build = None
    parts = {"set-up": steps.get("set-up (apt, venv)"), "images": steps.get(f"lab up: images of {board}"),
             "build": build,
             "suites": sum(t for s, t in suites.items() if s != "test_build") if suites else None,
             "build suite": suites.get("test_build")}
    rest = (f"in the main job: lab up (services) {steps.get('lab up (services)', '-')} s; its suites step "
            f"{steps.get('suites', '-')} s, of it the build suite's tests {suites.get('test_build', '-')} s "
            f"(waiting for the build, then the fresh kernel's boot); report {steps.get('report', '-')} s")
    return parts, rest


def setup_note(log: str) -> str:
    """What the set-up's run did, from its log: checks only, or what it installed."""
    did = [ln.removeprefix("setup: ") for ln in log.splitlines()
           if re.match(r"setup: (installing|creating|adding|apt-get update)", ln)]
    if not did:
        return "already installed: its idempotent re-run (checks only)"
    return "NOT only checks: " + "; ".join(d[:80] for d in did[:3]) + (" ..." if len(did) > 3 else "")


def images_note(log: str, cold: bool) -> str:
    if re.search(r"images for \S+ are up to date", log):
        return "cached (up to date): --cold builds them"
    if "building images for" in log:
        return "built, cold (--cold: the board's image cache removed first)" if cold else \
            "built (not cached: their inputs changed or none were there)"
    return "neither built nor found up to date: see its log"


def pytest_cmd(board: str, run_dir: Path, full: bool = False) -> list[str]:
    """The main job's pytest (scripts/main-job.sh) with the build suite left out."""
    return [".venv/bin/pytest", "--lg-env", f"lab/{board}.yaml", "testsuites/", *([] if full else ["--quick"]),
            "--build-alongside", "--run-dir", str(run_dir), "--junitxml", str(run_dir / "junit.xml"),
            f"--ignore={BUILD_SUITE}"]


# ---- the parts, each alone ----------------------------------------------------------

def timed(name: str, cmd: list[str], log: Path) -> tuple[int, float, str]:
    """(exit status, host seconds, the log's text) of one command, from ROOT."""
    print(f"{name}: {' '.join(cmd)} (log {log})", flush=True)
    t0 = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.monotonic() - t0
    print(f"{name}: {seconds:.1f} s" + ("" if rc == 0 else f", exit {rc}"), flush=True)
    return rc, seconds, log.read_text(errors="replace")


def drop_image_cache(board) -> None:
    """--cold: the board's own image directory removed, under its build lock; refused
    unless it is <cache>/images/<board> (nothing else is ever removed)."""
    images, own = Path(board.images.dir).resolve(), (CACHE_DIR / "images").resolve()
    if images.parent != own or images.name != board.name:
        raise SystemExit(f"critical_path: --cold: {images} is not the project's image cache of "
                         f"{board.name} ({own / board.name}): nothing removed")
    with build_lock(board):
        if images.exists():
            shutil.rmtree(images)
    print(f"--cold: removed {images}", flush=True)


def build_alone(board, log: Path) -> tuple[int, float, str]:
    """The build suite's build, started as --build-alongside starts it, with nothing beside it."""
    if why := alongside.not_buildable(board):
        return 0, 0.0, f"nothing to build: {why}"
    print(f"build: {', '.join(c.parent.name for c in alongside.configs_of(board.name))} for {board.name}, "
          f"clean, -j{os.cpu_count()}, nice 19, SCHED_IDLE, waited for at once: every core (log {log})", flush=True)
    t0 = time.monotonic()
    build = alongside.BuildAlongside(board, alongside.configs_of(board.name), log)
    try:
        got = build.result()
    except kbuild.KernelBuildError as e:
        return 1, time.monotonic() - t0, f"FAILED: {e}"
    finally:
        build.stop()
    seconds = time.monotonic() - t0
    print(f"build: {seconds:.1f} s", flush=True)
    return 0, seconds, (f"{', '.join(got)}: make {sum(r.real_s for r in got.values()):.1f} s; "
                        f"the process --build-alongside starts, clean, -j{os.cpu_count()}")


def parts_alone(board, work: Path, cold: bool) -> tuple[dict, dict, int, dict]:
    """({part: s}, {part: note}, worst exit status, {build, suites: busy CPU-seconds of the
    host}) of the four parts, one after the other."""
    alone, notes, worst, cpu = {}, {}, 0, {}
    rc, alone["set-up"], log = timed("set-up", ["bash", "scripts/setup-host.sh", "--main-job"],
                                     work / "setup.log")
    notes["set-up"], worst = setup_note(log) + ("" if rc == 0 else f"; exit {rc}"), max(worst, rc)
    if cold:
        drop_image_cache(board)
    rc, alone["images"], log = timed("images", [".venv/bin/boardlab", "vlab", "build", "--board", board.name],
                                     work / "images.log")
    notes["images"], worst = images_note(log, cold) + ("" if rc == 0 else f"; exit {rc}"), max(worst, rc)
    ticks = hostload.cpu_ticks()
    rc, alone["build"], notes["build"] = build_alone(board, work / "kernel-build.log")
    worst, cpu["build"] = max(worst, rc), hostload.share(ticks, hostload.cpu_ticks())["busy_cpu_s"]
    run = work / "suites-alone"
    with kept_up("vlab", boards=(board.name,)):   # up before the clock starts; down after if it was
        ticks = hostload.cpu_ticks()
        rc, alone["suites"], _ = timed("suites", pytest_cmd(board.name, run, bool(os.environ.get("BOARDLAB_FULL"))),
                                       work / "suites.log")
        cpu["suites"] = hostload.share(ticks, hostload.cpu_ticks())["busy_cpu_s"]
    suites = timing.suite_seconds(run / "junit.xml")
    notes["suites"] = (f"{', '.join(f'{s} {t:.0f}' for s, t in suites.items())}; without {BUILD_SUITE}"
                       + ("" if rc == 0 else f"; pytest exit {rc}"))   # timed all the same
    notes["build"] += f"; host busy {cpu['build']:.1f} CPU-s"
    notes["suites"] += f"; host busy {cpu['suites']:.1f} CPU-s"
    return alone, notes, max(worst, rc), cpu


def main_job(board, work: Path, cold: bool) -> tuple[int, float, dict, str, str]:
    """(exit status, host s, the parts in it, the rest of its steps, its note) of the main
    job itself, the lab down as a person starts it (its images removed first if cold)."""
    shared = any(h.is_up() for h in VirtualLab().hosts.values())   # another user kept it up
    if cold and not shared:
        drop_image_cache(board)   # the main job builds them too, as the images part does
    status, main_s, log = timed("main job", ["bash", "scripts/main-job.sh"], work / "main-job.log")
    found = re.findall(r"^results: (\S+)", log, re.M)
    in_main, rest = in_main_job(Path(found[-1]), board.name) if found else ({}, "the main job named no run directory")
    note = (f"exit {status}" + (f", {found[-1]}" if found else "")
            + ("; the lab was up (another user's): the main job used it as it was"
               + (", its images kept" if cold else "") if shared else ""))
    return status, main_s, in_main, rest, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cold", action="store_true",
                    help="remove the default board's own image cache (<cache>/images/<board>, nothing "
                         "else) before the images part and before the main job: both build them")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat parts alone and main job this many times, the order turned every "
                         "other round; prints each round's ratio and their median (default 1)")
    args = ap.parse_args()
    if args.rounds < 1:
        print(f"critical_path: --rounds {args.rounds}: at least 1", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("critical_path: run as root (the set-up, the virtual lab)", file=sys.stderr)
        return 2
    if any(h.is_up() for h in VirtualLab().hosts.values()):
        print("critical_path: the virtual lab is up: the parts are timed alone, and the main job "
              "brings it up itself: boardlab vlab down first", file=sys.stderr)
        return 2
    board = load_board(default_board())
    host = this_host()
    work = ROOT / "results" / f"critical-path-{time.strftime('%Y%m%d-%H%M%S')}"
    work.mkdir(parents=True)
    print(f"host {host['id']} ({host['cpus']} cores); board {board.name}; {args.rounds} round(s); "
          f"logs in {work}", flush=True)
    rounds, failed = [], 0
    for i in range(args.rounds):
        here = work / f"round-{i + 1}" if args.rounds > 1 else work
        here.mkdir(exist_ok=True)
        print(f"round {i + 1} of {args.rounds} ({round_order(i)}), {time.strftime('%H:%M:%S')}", flush=True)
        if i % 2:
            status, main_s, in_main, rest, note = main_job(board, here, args.cold)
        alone, notes, worst, cpu = parts_alone(board, here, args.cold)
        if not i % 2:
            status, main_s, in_main, rest, note = main_job(board, here, args.cold)
        notes["main job"] = note
        print(f"\nround {i + 1}:\n" + report(alone, main_s, in_main, notes, host, cpu) + rest + "\n", flush=True)
        rounds.append((alone, main_s, in_main))
        failed = failed or worst or status
    if args.rounds > 1:
        print(f"host {host['id']} ({host['cpus']} cores), host clock, seconds\n\n" + rounds_summary(rounds))
    return 1 if failed else 0   # the figures stand; a failed part or verdict is said


if __name__ == "__main__":
    sys.exit(main())
