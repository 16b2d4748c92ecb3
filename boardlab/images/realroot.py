"""`boardlab images root --board B`: the NFS root a real board (no `qemu` section: the
Sandpoint, the TQM860L) needs to run the suites under the kernels the lab builds for it
(6.1 and later; the study's 2.4/2.6 kernels keep the board's own root of their era, as the
study had): busybox cross-built from Debian's source, mem_eat, the project's measurement
programs for its CPU, the scripts the suites run, as a directory and a tarball to unpack
into the board's NFS export. Its size is printed against the board's RAM (the suites size
their working sets from the RAM in the facts: workloads.small_board).

A CPU without an FPU whose kernel has no FPU emulation (the TQM860L's MPC860T under
tqm8xx_defconfig) cannot run Debian's busybox or anything linked against Debian's C
library (both hold floating-point instructions: setjmp saves the FP registers), and
Debian has no soft-float 32-bit PowerPC C library: its busybox and mem_eat are built
against a soft-float musl built here (softfloat.py), and every binary of its root is
scanned: one FP instruction refuses the root, naming the file."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from boardlab.errors import Bug, InputError
from boardlab.facts.board import Board
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.log import progress
from boardlab.images import images, ownprograms
from boardlab.images import softfloat
from boardlab.images.crossbuild import CROSS_TARGETS, CrossTarget, build_userland
from boardlab.measure.target_load import TESTDEFS


ON_BOARD_TESTDEFS = "usr/lib/boardlab/testdefs"


class NoRootForBoard(InputError):
    """The board's CPU cannot run a root built from Debian's packages."""
    __str__ = Exception.__str__


class FpInRoot(Bug, RuntimeError):
    """A binary of a root for a CPU without FPU holds a floating-point instruction: the
    recipe's fault, not the board's."""


def refuse_why(board: Board) -> str | None:
    """Why no root can be built for the board here, or None."""
    if board.virtual:
        return f"board {board.name} is a virtual board: `boardlab vlab build --board {board.name}` makes its root"
    if board.arch not in CROSS_TARGETS:
        return (f"board {board.name}: arch {board.arch!r} has no cross-built user land here (known: "
                f"{', '.join(CROSS_TARGETS)})")
    ownprograms.cpu(board.isa, board.name)    # a CPU the programs know, or one line
    return None


def build_root(board: Board, out: Path) -> tuple[Path, Path, int]:
    """The root as out/root-<board>/ and out/root-<board>.tar.gz -> (dir, tarball, bytes)."""
    why = refuse_why(board)
    if why:
        raise NoRootForBoard(why)
    target = cross_target(board)
    files, manifest = build_userland(board.arch, images.CROSS_PACKAGES, CACHE_DIR / "cross", target)
    root = Path(out) / f"root-{board.name}"
    shutil.rmtree(root, ignore_errors=True)
    for d in images.ROOT_DIRS:
        (root / d).mkdir(parents=True, exist_ok=True)
    images.cross_userland(board, root, files, manifest, target.compiler)
    if not ownprograms.cpu(board.isa).fpu:
        found = fp_binaries(root, board.isa)
        if found:
            raise FpInRoot(f"board {board.name}: root {root}: {found[0]}"
                           + (f" (and {len(found) - 1} more files)" if len(found) > 1 else "")
                           + ": its kernel has no FPU emulation")
    # the board-side scripts the suites write over the console, and LAVA's test definitions, in place
    shutil.copytree(TESTDEFS, root / ON_BOARD_TESTDEFS, dirs_exist_ok=True)
    for name, major, minor in images.DEVICES:
        os.mknod(root / "dev" / name, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    size = tree_bytes(root)
    tarball = root.with_name(root.name + ".tar.gz")
    subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-czf", str(tarball), "."], check=True)
    progress(f"root for {board.name}: {root} ({size / 1024:.0f} KiB of files), {tarball}")
    return root, tarball, size


def cross_target(board: Board) -> CrossTarget:
    """Debian's cross compiler, or for a CPU without FPU one against a soft-float musl."""
    ct, c = CROSS_TARGETS[board.arch], ownprograms.cpu(board.isa, board.name)
    if c.fpu:
        return ct
    sysroot = softfloat.sysroot(ct.cross, c.flags, CACHE_DIR / "cross")
    return CrossTarget(ct.cross, ct.gnu_type, cc=str(sysroot / "cc"), name=f"{board.arch}-{board.isa}",
                       busybox_off=softfloat.BUSYBOX_OFF)


def fp_binaries(root: Path, isa: str) -> list[str]:
    """Each ELF file of the root that holds a floating-point instruction, with the first."""
    found = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF":
            fp = ownprograms.fpu_instructions(p, isa)
            if fp:
                found.append(f"{p.relative_to(root)} holds {len(fp)} floating-point instructions ({fp[0]})")
    return found


def tree_bytes(root: Path) -> int:
    """The bytes of the regular files in a tree (links and nodes count nothing)."""
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def size_words(board: Board, size: int, what: str = "root", of: str = "of files") -> str:
    ram = board.ram_mb * 1024 * 1024
    return (f"{board.name}: {what} {size / 1024 / 1024:.2f} MiB {of}, {100 * size / ram:.1f} % of its "
            f"{board.ram_mb} MB of RAM (on an NFS root: read into the page cache as used, not loaded whole)")
