"""The project's own measurement programs (target/measure/): the study's latencies and bandwidths, a
cyclictest-manner jitter program and hackbench, by their tools' methods
(target/measure/METHODS.md), for a board whose root cannot carry Debian's (32-bit
PowerPC: Debian ships none, and its archive does not serve their sources here).

One static binary, `blmeasure`, without a C library (target/measure/rt.h says why: an
MPC8xx kernel without FPU emulation), built per CPU with Debian's cross compilers and
cached by the digest of its sources, flags and compiler. On a board it sits in
ON_BOARD_DIR with a link per program, named as the tool it stands in for, so the suites'
board-side scripts run either set by PATH alone."""
from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from boardlab.errors import Bug, InputError
from boardlab.files import locked
from boardlab.images.rootfs import TARGET_DIR
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.log import progress

SOURCES = TARGET_DIR / "measure"
C_FILES = ("rt.c", "lmb.c", "jitter.c", "hackbench.c")
BINARY = "blmeasure"
ON_BOARD_DIR = "usr/lib/boardlab/bin"     # in the board's root; the suites put it first in PATH
# the programs blmeasure is (its applets, target/measure/lmb.c), named as the tools they stand in for
PROGRAMS = ("lat_syscall", "lat_proc", "lat_pipe", "lat_unix", "lat_udp", "lat_tcp", "lat_connect",
            "lat_select", "lat_pagefault", "lat_mmap", "lat_fs", "lat_ctx", "bw_pipe", "bw_unix",
            "bw_tcp", "bw_file_rd", "bw_mem", "cyclictest", "hackbench")
