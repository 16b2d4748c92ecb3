"""Kernel builds for the build-size suite: Debian's linux-source, the board's config
fragment from kernels/<kernel>/<board>.config merged over allnoconfig, a clean build
timed like the study (`time make uImage`: real, user, sys), wrapped with mkimage; and
incremental builds of a kernel tree of one's own, through ccache, for `boardlab bisect`."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds import fragmentcheck, sources
from boardlab.kernelbuilds.buildenv import CACHE_DIR, mkimage
from boardlab.errors import KernelFault
from boardlab.facts.board import Board
from boardlab.log import progress
from boardlab.measure import kernelid
from boardlab.measure.parsers import parse_mkimage_list, parse_size

SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")   # Debian's linux-source-6.1
SOURCE_VERSION = ".boardlab-source-version"   # in an unpacked tree: the package it came from
# A fragment's first lines may name the config it is merged over: `# base: tqm8xx_defconfig`
BASE_DIRECTIVE = "# base:"


@dataclass(frozen=True)
class CrossArch:
    """How a board's arch is built: make's ARCH and CROSS_COMPILE, the image target, and
    whether that target is already a uImage (powerpc's wrapper runs mkimage itself)."""
    arch: str
    cross: str
    target: str
    target_is_uimage: bool = False


ARCH = {
    "arm": CrossArch("arm", "arm-linux-gnueabihf-", "zImage"),
    # `make uImage`: gzip'd vmlinux.bin wrapped by mkimage, as the study's boards loaded it
    "ppc": CrossArch("powerpc", "powerpc-linux-gnu-", "uImage", target_is_uimage=True),
}


class KernelBuildError(KernelFault):
    """The tree under test did not build."""


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

    def figures(self, timed: bool = True) -> dict[str, float]:
        """The build-size suite's metrics (build.<name>): the sizes, and the build's times
        when it was a clean build on a host doing nothing else (timed)."""
        sizes = {"uimage_data_bytes": self.uimage_data_bytes,
                 "uncompressed_bytes": self.uncompressed_bytes,
                 **{f"vmlinux_{part}_bytes": self.vmlinux[part]
                    for part in ("text", "data", "bss", "dec")}}
        times = {"real_s": self.real_s, "user_s": self.user_s, "sys_s": self.sys_s}
        return {**times, **sizes} if timed else sizes


def source_tree(src: sources.Source | None = None) -> Path:
    """The unpacked source of a linux-source version (default: the installed one), once
    per version (a stamp marks a complete unpack)."""
    src = src or sources.installed()
    if not src.tarball.exists():
        raise KernelBuildError(f"{src.tarball} not found: install Debian's {src.package} "
                               f"(scripts/setup-host.sh does)")
    dest = CACHE_DIR / "src" / f"{src.package}_{src.version}"
    tree = dest / src.tarball.name.replace(".tar.xz", "")
    stamp = tree / ".boardlab-unpacked"
    if stamp.exists():
        return tree
    progress(f"unpacking {src.label} ({src.tarball}) into {dest} (once)")
    shutil.rmtree(tree, ignore_errors=True)
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-xf", str(src.tarball), "-C", str(dest)], check=True)
    (tree / SOURCE_VERSION).write_text(src.label + "\n")
    stamp.write_text(str(src.tarball.stat().st_mtime))
    return tree


def source_identity(src: Path) -> tuple[str, int]:
    """(what the source is, its date as a Unix time): a git tree by its revision and commit
    date; an unpacked linux-source by its package version and the tarball's date. The date
    is the build's KBUILD_BUILD_TIMESTAMP: the same source, config and compiler print the
    same /proc/version however often they are built."""
    if (src / ".git").exists():
        out = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%H %ct"],
                             capture_output=True, text=True, check=True).stdout.split()
        return f"git {out[0]}", int(out[1])
    version = src / SOURCE_VERSION
    stamp = src / ".boardlab-unpacked"
    when = int(float(stamp.read_text())) if stamp.exists() else int(src.stat().st_mtime)
    return (version.read_text().strip() if version.exists() else src.name), when


def build_timestamp(when: int) -> str:
    """As `date` prints it (the kernel's own default), so the version string keeps its length."""
    return time.strftime("%a %b %e %H:%M:%S UTC %Y", time.gmtime(when))


