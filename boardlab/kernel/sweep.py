"""`boardlab kernel sweep [VERSION...]`: the study redone on real kernels. Each
linux-source version (default: every one Debian's archive serves for 6.1 and 6.12) is
built with the virtual board's virt-nfs fragment and registered (kernel.frombuild), then
measured by the suites (every family a boot measures; quick mode, one boot a
kernel) with its build sizes beside them, and landed in the lab's history where one is
kept. Each pair of neighbours (and the two ends) is then decided (kernel.neighbours):
where one boot each leaves a figure unknown, both booted in turn until decided.

The next version builds while the previous one is measured: guest-deterministic figures
do not see the host's load. A version that fails to build, boot or pass its suites is
named in the summary (the failing test too) and the sweep goes on; <out>/sweep.json
lets a second call resume where the first stopped.

The study's own boards (a kernels/6.1/<board>.config) are cross-built at both ends of the list,
oldest 6.1 and newest 6.12, for build sizes only: `<out>/study.md`, the study's tables."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from boardlab.sharing.placehold import place_held
from boardlab.kernelbuilds import kbuild, sources
from boardlab.errors import BoardlabError, KernelFault
from boardlab.facts.board import KERNELS_DIR, PROJECT_ROOT, Board, env_path, load_board
from boardlab.files import atomic_write
from boardlab.judge.results import RunResults, load_run
from boardlab.kernel.frombuild import build_version, default_name, source_date
from boardlab.log import progress
from boardlab.measure.families import FAMILIES

SERIES = ("linux-source-6.1", "linux-source-6.12")
SUITES = tuple(f"test_{f.name}.py" for f in FAMILIES if f.on_boot and f.default)
SHOWN = tuple(f.shown for f in FAMILIES if f.shown)   # a figure of each family


class SuitesFailed(KernelFault):
    """A kernel whose suites failed: the failing tests named, their figures kept."""


@dataclass
class Entry:
    version: str
    name: str
    status: str = "pending"      # built, measured, failed
    why: str = ""
    build_s: float | None = None
    measure_s: float | None = None
    run_dir: str = ""


STUDY_CONFIGS = KERNELS_DIR / "6.1"   # <board>.config: the study's boards, their defconfigs


@dataclass
class StudyBuild:
    """One of the study's boards built at one end of the series (build sizes only)."""
    board: str
    version: str
    status: str = "pending"      # measured, failed
    why: str = ""
    build_s: float | None = None
    run_dir: str = ""


def study_boards() -> list[str]:
    return sorted(p.stem for p in STUDY_CONFIGS.glob("*.config"))


def series_ends(versions: list[str]) -> list[str]:
    """The oldest and the newest version of the list (one if it holds one)."""
    ordered = sorted(versions, key=version_key)
    return list(dict.fromkeys([ordered[0], ordered[-1]])) if ordered else []


def version_key(v: str):
    return tuple(int(n) for n in re.findall(r"\d+", v.split("~")[0]))


def default_versions() -> list[str]:
    return sorted((v for pkg in SERIES for v in sources.served_versions(pkg)), key=version_key)


def _load(path: Path, versions, base) -> dict[str, Entry]:   # sweep.json's kernels, else new
    had = {e["version"]: Entry(**e) for e in json.loads(path.read_text())["kernels"]} if path.exists() else {}
    return {v: had.get(v) or Entry(v, default_name(base, v)) for v in versions}


def _load_study(path: Path, versions) -> dict[tuple, StudyBuild]:
    data = json.loads(path.read_text()) if path.exists() else {}
    had = {(b["board"], b["version"]): StudyBuild(**b) for b in data.get("study_builds", [])}
    return {(b, v): had.get((b, v)) or StudyBuild(b, v) for b in study_boards() for v in series_ends(versions)}


def _save(path: Path, state: dict, study: dict | None = None):
    data = json.loads(path.read_text()) if path.exists() else {}   # the pairs' answers stay
    data["kernels"] = [asdict(e) for e in state.values()]
    if study:
        data["study_builds"] = [asdict(b) for b in study.values()]
    atomic_write(path, json.dumps(data, indent=1) + "\n")


def _build_study(sb: StudyBuild, out: Path, lab_of_board: bool) -> None:
    """Cross-build one study board at one version and record its build sizes (exact, no
    clock) as a run of their own: out/<board>-<version>/results.json."""
    from boardlab.history.submit import land
    board = load_board(sb.board)
    t0 = time.monotonic()
    try:
        r = build_version(board, sb.version, STUDY_CONFIGS / f"{sb.board}.config", name=sb.version)
    except BoardlabError as err:
        sb.status, sb.why = "failed", f"build: {str(err).splitlines()[0]}"
        return
    sb.build_s, run = round(time.monotonic() - t0, 1), out / f"{sb.board}-{sb.version}"
    res = RunResults(run)
    res.meta["kernel_date"] = source_date(sb.version)
    res.meta.setdefault("kernel_configs", {})[f"{sb.board} {sb.version}"] = (
        f"linux-source {sb.version} with " + kbuild.describe_config(STUDY_CONFIGS / f"{sb.board}.config"))
    for name, value in r.built.figures(timed=False).items():   # timed: not beside a measurement
        res.record(board, sb.version, "build", name, value, identity=r.identity)
    sb.status, sb.run_dir = "measured", str(run)
    if lab_of_board:
        land(run, board.lab_host, progress=progress)