COMMON_FLAGS = ("-static", "-nostdlib", "-ffreestanding", "-fno-builtin", "-fno-tree-loop-distribute-patterns",
                "-fno-stack-protector", "-fno-pie", "-no-pie", "-fno-asynchronous-unwind-tables",
                "-O2", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class Cpu:
    """A CPU the programs are built for: a board's facts name it (`isa`)."""
    isa: str
    what: str
    cc: str
    flags: tuple
    libs: tuple = ()
    fpu: bool = True            # False: not one floating-point instruction may be in the binary
    qemu_user: tuple = ()       # QEMU's user mode for this CPU (the tests run the binaries)

    @property
    def objdump(self) -> str:
        return self.cc.removesuffix("gcc") + "objdump"


CPUS = {c.isa: c for c in (
    Cpu("armhf", "ARMv7-A, VFPv3-D16 (Debian armhf)", "arm-linux-gnueabihf-gcc",
        ("-marm", "-march=armv7-a", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"), ("-lgcc",),
        qemu_user=("qemu-arm", "-cpu", "cortex-a15")),
    Cpu("e500mc", "PowerPC e500mc (QEMU ppce500)", "powerpc-linux-gnu-gcc", ("-mcpu=e500mc",),
        qemu_user=("qemu-ppc", "-cpu", "e500mc")),
    Cpu("603e", "PowerPC 603e core (MPC8240, the Sandpoint)", "powerpc-linux-gnu-gcc", ("-mcpu=603e",),
        qemu_user=("qemu-ppc", "-cpu", "603e")),
    Cpu("mpc8xx", "PowerPC MPC8xx (MPC860T, the TQM860L): no FPU", "powerpc-linux-gnu-gcc",
        ("-mcpu=860", "-msoft-float"), fpu=False, qemu_user=("qemu-ppc", "-cpu", "mpc860")),
)}


class UnknownCpu(InputError, ValueError):
    """A board's facts name a CPU the programs are not built for."""
    __str__ = Exception.__str__


class ProgramBuildError(Bug, RuntimeError):
    """The programs did not build: our sources or recipe."""


def cpu(isa: str, board: str | None = None) -> Cpu:
    try:
        return CPUS[isa]
    except KeyError:
        where = f"board {board}: " if board else ""
        raise UnknownCpu(f"{where}isa {isa!r}: the project's programs build for "
                         f"{', '.join(CPUS)} (boardlab/images/ownprograms.py)") from None


def _compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as e:
        raise ProgramBuildError(f"{cc}: the cross compiler is not here ({e}); scripts/setup-host.sh installs it") from None


def digest(c: Cpu) -> str:
    """What the binary is made of: every source, the flags, the compiler."""
    h = hashlib.sha256()
    for f in sorted(SOURCES.glob("*.[ch]")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    h.update(repr((c.cc, c.flags, c.libs, COMMON_FLAGS, _compiler_version(c.cc))).encode())
    return h.hexdigest()[:16]


def build(isa: str, cache: Path | None = None, board: str | None = None) -> Path:
    """The binary for `isa`, built once per digest -> its path."""
    c = cpu(isa, board)
    out = (cache or CACHE_DIR / "programs") / f"{isa}-{digest(c)}"
    binary = out / BINARY
    if binary.exists():
        return binary
    with locked(out):   # one build at a time: the second finds it, none removes another's
        return binary if binary.exists() else _build(isa, c, out)


def _build(isa: str, c, out: Path) -> Path:
    progress(f"  building the project's measurement programs for {isa} ({c.cc} {' '.join(c.flags)})")
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    r = subprocess.run([c.cc, *c.flags, *COMMON_FLAGS, "-o", str(tmp / BINARY),
                        *(str(SOURCES / f) for f in C_FILES), *c.libs], capture_output=True, text=True)
    if r.returncode != 0:
        first = next((ln for ln in r.stderr.splitlines() if "error" in ln), r.stderr.strip()[:200])
        shutil.rmtree(tmp, ignore_errors=True)
        raise ProgramBuildError(f"{BINARY} for {isa} did not build: {first}")
    if not c.fpu:
        found = fpu_instructions(tmp / BINARY, isa)
        if found:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ProgramBuildError(f"{BINARY} for {isa} holds floating-point instructions "
                                    f"({', '.join(found[:3])}): its kernel would kill it")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out / BINARY


# PowerPC's floating-point instructions: the f* arithmetic, loads and stores of FPRs, the
# FPSCR moves. (ARM's VFP ones start with v; no ARM CPU here lacks VFP.)
_PPC_FP = re.compile(r"^(f[a-z]+\.?|lf[sd]u?x?|stf[sd]u?x?|stfiwx|mffs\.?|mtfs[a-z0-9]*\.?|mcrfs)$")
_ARM_FP = re.compile(r"^(v[a-z]+[0-9.a-z]*|fmrx|fmxr|fldm\w*|fstm\w*)$")


def fpu_instructions(binary: Path, isa: str) -> list[str]:
    """The floating-point instructions in `binary`'s code, as its disassembly names them
    (address and mnemonic), none for a clean one."""
    c = cpu(isa)
    text = subprocess.run([c.objdump, "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    fp = _PPC_FP if c.cc.startswith("powerpc") else _ARM_FP
    found = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[2].split():
            mnemonic = parts[2].split()[0]
            if fp.match(mnemonic):
                found.append(f"{parts[0].strip().rstrip(':')} {mnemonic}")
    return found


def install(isa: str, root: Path, board: str | None = None) -> list[str]:
    """The programs into a root file system (ON_BOARD_DIR: the binary and a link per
    program) -> the programs' names."""
    binary = build(isa, board=board)
    dest = root / ON_BOARD_DIR
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, dest / BINARY)
    for name in PROGRAMS:
        link = dest / name
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(BINARY, link)
    return list(PROGRAMS)   # their methods are in the tarball and the tree, not in a 16 MB board's root


CONSOLE_CHUNK = 700   # base64 characters a console line (target_load.LINE_MAX with room for the command)


def onto_running_board(sh, isa: str) -> None:
    """The programs into a running board's ON_BOARD_DIR over its console (base64, which
    busybox decodes), for a board whose image carries Debian's set: the side-by-side
    bench, compare --tools own. Its image stays as its baselines know it; nothing is
    written when these programs are there already: their source digest, written beside
    them, is this build's (an NFS root keeps an earlier build's across boots)."""
    import base64
    binary = build(isa)
    stamp = f"/{ON_BOARD_DIR}/.{BINARY}.digest"
    made_of = binary.parent.name   # <isa>-<digest>: what it was built from
    if sh.run(f"test -x /{ON_BOARD_DIR}/{BINARY} && cat {stamp}")[0] == [made_of]:
        return
    progress(f"the project's programs for {isa} onto the board over its console "
             f"({len(base64.b64encode(binary.read_bytes())) // 1024} KiB base64)")
    over_console(sh, binary.read_bytes(), f"/{ON_BOARD_DIR}/{BINARY}")
    sh.run_check(f"cd /{ON_BOARD_DIR} && for p in {' '.join(PROGRAMS)}; do ln -sf {BINARY} $p; done; cd / "
                 f"&& echo {made_of} > {stamp}")


def over_console(sh, blob: bytes, dest: str) -> None:
    """blob written to dest (mode 755) on a running board through its shell: base64 in
    console-sized lines, which busybox decodes; gzip'd first where the board has gunzip
    (the boards' busybox does): half the lines, and a line is most of the time (a 30 kB
    program took 12 s over qemu-arm's console, host clock)."""
    import base64
    import gzip
    gz = sh.run("command -v gunzip")[2] == 0
    data = base64.b64encode(gzip.compress(blob, 9, mtime=0) if gz else blob).decode()
    sh.run_check(f"rm -f {dest}.b64 && mkdir -p {os.path.dirname(dest)}")
    for i in range(0, len(data), CONSOLE_CHUNK):
        sh.run_check(f"printf '%s' '{data[i:i + CONSOLE_CHUNK]}' >> {dest}.b64")
    sh.run_check(f"base64 -d {dest}.b64 {'| gunzip ' if gz else ''}> {dest} && chmod 755 {dest} && rm {dest}.b64")


def tarball(isa: str, out_dir: Path) -> Path:
    """The programs for someone's own board: blmeasure-<isa>.tar.gz, unpacked at / it puts
    them where the suites' scripts look (ON_BOARD_DIR), with their methods."""
    c = cpu(isa)
    binary = build(isa)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"blmeasure-{isa}.tar.gz"
    tmp = path.with_name(path.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        def add(name, data: bytes, mode=0o644, link=None):
            info = tarfile.TarInfo(f"{ON_BOARD_DIR}/{name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
                return
            info.mode, info.size = mode, len(data)
            tar.addfile(info, io.BytesIO(data))
        add(BINARY, binary.read_bytes(), 0o755)
        for name in PROGRAMS:
            add(name, b"", link=BINARY)
        add("METHODS.md", (SOURCES / "METHODS.md").read_bytes())
        add("BUILT-FOR", f"{c.isa}: {c.what}\n{c.cc} {' '.join(c.flags)}\n".encode())
    tmp.rename(path)
    return path
