"""`boardlab kernel sweep [VERSION...]`: the study redone on real kernels. Each
linux-source version (default: every one Debian's archive serves for 6.1 and 6.12) is
built with the virtual board's virt-nfs fragment and registered (kernel.frombuild), then
measured by the suites (boot time, memory, lmbench, jitter; quick mode, one boot a
kernel: on the deterministic clock the figures are exact) with its build sizes beside
them, and landed in the lab's history where one is kept.

The next version builds while the previous one is measured: guest-deterministic figures
do not see the host's load. A version that fails to build or boot is named in the
summary and the sweep goes on; the state (<out>/sweep.json) lets a second call resume
where the first stopped."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from boardlab.build import sources
from boardlab.errors import BoardlabError
from boardlab.facts.board import PROJECT_ROOT, Board
from boardlab.files import atomic_write
from boardlab.judge.results import RunResults, load_run
from boardlab.kernel.frombuild import build_version, default_name, source_date
from boardlab.log import progress

SERIES = ("linux-source-6.1", "linux-source-6.12")
SUITES = ("test_boot_time.py", "test_memory.py", "test_lmbench.py", "test_jitter.py")
SHOWN = ("boot_time.guest_login", "memory.mem_eat_kb", "lmbench.lat_syscall_null_us", "jitter.max_us")


@dataclass
class Entry:
    version: str
    name: str
    status: str = "pending"      # built, measured, failed
    why: str = ""
    build_s: float | None = None
    measure_s: float | None = None
    run_dir: str = ""


def version_key(v: str):
    return tuple(int(n) for n in re.findall(r"\d+", v.split("~")[0]))


def default_versions() -> list[str]:
    return sorted((v for pkg in SERIES for v in sources.served_versions(pkg)), key=version_key)


def _load(path: Path, versions, base) -> dict[str, Entry]:
    had = {e["version"]: Entry(**e) for e in json.loads(path.read_text())["kernels"]} if path.exists() else {}
    return {v: had.get(v) or Entry(v, default_name(base, v)) for v in versions}


def _save(path: Path, state: dict):
    atomic_write(path, json.dumps({"kernels": [asdict(e) for e in state.values()]}, indent=1) + "\n")


def _build(board: Board, e: Entry, fragment: Path):
    """Build one version (in the builder thread); the registration's sizes, or raises."""
    t0 = time.monotonic()
    r = build_version(board, e.version, fragment, e.name)
    e.build_s = round(time.monotonic() - t0, 1)
    return r


def _measure(board: Board, e: Entry, out: Path, registered) -> None:
    run = out / e.name
    cmd = [str(Path(sys.executable).parent / "pytest"), "--lg-env", str(PROJECT_ROOT / "lab" / f"{board.name}.yaml"),
           "-p", "no:cacheprovider", "-q", *[f"testsuites/{s}" for s in SUITES], "--quick", "--kernel", e.name,
           "--run-dir", str(run), "--boot-repeats", "1"]
    t0 = time.monotonic()
    with open(out / f"{e.name}.log", "w") as log:
        subprocess.run(cmd, cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
    e.measure_s, e.run_dir = round(time.monotonic() - t0, 1), str(run)
    metrics = load_run(run)["metrics"] if (run / "results.json").exists() else []
    if not any(m["suite"] == "boot_time" for m in metrics):
        tail = (out / f"{e.name}.log").read_text(errors="replace").strip().splitlines()[-3:]
        raise BoardlabError(f"not measured (no boot time; {out / e.name}.log): {' / '.join(tail)}")
    res = RunResults(run)   # the build's exact figures beside the board's
    res.meta["kernel_date"] = source_date(e.version)   # the history's series: by release date
    built = registered.built
    ident = res.identity(board.name, e.name)
    for name, value in {"uimage_data_bytes": built.uimage_data_bytes, "uncompressed_bytes": built.uncompressed_bytes,
                        **{f"vmlinux_{p}_bytes": built.vmlinux[p] for p in ("text", "data", "bss", "dec")}}.items():
        res.record(board, e.name, "build", name, value, identity=ident)


def sweep(board: Board, versions: list[str], out: Path, fragment: Path, lab: str | None) -> dict[str, Entry]:
    """lab: whose history the runs land in (None: none, a benchmark's)."""
    from boardlab.history.submit import land
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / "sweep.json"
    state = _load(state_path, versions, fragment.parent.name)
    todo = [v for v in versions if state[v].status != "measured"]
    progress(f"sweep of {len(versions)} kernels on {board.name} ({len(versions) - len(todo)} measured before): {out}")
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as builder:   # builds one ahead of the measurement
        pending = {v: builder.submit(_build_quietly, board, state[v], fragment) for v in todo[:1]}
        for i, v in enumerate(todo):
            e = state[v]
            if i + 1 < len(todo):
                pending[todo[i + 1]] = builder.submit(_build_quietly, board, state[todo[i + 1]], fragment)
            built, failure = pending.pop(v).result()
            if failure:
                e.status, e.why = "failed", f"build: {failure}"
            else:
                progress(f"[{versions.index(v) + 1}/{len(versions)}] {e.name}: built in {e.build_s} s; measuring")
                try:
                    _measure(board, e, out, built)
                    e.status, e.why = "measured", ""
                    if lab:
                        land(Path(e.run_dir), lab, progress=progress)
                except BoardlabError as err:
                    e.status, e.why = "failed", f"boot or measurement: {err}"
            progress(f"[{versions.index(v) + 1}/{len(versions)}] {e.name}: {e.status}"
                     + (f" ({e.why})" if e.why else f", {_shown(e)}"))
            _save(state_path, state)
    progress(f"sweep: {time.monotonic() - t0:.0f} s for {len(todo)} kernels")
    return state


def _build_quietly(board, e, fragment):
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
        vals = {}
        if e.status == "measured":
            vals = {f"{m['suite']}.{m['name']}": m["value"] for m in load_run(e.run_dir)["metrics"]}
        lines.append(f"| {e.name} | {e.status}{': ' + e.why if e.why else ''} | {e.build_s or '-'} | "
                     f"{e.measure_s or '-'} | " + " | ".join(f"{vals[k]:g}" if k in vals else "-" for k in SHOWN) + " |")
    return "\n".join(lines) + "\n"