def _build(board: Board, e: Entry, fragment: Path):
    """Build one version (in the builder thread); the registration's sizes, or raises."""
    t0 = time.monotonic()
    r = build_version(board, e.version, fragment, e.name)
    e.build_s = round(time.monotonic() - t0, 1)
    return r


def _measure(board: Board, e: Entry, out: Path, registered) -> None:
    run = out / e.name
    cmd = [str(Path(sys.executable).parent / "pytest"), "--lg-env", str(env_path(board.name)),
           "-p", "no:cacheprovider", "-v", *[f"testsuites/{s}" for s in SUITES], "--quick", "--kernel", e.name,
           "--run-dir", str(run), "--boot-repeats", "1"]
    t0, failing = time.monotonic(), []
    with open(out / f"{e.name}.log", "w") as log:   # the log whole, a line per suite's test said
        proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace")
        for line in proc.stdout:
            log.write(line)
            if m := re.match(r"testsuites/(\S+?)\.py::(\S+) (PASSED|FAILED|SKIPPED|ERROR)", line):
                progress(f"  {e.name}: {m.group(1)}::{m.group(2)} {m.group(3).lower()} "
                         f"({time.monotonic() - t0:.0f} s)")
                if m.group(3) in ("FAILED", "ERROR"):
                    failing.append(f"{m.group(1)}::{m.group(2)} {m.group(3).lower()}")
        proc.wait()
    e.measure_s, e.run_dir = round(time.monotonic() - t0, 1), str(run)
    metrics = load_run(run)["metrics"] if (run / "results.json").exists() else []
    if not any(m["suite"] == "boot_time" for m in metrics):
        tail = (out / f"{e.name}.log").read_text(errors="replace").strip().splitlines()[-3:]
        raise BoardlabError(f"not measured (no boot time; {out / e.name}.log): {' / '.join(tail)}")
    res = RunResults(run)   # the build's exact figures beside the board's
    res.meta["kernel_date"] = source_date(e.version)   # the history's series: by release date
    ident = res.identity(board.name, e.name)
    for name, value in registered.built.figures(timed=False).items():   # timed: not beside a measurement
        res.record(board, e.name, "build", name, value, identity=ident)
    if proc.returncode != 0:   # its figures are kept in the run; the kernel is not "measured"
        raise SuitesFailed(f"suites failed (pytest exit {proc.returncode}): "
                           f"{', '.join(failing) or 'no test named'} ({out / e.name}.log)")


def sweep(board: Board, versions: list[str], out: Path, fragment: Path, lab: str | None,
          budget: int = 10, jitter_s: int | None = None) -> dict[str, Entry]:
    """lab: whose history the runs land in (None: none, a benchmark's). budget: boots a
    side for deciding each pair of neighbours (kernel.neighbours; 0: one boot each only),
    jitter_s cyclictest's run in those boots (None: the suite's)."""
    from boardlab.history.submit import land
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / "sweep.json"
    state = _load(state_path, versions, fragment.parent.name)
    study = _load_study(state_path, versions)
    todo = [v for v in versions if state[v].status != "measured"]
    study_todo = [sb for sb in study.values() if sb.status != "measured"]
    progress(f"sweep of {len(versions)} kernels on {board.name} ({len(versions) - len(todo)} measured before)"
             + (f" and {len(study_todo)} build(s) of the study's boards at the series' ends" if study_todo else "")
             + f": {out}")
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as builder:   # builds one ahead of the measurement
        pending = {v: builder.submit(_build_quietly, board, state[v], fragment) for v in todo[:1]}
        # the study's boards need no board: built while the last kernels are measured and the pairs booted
        study_done = [builder.submit(_build_study, sb, out, bool(lab)) for sb in study_todo] if not todo[1:] else []
        for i, v in enumerate(todo):
            e = state[v]
            if i + 1 < len(todo):
                pending[todo[i + 1]] = builder.submit(_build_quietly, board, state[todo[i + 1]], fragment)
            elif not study_done:
                study_done = [builder.submit(_build_study, sb, out, bool(lab)) for sb in study_todo]
            built, failure = pending.pop(v).result()
            if failure:
                e.status, e.why = "failed", f"build: {failure}"
            else:
                progress(f"[{versions.index(v) + 1}/{len(versions)}] {e.name}: built in {e.build_s} s; measuring")
                with place_held(board, "kernel-sweep"):   # not had: PlaceHoldError stops the sweep (resumable)
                    try:
                        _measure(board, e, out, built)
                        e.status, e.why = "measured", ""
                        if lab:
                            land(Path(e.run_dir), lab, progress=progress)
                    except SuitesFailed as err:
                        e.status, e.why = "failed", str(err)
                    except BoardlabError as err:
                        e.status, e.why = "failed", f"boot or measurement: {err}"
            progress(f"[{versions.index(v) + 1}/{len(versions)}] {e.name}: {e.status}"
                     + (f" ({e.why})" if e.why else f", {_shown(e)}"))
            _save(state_path, state, study)
        if budget:   # the pairs one boot each leaves undecided, booted in turn while the study's boards build
            from boardlab.kernel.neighbours import decide_all
            decide_all(board, [(state[v].name, state[v].run_dir) for v in sorted(state, key=version_key)
                               if state[v].status == "measured"], out, budget, jitter_s=jitter_s)
        for sb, done in zip(study_todo, study_done):
            done.result()
            progress(f"{sb.board} at {sb.version}: {sb.status}" + (f" ({sb.why})" if sb.why else
                                                                     f", build sizes in {sb.run_dir}"))
            _save(state_path, state, study)
    progress(f"sweep: {time.monotonic() - t0:.0f} s for {len(todo)} kernels and {len(study_todo)} study builds")
    write_study(out, state, study)
    series_page(out, state)
    return state


