"""Kernel builds for the build-size suite: Debian's linux-source, the board's config
fragment from kernels/<kernel>/<board>.config merged over allnoconfig, a clean build
timed like the study (`time make uImage`: real, user, sys), wrapped with mkimage."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .log import progress
from .parsers import parse_mkimage_list, parse_size
from .vlab.images import CACHE_DIR, mkimage
from .errors import BoardlabError
from .facts import Board

SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")   # Debian's linux-source-6.1
ARCH = {"arm": ("arm", "arm-linux-gnueabihf-", "zImage")}


class KernelBuildError(BoardlabError):
    pass


@dataclass
class BuildResult:
    uimage: Path
    release: str
    real_s: float
    user_s: float
    sys_s: float
    uimage_data_bytes: int
    vmlinux: dict            # text, data, bss, dec
    uncompressed_bytes: int  # arch/*/boot/Image
    log: Path


def source_tree(tarball: Path = SOURCE_TARBALL) -> Path:
    """The unpacked source (once; a stamp marks a complete unpack)."""
    if not tarball.exists():
        raise KernelBuildError(f"{tarball} not found: install Debian's linux-source-6.1 "
                               f"(scripts/setup-host.sh does)")
    dest = CACHE_DIR / "src"
    tree = dest / tarball.name.replace(".tar.xz", "")
    stamp = tree / ".boardlab-unpacked"
    if stamp.exists():
        return tree
    progress(f"unpacking {tarball} into {dest} (once)")
    shutil.rmtree(tree, ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(dest)], check=True)
    stamp.write_text(str(tarball.stat().st_mtime))
    return tree


def _make(src, out, arch, cross, *targets, log, jobs=None):
    cmd = ["make", "-C", str(src), f"O={out}", f"ARCH={arch}", f"CROSS_COMPILE={cross}",
           "KBUILD_BUILD_USER=boardlab", "KBUILD_BUILD_HOST=lab"]
    if jobs:
        cmd.append(f"-j{jobs}")
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd + list(targets))}\n")
        f.flush()
        r = subprocess.run(cmd + list(targets), stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        tail = "\n".join(Path(log).read_text().splitlines()[-15:])
        raise KernelBuildError(f"make {' '.join(targets)} failed ({r.returncode}); log {log}:\n{tail}")


def build(board: Board, kernel: str, fragment: Path, jobs: int | None = None) -> BuildResult:
    arch, cross, image = ARCH[board.arch]
    if not fragment.exists():
        raise KernelBuildError(f"no config for board {board.name}, kernel {kernel}: {fragment}")
    src = source_tree()
    out = CACHE_DIR / "kbuild" / f"{board.name}-{kernel}"
    shutil.rmtree(out, ignore_errors=True)   # from clean, as the study built
    out.mkdir(parents=True)
    log = out / "build.log"
    jobs = jobs or os.cpu_count()
    _make(src, out, arch, cross, "allnoconfig", log=log)
    r = subprocess.run([str(src / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(out),
                        str(out / ".config"), str(fragment)],
                       capture_output=True, text=True, cwd=out,
                       env={**os.environ, "ARCH": arch, "CROSS_COMPILE": cross})
    if r.returncode != 0:
        raise KernelBuildError(f"merging {fragment} failed: {r.stderr or r.stdout}")
    _make(src, out, arch, cross, "olddefconfig", log=log)
    missing = _unset_options(out / ".config", fragment)
    if missing:
        raise KernelBuildError(f"{fragment}: not in the resulting .config (dependencies "
                               f"missing?): {', '.join(missing)}")
    progress(f"building {kernel} for {board.name} with -j{jobs} (log {log})")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    _make(src, out, arch, cross, image, log=log, jobs=jobs)
    real = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    release = subprocess.run(["make", "-s", "-C", str(src), f"O={out}", f"ARCH={arch}",
                              f"CROSS_COMPILE={cross}", "kernelrelease"],
                             capture_output=True, text=True, check=True).stdout.strip()
    images_dir = Path(board.images.dir)
    images_dir.mkdir(parents=True, exist_ok=True)
    uimage = images_dir / (board.images.kernels[kernel].uimage if kernel in board.images.kernels else f"{kernel}.uImage")
    mkimage("kernel", out / f"arch/{arch}/boot/{image}", uimage, board, f"Linux-{release}")
    listing = subprocess.run(["mkimage", "-l", str(uimage)], capture_output=True, text=True,
                             check=True).stdout
    size = subprocess.run([f"{cross}size", str(out / "vmlinux")], capture_output=True, text=True,
                          check=True).stdout
    progress(f"built {uimage.name} ({release}) in {real:.1f} s")
    return BuildResult(uimage, release, round(real, 2),
                       round(after.ru_utime - before.ru_utime, 2),
                       round(after.ru_stime - before.ru_stime, 2),
                       parse_mkimage_list(listing)["data_size"], parse_size(size),
                       (out / f"arch/{arch}/boot/Image").stat().st_size, log)


def _unset_options(config: Path, fragment: Path) -> list[str]:
    have = set(config.read_text().splitlines())
    want = [ln.strip() for ln in fragment.read_text().splitlines()
            if ln.strip().startswith("CONFIG_") and ln.strip().endswith("=y")]
    return [w.split("=")[0] for w in want if w not in have]