def _make(src, out, xa: CrossArch, *targets, log, jobs=None, cc=None):
    cmd = ["make", "-C", str(src), f"O={out}", f"ARCH={xa.arch}", f"CROSS_COMPILE={xa.cross}",
           "KBUILD_BUILD_USER=boardlab", "KBUILD_BUILD_HOST=lab"]
    # the version string's date is the source's and its build number always 1: a kernel
    # rebuilt in the same directory prints the same /proc/version
    env = {**os.environ, "KBUILD_BUILD_TIMESTAMP": build_timestamp(source_identity(Path(src))[1]),
           "KBUILD_BUILD_VERSION": "1"}
    if cc:
        cmd.append(f"CC={cc}")
    if jobs:
        cmd.append(f"-j{jobs}")
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd + list(targets))}\n")
        f.flush()
        r = subprocess.run(cmd + list(targets), stdout=f, stderr=subprocess.STDOUT, env=env)
    if r.returncode != 0:
        tail = "\n".join(Path(log).read_text().splitlines()[-15:])
        raise KernelBuildError(f"make {' '.join(targets)} failed ({r.returncode}); log {log}:\n{tail}")


def base_config(fragment: Path) -> str:
    """The config a fragment is merged over: its `# base: NAME` line (a defconfig of the
    tree, e.g. mainline's tqm8xx_defconfig), else allnoconfig."""
    for line in Path(fragment).read_text().splitlines():
        if line.startswith(BASE_DIRECTIVE):
            name = line[len(BASE_DIRECTIVE):].strip()
            if not name.endswith("config") or "/" in name:
                raise KernelBuildError(f"{fragment}: '{line}': name a config target of the "
                                       f"tree, e.g. '# base: tqm8xx_defconfig'")
            return name
    return "allnoconfig"


def describe_config(fragment: Path) -> str:
    """How a kernel was configured, for the report: base + fragment, and the fragment's
    own words (its comment lines)."""
    words = " ".join(ln.lstrip("# ").strip() for ln in Path(fragment).read_text().splitlines()
                     if ln.startswith("#") and not ln.startswith(BASE_DIRECTIVE))
    return f"{base_config(fragment)} + {fragment.parent.name}/{fragment.name}" + (f" ({words})" if words else "")