def series(state: dict[str, Entry], base: str = "virt-nfs") -> dict:
    """{(metric, environment): [(version, [samples])]} of the measured kernels in version order:
    one series per metric across both 6.1 and 6.12, as the Phoronix study drew its releases. The
    build's label is the linux-source version (6.1.192-1 and -2 print the same release).
    Host-clock figures are left out: they were taken beside the next kernel's build."""
    from boardlab.history.submit import environment
    from boardlab.measure.clocks import HOST
    out: dict = {}
    for v in sorted((v for v, e in state.items() if e.status == "measured"), key=version_key):
        for m in load_run(state[v].run_dir)["metrics"]:
            if m["clock"] == HOST:
                continue
            key = (f"{m['suite']}/{m['name']}", environment(m["board"], base, m["clock"]))
            out.setdefault(key, []).append((v.split("~")[0], m.get("samples") or [m["value"]]))
    return out


def series_page(out: Path, state: dict[str, Entry]) -> Path | None:
    """<out>/series.html: every metric across the versions, each version's samples an error
    bar, the change points marked (Otava, in the history's venv; else the page says why)."""
    from boardlab.history import changes, charts
    found = series(state)
    if not any(len(v) > 1 for v in found.values()):
        return None
    try:
        points, how = changes.find(None, samples=found), "versions of Debian's linux-source"
    except BoardlabError as err:   # no history venv on this host: the series without them
        points, how = [], f"versions of Debian's linux-source (change points not found: {err})"
    path = charts.render(out, "series.html", f"boardlab kernel sweep: {out.name}", how, found, points, {})
    progress(f"the series, {len(points)} change point(s): {path}")
    return path


def write_study(out: Path, state: dict[str, Entry], study: dict) -> Path | None:
    """<out>/study.md: per study board, the study's table with the series' two ends."""
    from boardlab.pages import study_table
    parts = []
    for board in study_boards():
        runs = [sb.run_dir for sb in study.values() if sb.board == board and sb.status == "measured"]
        if runs:
            parts.append(f"## {board}\n\n" + study_table.markdown(runs))
    if not parts:
        return None
    path = out / "study.md"
    atomic_write(path, "# The study's boards at the two ends of the series (build sizes)\n\n" + "\n".join(parts))
    progress(f"the study's tables: {path}")
    return path


def _build_quietly(board, e, fragment):   # (the build, None) or (None, why)
    try:
        return _build(board, e, fragment), None
    except BoardlabError as err:
        return None, str(err).splitlines()[0]


def _shown(e: Entry) -> str:
    metrics = {f"{m['suite']}.{m['name']}": m for m in load_run(e.run_dir)["metrics"]}
    return ", ".join(f"{k.split('.')[1]} {metrics[k]['value']:g} {metrics[k]['unit']}" for k in SHOWN if k in metrics)


def summary(state: dict[str, Entry]) -> str:
    lines = ["| kernel | status | build s | measure s | " + " | ".join(SHOWN) + " |",
             "|---|---|---:|---:|" + "---:|" * len(SHOWN)]
    for e in state.values():
        vals = ({f"{m['suite']}.{m['name']}": m["value"] for m in load_run(e.run_dir)["metrics"]}
                if e.status == "measured" else {})
        lines.append(f"| {e.name} | {e.status}{': ' + e.why if e.why else ''} | {e.build_s or '-'} | "
                     f"{e.measure_s or '-'} | " + " | ".join(f"{vals[k]:g}" if k in vals else "-" for k in SHOWN) + " |")
    return "\n".join(lines) + "\n"
