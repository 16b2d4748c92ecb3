"""The root file system of a virtual board, as pure steps where possible: kernel
modules in insmod order, the libraries a program needs, a newc cpio archive without
root, the boardlab overlay of target/rootfs."""
from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from boardlab.facts.board import PROJECT_ROOT, Board
from boardlab.images.debs import ImageBuildError, run

TARGET_DIR = PROJECT_ROOT / "target"
LIB_DIRS = ["lib/arm-linux-gnueabihf", "usr/lib/arm-linux-gnueabihf", "lib", "usr/lib"]
READELF = "arm-linux-gnueabihf-readelf"


def module_depends(ko_bytes: bytes) -> list[str]:
    """The 'depends=' entry of a kernel module's .modinfo section."""
    m = re.search(rb"(?:^|\0)depends=([^\0]*)\0", ko_bytes)
    if not m or not m.group(1):
        return []
    return [d.decode() for d in m.group(1).split(b",") if d]


def module_load_order(wanted, depends_of) -> list[str]:
    """Modules in an order insmod accepts: each after everything it depends on.
    depends_of(name) -> list of names; raises KeyError for an unknown module."""
    order, seen = [], set()

    def visit(name, chain):
        if name in seen:
            return
        if name in chain:
            raise ImageBuildError(f"module dependency cycle: {' -> '.join(chain + [name])}")
        for dep in depends_of(name):
            visit(dep, chain + [name])
        seen.add(name)
        order.append(name)

    for name in wanted:
        visit(name, [])
    return order


def cpio_newc(entries) -> bytes:
    """A newc cpio archive (what the kernel unpacks as initramfs) from entries
    (name, mode, data_or_target, rdev) without needing root or fakeroot:
    owner is root, mtime 0, so the archive is reproducible."""
    out = bytearray()

    def pad4(n):
        return (4 - n % 4) % 4

    def header(ino, name, mode, size, rdev=(0, 0)):
        fields = [ino, mode, 0, 0, 1, 0, size, 0, 0, rdev[0], rdev[1], len(name) + 1, 0]
        h = b"070701" + b"".join(b"%08X" % f for f in fields)
        out.extend(h + name + b"\0")
        out.extend(b"\0" * pad4(len(h) + len(name) + 1))

    for ino, (name, mode, data, rdev) in enumerate(entries, start=1):
        name_b = name.encode()
        header(ino, name_b, mode, len(data), rdev or (0, 0))
        out.extend(data)
        out.extend(b"\0" * pad4(len(data)))
    header(0, b"TRAILER!!!", 0, 0)
    return bytes(out)


def tree_entries(root: Path, devices=()):
    """cpio entries for a directory tree plus extra device nodes (name, major, minor)."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        if rel != ".":
            entries.append((rel, 0o40755, b"", None))
        for fn in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            p = os.path.join(dirpath, fn)
            name = os.path.normpath(os.path.join(rel, fn))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                entries.append((name, 0o120777, os.readlink(p).encode(), None))
            elif stat.S_ISREG(st.st_mode):
                entries.append((name, stat.S_IFREG | (st.st_mode & 0o7777), Path(p).read_bytes(), None))
    for name, major, minor in devices:
        entries.append((name, stat.S_IFCHR | 0o600, b"", (major, minor)))
    return entries


def _find_lib(soname, roots):
    for root in roots:
        for d in LIB_DIRS:
            p = root / d / soname
            if p.exists():
                return p
    return None


def _needed(binary: Path):
    out = run([READELF, "-d", str(binary)])
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def copy_with_libs(binaries, rootfs: Path, pkg_roots):
    queue = list(binaries)
    done = set()
    while queue:
        b = queue.pop()
        for soname in _needed(b):
            if soname in done:
                continue
            done.add(soname)
            src = _find_lib(soname, pkg_roots)
            if src is None:
                raise ImageBuildError(f"{b.name} needs {soname}, which no downloaded package "
                                      f"provides (add its package to USERLAND_PACKAGES)")
            real = src.resolve()
            dst = rootfs / "lib/arm-linux-gnueabihf" / soname
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(real, dst)
            queue.append(real)
    # the program interpreter, where the binaries look for it
    ld = _find_lib("ld-linux-armhf.so.3", pkg_roots)
    (rootfs / "lib").mkdir(exist_ok=True)
    shutil.copy2(ld.resolve(), rootfs / "lib/ld-linux-armhf.so.3")


def install_modules(kroot: Path, rootfs: Path, wanted):
    """Copy the modules (and what they depend on) for each kernel in kroot, with a
    boardlab.load file listing them in insmod order."""
    for moddir in sorted((kroot / "lib/modules").iterdir()):
        by_name = {}
        for ko in moddir.rglob("*.ko"):
            by_name[ko.stem.replace("-", "_")] = ko

        def depends_of(name):
            key = name.replace("-", "_")
            if key not in by_name:
                raise ImageBuildError(f"module {name} not found for kernel {moddir.name}")
            return module_depends(by_name[key].read_bytes())

        order = module_load_order(wanted, depends_of)
        dest = rootfs / "lib/modules" / moddir.name
        dest.mkdir(parents=True, exist_ok=True)
        for name in order:
            shutil.copy2(by_name[name.replace("-", "_")], dest / f"{name}.ko")
        (dest / "boardlab.load").write_text("".join(f"{n}.ko\n" for n in order))


def overlay(rootfs: Path, board: Board):
    subst = {"@CONSOLE@": board.console.device, "@BAUD@": str(board.console.baud)}
    src_root = TARGET_DIR / "rootfs"
    for src in src_root.rglob("*"):
        dst = rootfs / src.relative_to(src_root)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
            continue
        text = src.read_text()
        for k, v in subst.items():
            text = text.replace(k, v)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text)
        dst.chmod(src.stat().st_mode & 0o777)
    (rootfs / "etc/hostname").write_text(board.name + "\n")
