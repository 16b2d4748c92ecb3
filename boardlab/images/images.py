"""Build a virtual board's images from Debian packages: a uImage per kernel, one
busybox root file system as a U-Boot ramdisk and as an NFS root tree (with mem_eat and
the measurement families' programs: each family's record says which, `image`). Cached:
rebuilt only when an input changes (package versions, target/ sources, the families'
images, this builder: images.py, debs.py, rootfs.py)."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR, mkimage
from boardlab.errors import LabFault
from boardlab.facts.board import NFSROOT_TARBALL, Board, FactsError
from boardlab.facts.kernelpin import load_pin
from boardlab.log import progress
from boardlab.measure import families, kernelid
from boardlab.kernelbuilds.configkernels import build_config_kernels
from boardlab.images import ownprograms
from boardlab.images.crossbuild import CROSS_TARGETS, USERLAND_MANIFEST, build_userland
from boardlab.images.debs import ImageBuildError, download, download_exact, extract, resolve_packages, run
from boardlab.images.rootfs import (TARGET_DIR, copy_with_libs, cpio_newc, install_modules,
                                  overlay, tree_entries)

__all__ = ["ImageBuildError", "build_images", "cpio_newc", "mkimage", "nfsroot_tarball",
           "sync_tree", "tree_entries"]

BUILDER_VERSION = "3"  # bump when the layout of the images changes
BUILDER = [Path(__file__).parent / f for f in ("images.py", "debs.py", "rootfs.py",
                                               "crossbuild.py", "ownprograms.py")] \
    + [Path(__file__).parents[1] / "kernelbuilds" / "buildenv.py"]

# the families' programs from Debian, as their records say: (package, directory in it,
# names, directory in the root)
FAMILY_IMAGES = tuple(entry for f in families.FAMILIES for entry in f.image)
FAMILY_PACKAGES = list(dict.fromkeys(p for f in families.FAMILIES for p in f.packages))
# armhf userland on the board: busybox, the measurement tools, their libraries.
USERLAND_PACKAGES = [
    "busybox-static", *FAMILY_PACKAGES,
    "libc6", "libnuma1", "libtirpc3", "libgssapi-krb5-2", "libkrb5-3", "libk5crypto3",
    "libcom-err2", "libkrb5support0", "libkeyutils1",
]
# from Debian's source packages, for an arch Debian no longer ships (crossbuild.py)
CROSS_PACKAGES = ["busybox", *FAMILY_PACKAGES]
CROSS_CC = "arm-linux-gnueabihf-gcc"
ROOT_DIRS = ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "root",
             "etc/init.d", "mnt", "newroot", "var/tmp",
             *dict.fromkeys(dest for *_, dest in FAMILY_IMAGES if dest not in ("usr/bin", "bin")))
DEVICES = (("console", 5, 1), ("null", 1, 3))   # the nodes a root needs before devtmpfs


def _debian_packages(board: Board):
    kernels = {}
    for name, k in board.images.kernels.items():
        if k.debian_package is None:
            continue  # built elsewhere (e.g. by the build-size suite)
        kernels[name] = k.debian_package
    return kernels


def _digest_tree(h, path: Path):
    for p in sorted(path.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(path)).encode())
            h.update(p.read_bytes())


def inputs_digest(board: Board, debs, userland_manifest=None) -> str:
    h = hashlib.sha256(BUILDER_VERSION.encode())
    h.update(repr(sorted((userland_manifest or {}).items())).encode())
    h.update(repr(FAMILY_IMAGES).encode())
    for module in BUILDER:
        h.update(module.read_bytes())
    for name in sorted(debs):
        h.update(debs[name].name.encode())
    _digest_tree(h, TARGET_DIR)
    # only the facts that go into the images: a kernel built elsewhere (no Debian
    # package) or a changed timeout must not rebuild them
    imgs = board.images
    h.update(repr((board.name, board.isa, board.console.device, board.console.baud,
                   dataclasses.asdict(board.mkimage), imgs.ramdisk, list(imgs.loader_modules),
                   sorted((k, v.uimage) for k, v in imgs.kernels.items()
                          if v.debian_package is not None))).encode())
    return h.hexdigest()


def build_images(board: Board, force=False) -> Path:
    """Build (or find up to date) the board's images; returns the images dir."""
    if not board.virtual:
        raise FactsError(f"{board.path}: board {board.name} is not a virtual board "
                         f"(no 'qemu' section): its images come from its kernel builds")
    out = Path(board.images.dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    cross = board.arch in CROSS_TARGETS   # no Debian binaries for it: built from source
    metas = _debian_packages(board)
    pins = {n: p for n in metas if (p := load_pin(n)) is not None and not p.is_source}
    kernel_pkgs = {**resolve_packages({n: m for n, m in metas.items() if n not in pins}),
                   **{n: p.package for n, p in pins.items()}}   # a pinned kernel: exactly its package
    debs = download([p for n, p in kernel_pkgs.items() if n not in pins] + ([] if cross else USERLAND_PACKAGES),
                    CACHE_DIR / "debs")
    debs.update(download_exact(pins.values(), CACHE_DIR / "debs"))
    build_config_kernels(board, out)
    userland = build_userland(board.arch, CROSS_PACKAGES, CACHE_DIR / "cross") if cross else None
    digest = inputs_digest(board, debs, userland[1] if userland else {})
    stampfile = out / ".inputs"
    expected = [out / k.uimage for k in board.images.kernels.values()
                if k.debian_package is not None] + [out / board.images.ramdisk, out / "nfsroot"]
    if (not force and stampfile.exists() and stampfile.read_text() == digest
            and all(p.exists() for p in expected)):
        progress(f"images for {board.name} are up to date ({out})")
        nfsroot_tarball(out)
        _note_identities(board, kernel_pkgs, debs, out)
        return out

    progress(f"building images for {board.name} into {out}")
    build = CACHE_DIR / "build" / board.name
    shutil.rmtree(build, ignore_errors=True)
    rootfs = build / "rootfs"
    for d in ROOT_DIRS:
        (rootfs / d).mkdir(parents=True, exist_ok=True)
    if cross:
        cross_userland(board, rootfs, *userland)
    else:
        _kernels(board, kernel_pkgs, debs, build, rootfs, out)
        pkg_roots = []
        for name, deb in debs.items():
            if name not in kernel_pkgs.values():
                extract(deb, build / "pkgs" / name)
                pkg_roots.append(build / "pkgs" / name)
        _userland(board, build, rootfs, pkg_roots)
    _roots(board, build, rootfs, out)
    _note_identities(board, kernel_pkgs, debs, out)
    stampfile.write_text(digest)
    progress(f"images for {board.name} built in {time.monotonic() - t0:.1f} s")
    return out


def _note_identities(board: Board, kernel_pkgs, debs, out: Path):
    """Beside each packaged kernel's uImage: the package and version it came from."""
    for name, pkg in kernel_pkgs.items():
        uimage = out / board.images.kernels[name].uimage
        if uimage.exists() and not kernelid.of_image(uimage).get("package_version"):   # noted once per image
            version = run(["dpkg-deb", "-f", str(debs[pkg]), "Version"]).strip()
            kernelid.write_sidecar(uimage, {"release": pkg.removeprefix("linux-image-"), "package": pkg,
                                            "package_version": version})


def _kernels(board: Board, kernel_pkgs, debs, build: Path, rootfs: Path, out: Path):
    """A uImage per kernel package, and the modules the NFS loader needs in rootfs."""
    for name, pkg in kernel_pkgs.items():
        kroot = build / "kernels" / name
        extract(debs[pkg], kroot)
        vmlinuz = next((kroot / "boot").glob("vmlinuz-*"))
        release = vmlinuz.name[len("vmlinuz-"):]
        uimage = out / board.images.kernels[name].uimage
        mkimage("kernel", vmlinuz, uimage, board, f"Linux-{release}")
        progress(f"  {uimage.name}: {release}, {uimage.stat().st_size} bytes")
        if board.images.loader_modules:
            install_modules(kroot, rootfs, list(board.images.loader_modules))


def _userland(board: Board, build: Path, rootfs: Path, pkg_roots):
    """busybox, the families' programs with their libraries, mem_eat, the overlay."""
    shutil.copy2(build / "pkgs/busybox-static/bin/busybox", rootfs / "bin/busybox")
    _busybox_links(rootfs)
    programs = []
    for package, directory, names, dest in FAMILY_IMAGES:
        for p in sorted((build / "pkgs" / package / directory).iterdir()):
            if re.match(names, p.name):
                shutil.copy2(p, rootfs / dest / p.name)
                programs.append(rootfs / dest / p.name)
    copy_with_libs(programs, rootfs, pkg_roots)
    run([CROSS_CC, "-static", "-O2", "-Wall", "-o", str(rootfs / "usr/bin/mem_eat"),
         str(TARGET_DIR / "mem_eat.c")])
    _own_programs(board, rootfs)
    overlay(rootfs, board)


def _own_programs(board: Board, rootfs: Path) -> None:
    """The project's measurement programs, in the root of a board whose families run them
    (its isa's tool set, the family record): a root of Debian's programs stays as it was,
    byte for byte, so its boot and memory figures and their baselines stay comparable (the
    programs in the ramdisk cost qemu-ppc 40 kB of available memory and 13 ms of boot)."""
    if any((f.tools or {}).get(board.isa) == families.OWN and not f.own_onto for f in families.FAMILIES):
        ownprograms.install(board.isa, rootfs, board.name)


def _busybox_links(rootfs: Path):
    for link in ("bin/sh", "sbin/init"):
        os.symlink("/bin/busybox", rootfs / link)


def cross_userland(board: Board, rootfs: Path, files: dict, manifest: dict, cc: str = ""):
    """Programs cross-built from Debian's sources, mem_eat (by `cc`, else Debian's cross
    gcc), the overlay, and the list of what the image has and lacks (the suites read it
    on the board)."""
    for dst, src in files.items():
        (rootfs / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, rootfs / dst)
    _busybox_links(rootfs)
    cc = cc or CROSS_TARGETS[board.arch].compiler
    run([cc, "-static", "-O2", "-Wall", "-o", str(rootfs / "usr/bin/mem_eat"),
         str(TARGET_DIR / "mem_eat.c")])
    _own_programs(board, rootfs)
    overlay(rootfs, board)
    own = ({"blmeasure": f"the project's programs for {board.isa} ({ownprograms.ON_BOARD_DIR})"}
           if (rootfs / ownprograms.ON_BOARD_DIR / ownprograms.BINARY).exists() else {})
    (rootfs / USERLAND_MANIFEST).write_text(
        "# what this image's user land was built from (boardlab/images/crossbuild.py)\n"
        + "".join(f"{pkg}: {what}\n" for pkg, what in {**manifest, **own}.items()))


def _roots(board: Board, build: Path, rootfs: Path, out: Path):
    """The same tree twice: a U-Boot ramdisk (initramfs cpio) and an NFS root."""
    cpio = build / "rootfs.cpio"
    cpio.write_bytes(cpio_newc(tree_entries(rootfs, devices=[(f"dev/{n}", ma, mi)
                                                            for n, ma, mi in DEVICES])))
    ramdisk = out / board.images.ramdisk
    mkimage("ramdisk", cpio, ramdisk, board, f"boardlab rootfs {board.name}")
    progress(f"  {ramdisk.name}: {ramdisk.stat().st_size} bytes")
    nfsroot = out / "nfsroot"
    shutil.rmtree(nfsroot, ignore_errors=True)
    shutil.copytree(rootfs, nfsroot, symlinks=True)
    for name, major, minor in DEVICES:
        os.mknod(nfsroot / "dev" / name, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    nfsroot_tarball(out)


def nfsroot_tarball(out: Path) -> Path:
    """The NFS root as a tarball, for LAVA's nfsrootfs deploy (it extracts and exports
    it itself); made again when the tree is newer."""
    tarball = out / NFSROOT_TARBALL
    tree = out / "nfsroot"
    if not tarball.exists() or tarball.stat().st_mtime < tree.stat().st_mtime:
        fd, name = tempfile.mkstemp(dir=out, prefix=f".{NFSROOT_TARBALL}.")
        os.close(fd)
        tmp = Path(name)
        try:
            run(["tar", "-C", str(tree), "--numeric-owner", "-cJf", str(tmp), "."])
            os.chmod(tmp, 0o644)
            tmp.replace(tarball)
        finally:
            tmp.unlink(missing_ok=True)
        progress(f"  {tarball.name}: {tarball.stat().st_size} bytes")
    return tarball


# written into every tree sync_tree fills: only such a tree is ever emptied again (the
# virtual lab's input stamp marks the trees of before the mark)
SYNC_MARK = ".boardlab-nfsroot"
OUR_MARKS = (SYNC_MARK, ".boardlab-inputs")


class ForeignTreeError(LabFault):
    """An NFS export holds files boardlab did not put there."""
    part = "nfs"


def sync_tree(src: Path, dst: Path):
    """Make dst hold exactly src, emptying dst in place: an NFS server keeps the
    export's inode, so recreating the directory would give 'Stale file handle'. A
    non-empty dst without boardlab's mark is someone else's: refused, nothing deleted
    (this runs as root)."""
    dst.mkdir(parents=True, exist_ok=True)
    if any(dst.iterdir()) and not any((dst / m).exists() for m in OUR_MARKS):
        raise ForeignTreeError(f"{dst} is not empty and was not made by boardlab (no {SYNC_MARK}): "
                               f"refusing to empty it. Move its contents away, or point the "
                               f"board's nfs.export at a directory of its own")
    for child in dst.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    # cp -a keeps device nodes, links and modes as they are
    run(["cp", "-a", f"{src}/.", f"{dst}/"])
    (dst / SYNC_MARK).write_text("made by boardlab (boardlab/images/images.py sync_tree): "
                                 "emptied and refilled on every virtual lab start\n")
