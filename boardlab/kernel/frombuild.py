"""`boardlab kernel build VERSION`: a kernel from Debian's linux-source at that version
(fetched once, cached by version), built with a board's config fragment (olddefconfig on
it, as every build here), and registered under its name (build.registry) with its
identity, its .config and the options this version changed against the board's pinned
kernel of the same fragment. Built by boardlab's own kbuild, as the suites and the
bisect build: one build path (reproducible version string, identity beside the image,
incremental through ccache), so a version's figures and a bisect's agree."""
from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds import kbuild, registry, sources
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.errors import InputError
from boardlab.facts.board import PROJECT_ROOT, Board
from boardlab.log import progress
from boardlab.measure import kernelid
from boardlab.kernelbuilds.configkernels import report_progress


@dataclass
class Registered:
    name: str
    uimage: Path
    identity: dict
    changes: list          # config options this version changed (registry.config_changes)
    build_s: float
    built: kbuild.BuildResult   # its sizes, as the build-size suite reads them


def default_name(base: str, version: str) -> str:
    return f"{base}-{version}"


def reference_config(board: Board, base: str) -> Path | None:
    """The .config of the board's pinned kernel built from the same fragment, where one
    was built here (the build suite's or the image's build directory)."""
    for d in (f"{board.name}-{base}", f"{board.name}-{base}-image"):
        path = CACHE_DIR / "kbuild" / d / ".config"
        if path.exists():
            return path
    return None


def build_version(board: Board, version: str, fragment: Path, name: str | None = None) -> Registered:
    if not fragment.exists():
        raise InputError(f"kernel config fragment {fragment} not found (--config)")
    base = fragment.parent.name                      # kernels/virt-nfs/qemu-arm.config -> virt-nfs
    name = name or default_name(base, version)
    src = sources.source(version)                    # SourceError: one line, with what apt serves
    tree = kbuild.source_tree(src)
    out = CACHE_DIR / "kbuild" / f"{board.name}-{name}"
    target = registry.uimage(board.name, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    progress(f"building {name} for {board.name}: {src.label} with {fragment.relative_to(PROJECT_ROOT)} "
             f"(log {out / 'build.log'})")
    t0 = time.monotonic()
    done = threading.Event()   # a clean build takes minutes: say how it goes
    threading.Thread(target=report_progress, args=(out / "build.log", f"{name}", done), daemon=True).start()
    try:
        built = kbuild.build_tree(board, tree, out, fragment, target, flavour=base)
    finally:
        done.set()
    took = time.monotonic() - t0
    shutil.copyfile(out / ".config", target.with_suffix(".config"))
    ref = reference_config(board, base)
    changes = registry.config_changes(ref, out / ".config") if ref else []
    target.with_suffix(".config-changes").write_text(
        f"# {src.label} against {ref or 'no reference build'}, fragment {fragment.name}\n"
        + "".join(f"{c}\n" for c in changes))
    progress(f"registered {name}: {target} ({built.release}, {took:.0f} s); "
             f"{len(changes)} config option(s) changed against the pinned {base}")
    return Registered(name, target, kernelid.of_image(target), changes, round(took, 1), built)


def source_date(version: str) -> str:
    """The date of a linux-source version (its tarball's, as its builds' version string
    has it), ISO 8601: how a sweep orders its kernels in the history."""
    when = kbuild.source_identity(kbuild.source_tree(sources.source(version)))[1]
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(when))
