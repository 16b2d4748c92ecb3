"""`boardlab kernel pin KERNEL VERSION --why TEXT`: move a kernel's pin, and re-measure.
The new package (or linux-source version) must be obtainable before anything changes;
then the pin is written, the board's images are rebuilt from it, the suites run on the
virtual board with --update-baselines (the baselines now carry the new identity), and
the pin records why and which run measured it. If the run fails, the pin and the
baselines are put back as they were."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from boardlab.kernelbuilds import sources
from boardlab.errors import InputError
from boardlab.facts.board import PROJECT_ROOT, Board, env_path
from boardlab.facts.kernelpin import Pin, load_pin, pin_path, write_pin
from boardlab.measure.baselines import baseline_path
from boardlab.log import progress


def obtainable(pin: Pin) -> None:
    """InputError naming what is missing when this host cannot get the pinned kernel."""
    if pin.is_source:
        try:
            sources.source(pin.version, pin.package)
        except sources.SourceError as e:
            raise InputError(str(e)) from None
        return
    from boardlab.kernelbuilds.buildenv import CACHE_DIR
    from boardlab.images.debs import pinned_deb, served_versions
    served = served_versions(pin.package)
    if not pinned_deb(pin, CACHE_DIR / "debs").exists() and pin.version not in served:
        raise InputError(f"{pin.package} {pin.version}: not in the cache and apt does not serve it "
                         f"(it serves: {', '.join(served) or 'no version'})")


def suites_command(board: Board, kernel: str, run_dir: Path) -> list[str]:
    """Every suite (the build-size suite too: a kernel built here is re-measured by it), as
    baselines are recorded: 5 samples of each repeated measurement."""
    return [str(Path(sys.executable).parent / "pytest"), "--lg-env", str(env_path(board.name)),
            "testsuites/", "--kernel", kernel, "--run-dir", str(run_dir), "--repeats", "5",
            "--boot-repeats", "5", "--update-baselines"]


def move(board: Board, kernel: str, version: str, why: str, package: str | None = None) -> Path:
    """Returns the run directory that measured the kernel at its new pin."""
    old = load_pin(kernel)
    if old is None:
        raise InputError(f"kernel {kernel} has no pin ({pin_path(kernel)}): nothing to move")
    if not why.strip():
        raise InputError("--why: say why the pin moves (it is kept in the pin)")
    new = replace(old, package=package or old.package, version=version, why=why,
                  since=time.strftime("%Y-%m-%d"), run="")
    if new == replace(old, why=why, since=new.since, run=""):
        raise InputError(f"kernel {kernel} is pinned to {old.line()} already")
    obtainable(new)
    saved = {p: p.read_bytes() for p in (pin_path(kernel), baseline_path(kernel, board.name)) if p.exists()}
    run_dir = PROJECT_ROOT / "results" / f"pin-{kernel}-{version}-{time.strftime('%Y%m%d-%H%M%S')}"
    write_pin(new)
    progress(f"kernel {kernel}: pin {old.line()} -> {new.line()}; measuring on {board.name} ({run_dir})")
    try:
        if board.virtual:
            from boardlab.vlab.host import VirtualLabHost
            VirtualLabHost(board.lab_host).prepare(board.name)   # images from the new pin
        r = subprocess.run(suites_command(board, kernel, run_dir), cwd=PROJECT_ROOT,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if r.returncode != 0:
            raise InputError(f"the suites on {kernel} at {new.line()} failed (exit {r.returncode}; "
                             f"{run_dir}): the pin stays at {old.line()}")
    except BaseException:   # the pin and baselines as they were; the images follow at the next use
        for path, data in saved.items():
            path.write_bytes(data)
        raise
    write_pin(replace(new, run=str(run_dir.relative_to(PROJECT_ROOT))))
    return run_dir