def _configure(src, out, xa: CrossArch, fragment: Path, log):
    """The fragment's base config (allnoconfig unless it names one) with the fragment
    merged over it; every =y of the fragment must survive olddefconfig (a missing
    dependency is an error, not a silent no)."""
    fragment = Path(fragment).resolve()   # merge_config.sh runs in the build directory
    base = base_config(fragment)
    if base != "allnoconfig" and not _has_defconfig(src, xa, base):
        raise KernelBuildError(f"{fragment}: base {base} is not in {src}/arch/{xa.arch}/configs")
    _make(src, out, xa, base, log=log)
    r = subprocess.run([str(src / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(out),
                        str(out / ".config"), str(fragment)],
                       capture_output=True, text=True, cwd=out,
                       env={**os.environ, "ARCH": xa.arch, "CROSS_COMPILE": xa.cross})
    if r.returncode != 0:
        raise KernelBuildError(f"merging {fragment} failed: {r.stderr or r.stdout}")
    _make(src, out, xa, "olddefconfig", log=log)
    missing = fragmentcheck.unset_options(out / ".config", fragment, Path(src))
    if missing:
        raise KernelBuildError(f"{fragment}: not in the resulting .config (dependencies "
                               f"missing?): {', '.join(missing)}")


def _has_defconfig(src, xa: CrossArch, name: str) -> bool:
    configs = Path(src) / "arch" / xa.arch / "configs"
    return (configs / name).exists() or any(configs.glob(f"*/{name}"))


def _timed_make(src, out, xa: CrossArch, log, jobs, cc=None) -> tuple[float, float, float]:
    """`time make <image>`: (real, user, sys) in s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    _make(src, out, xa, xa.target, log=log, jobs=jobs, cc=cc)
    real = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (round(real, 2), round(after.ru_utime - before.ru_utime, 2),
            round(after.ru_stime - before.ru_stime, 2))


def _uncompressed_bytes(out: Path, xa: CrossArch) -> int:
    """The kernel image before compression: arm's arch/arm/boot/Image; elsewhere the
    binary of vmlinux that the image wraps (objcopy -O binary, as powerpc's wrapper does)."""
    image = out / f"arch/{xa.arch}/boot/Image"
    if not image.exists():
        image = out / "vmlinux.bin"
        subprocess.run([f"{xa.cross}objcopy", "-O", "binary", str(out / "vmlinux"), str(image)],
                       check=True)
    return image.stat().st_size


def _result(board: Board, src, out, uimage: Path, times, log, flavour: str = "") -> BuildResult:
    """Wrap the image with mkimage (unless make did) and read its sizes."""
    xa = ARCH[board.arch]
    release = subprocess.run(["make", "-s", "-C", str(src), f"O={out}", f"ARCH={xa.arch}",
                              f"CROSS_COMPILE={xa.cross}", "kernelrelease"],
                             capture_output=True, text=True, check=True).stdout.strip()
    uimage.parent.mkdir(parents=True, exist_ok=True)
    made = out / f"arch/{xa.arch}/boot/{xa.target}"
    if xa.target_is_uimage:
        shutil.copyfile(made, uimage)
    else:
        mkimage("kernel", made, uimage, board, f"Linux-{release}")
    listing = subprocess.run(["mkimage", "-l", str(uimage)], capture_output=True, text=True,
                             check=True).stdout
    size = subprocess.run([f"{xa.cross}size", str(out / "vmlinux")], capture_output=True, text=True,
                          check=True).stdout
    compiler = subprocess.run([f"{xa.cross}gcc", "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    built_in = "CONFIG_ROOT_NFS=y" in (out / ".config").read_text().splitlines()
    label = source_identity(Path(src))[0]
    if flavour and label.startswith("linux-source-"):   # one series per kernel series: virt-nfs-6.1, virt-nfs-6.12
        flavour = f"{flavour}-{label.split()[0].removeprefix('linux-source-')}"
    kernelid.write_sidecar(uimage, {"release": release, "source_version": label,
                                    "config_sha256": kernelid.sha256(out / ".config"),
                                    "compiler": compiler, "flavour": flavour},
                           nfs_root="built-in" if built_in else "loader")
    return BuildResult(uimage, release, *times, parse_mkimage_list(listing)["data_size"],
                       parse_size(size), _uncompressed_bytes(out, xa), log)


def _arch(board: Board) -> CrossArch:
    if board.arch not in ARCH:
        raise KernelBuildError(f"board {board.name}: no cross compiler set up for arch "
                               f"{board.arch} (kbuild.ARCH has {', '.join(ARCH)})")
    xa = ARCH[board.arch]
    if shutil.which(f"{xa.cross}gcc") is None:
        raise KernelBuildError(f"board {board.name}: {xa.cross}gcc not found "
                               f"(scripts/setup-host.sh installs it)")
    return xa


def build(board: Board, kernel: str, fragment: Path, jobs: int | None = None) -> BuildResult:
    """The study's build: Debian's source, from clean, timed."""
    xa = _arch(board)
    if not fragment.exists():
        raise KernelBuildError(f"no config for board {board.name}, kernel {kernel}: {fragment}")
    src = source_tree(sources.of_kernel(kernel))   # its pin's linux-source, or the installed one
    out = CACHE_DIR / "kbuild" / f"{board.name}-{kernel}"
    shutil.rmtree(out, ignore_errors=True)   # from clean, as the study built
    out.mkdir(parents=True)
    log = out / "build.log"
    jobs = jobs or os.cpu_count()
    _configure(src, out, xa, fragment, log)
    progress(f"building {kernel} for {board.name} ({base_config(fragment)} + {fragment.name}) "
             f"with -j{jobs} (log {log})")
    times = _timed_make(src, out, xa, log, jobs)
    name = board.images.kernels[kernel].uimage if kernel in board.images.kernels else f"{kernel}.uImage"
    result = _result(board, src, out, Path(board.images.dir) / name, times, log, flavour=kernel)
    progress(f"built {result.uimage.name} ({result.release}) in {times[0]:.1f} s")
    return result


def build_tree(board: Board, tree: Path, out: Path, fragment: Path, uimage: Path,
               jobs: int | None = None, ccache: bool = True, flavour: str = "") -> BuildResult:
    """A kernel tree of one's own (a git checkout at some revision), built incrementally
    in `out` through ccache: the first build configures (base config + fragment), later
    ones run olddefconfig (the revision's Kconfig may differ) and rebuild only what
    changed; ccache serves a file seen before at another revision (ccache=False: one
    tree built again and again, where a cold cache only costs). Times are this build's,
    not a clean build's."""
    xa = _arch(board)
    if not fragment.exists():
        raise KernelBuildError(f"kernel config fragment {fragment} not found")
    if ccache and shutil.which("ccache") is None:
        raise KernelBuildError("ccache is not installed (scripts/setup-host.sh installs it)")
    out.mkdir(parents=True, exist_ok=True)
    log = out / "build.log"
    log.write_text("")
    stamp = out / ".boardlab-fragment"
    if not (out / ".config").exists() or not stamp.exists() or stamp.read_text() != fragment.read_text():
        _configure(tree, out, xa, fragment, log)
        stamp.write_text(fragment.read_text())
    else:
        _make(tree, out, xa, "olddefconfig", log=log)
    if ccache:
        os.environ.setdefault("CCACHE_DIR", str(CACHE_DIR / "ccache"))
    times = _timed_make(tree, out, xa, log, jobs or os.cpu_count(),
                        cc=f"ccache {xa.cross}gcc" if ccache else None)
    return _result(board, tree, out, uimage, times, log, flavour)
