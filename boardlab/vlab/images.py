"""Build a virtual board's images from Debian packages: a uImage per kernel, one
busybox root file system as a U-Boot ramdisk and as an NFS root tree (with mem_eat,
rt-tests and lmbench). Cached: rebuilt only when an input changes (package versions,
target/ sources, this builder)."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

from ..facts import NFSROOT_TARBALL, PROJECT_ROOT, FactsError
from ..log import progress
from ..errors import BoardlabError

CACHE_DIR = Path(os.environ.get("BOARDLAB_CACHE", "/var/cache/boardlab"))
TARGET_DIR = PROJECT_ROOT / "target"
BUILDER_VERSION = "3"  # bump when the layout of the images changes

# armhf userland on the board: busybox, the measurement tools, their libraries.
USERLAND_PACKAGES = [
    "busybox-static", "rt-tests", "lmbench",
    "libc6", "libnuma1", "libtirpc3", "libgssapi-krb5-2", "libkrb5-3", "libk5crypto3",
    "libcom-err2", "libkrb5support0", "libkeyutils1",
]
TOOLS = ["usr/bin/cyclictest", "usr/bin/hackbench"]
LMBENCH_BIN = "usr/lib/lmbench/bin/armv7l-linux-gnu"
LMBENCH_TOOLS = re.compile(r"^(lat_\w+|bw_\w+|lmdd|enough|mhz|line|tlb|cache|stream|par_\w+|memsize|msleep|hello)$")
LIB_DIRS = ["lib/arm-linux-gnueabihf", "usr/lib/arm-linux-gnueabihf", "lib", "usr/lib"]
READELF = "arm-linux-gnueabihf-readelf"
CROSS_CC = "arm-linux-gnueabihf-gcc"


class ImageBuildError(BoardlabError):
    pass


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout
    except FileNotFoundError:
        raise ImageBuildError(f"{cmd[0]}: not installed (run scripts/setup-host.sh)") from None
    except subprocess.CalledProcessError as e:
        raise ImageBuildError(f"{' '.join(map(str, cmd))} failed ({e.returncode}):\n"
                              f"{(e.stderr or e.stdout).strip()}") from None


# ---- pure helpers -------------------------------------------------------------------

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


# ---- the build ----------------------------------------------------------------------

def _debian_packages(board):
    kernels = {}
    for name, k in board["images"]["kernels"].items():
        if "debian_package" not in k:
            continue  # built elsewhere (e.g. by the build-size suite)
        kernels[name] = k["debian_package"]
    return kernels


def resolve_packages(metas: dict) -> dict:
    """Metapackages (linux-image-armmp) to the packages they stand for today,
    in one apt-cache call: {kernel name: package}."""
    if not metas:
        return {}
    out = run(["apt-cache", "depends"] + [f"{p}:armhf" for p in metas.values()])
    resolved, current = {}, None
    for line in out.splitlines():
        if not line.startswith(" "):
            current = line.strip().split(":")[0]
        elif current and current not in resolved and "Depends:" in line and "linux-image-" in line:
            resolved[current] = line.split()[1].split(":")[0]
    missing = [m for m in metas.values() if m not in resolved]
    if missing:
        raise ImageBuildError(f"cannot resolve {', '.join(missing)} (armhf) with apt-cache: did "
                              f"setup run 'dpkg --add-architecture armhf' and 'apt-get update'?")
    return {name: resolved[meta] for name, meta in metas.items()}


def parse_policy(text: str) -> dict:
    """'apt-cache policy a b ...' output -> {package: candidate version or None}."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\S+?)(?::armhf)?:$", line)
        if m:
            name = m.group(1)
            continue
        m = re.match(r"^\s+Candidate:\s*(\S+)", line)
        if m and name:
            out[name] = None if m.group(1) == "(none)" else m.group(1)
    return out


def candidate_versions(pkgs) -> dict:
    """One apt-cache call for all packages (each call costs about a second)."""
    found = parse_policy(run(["apt-cache", "policy"] + [f"{p}:armhf" for p in pkgs]))
    versions = {}
    for pkg in pkgs:
        if not found.get(pkg):
            raise ImageBuildError(f"package {pkg}:armhf is not available from apt (setup adds "
                                  f"'contrib non-free' and armhf; run apt-get update)")
        versions[pkg] = found[pkg].split(":")[-1]  # without the epoch, as in file names
    return versions


def download(pkgs, debs_dir: Path) -> dict[str, Path]:
    """apt-get download each armhf package (once); returns name -> .deb path."""
    debs_dir.mkdir(parents=True, exist_ok=True)
    have = {}
    wanted_versions = candidate_versions(pkgs)
    missing = []
    for pkg in pkgs:
        found = [p for p in debs_dir.glob(f"{pkg}_*_armhf.deb")
                 if p.name.split("_")[1].split("%3a")[-1] == wanted_versions[pkg]]
        if found:
            have[pkg] = found[0]
        else:
            missing.append(pkg)
    if missing:
        progress(f"downloading {len(missing)} armhf packages: {' '.join(missing)}")
        run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root"]
            + [f"{p}:armhf" for p in missing], cwd=debs_dir)
        for pkg in missing:
            found = sorted(debs_dir.glob(f"{pkg}_*_armhf.deb"), key=os.path.getmtime)
            if not found:
                raise ImageBuildError(f"apt-get download {pkg}:armhf produced no .deb")
            have[pkg] = found[-1]
    return have


def _digest_tree(h, path: Path):
    for p in sorted(path.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(path)).encode())
            h.update(p.read_bytes())


def inputs_digest(board, debs) -> str:
    h = hashlib.sha256(BUILDER_VERSION.encode())
    h.update(Path(__file__).read_bytes())
    for name in sorted(debs):
        h.update(debs[name].name.encode())
    _digest_tree(h, TARGET_DIR)
    # only the facts that go into the images: a kernel built elsewhere (no Debian
    # package) or a changed timeout must not rebuild them
    imgs = board["images"]
    h.update(repr((board["name"], board["console"]["device"], board["console"]["baud"],
                   board["mkimage"], imgs["ramdisk"], imgs.get("loader_modules"),
                   sorted((k, v["uimage"]) for k, v in imgs["kernels"].items()
                          if "debian_package" in v))).encode())
    return h.hexdigest()


def _extract(deb: Path, dest: Path):
    dest.mkdir(parents=True, exist_ok=True)
    run(["dpkg-deb", "-x", str(deb), str(dest)])


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


def _copy_with_libs(binaries, rootfs: Path, pkg_roots):
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


def _install_modules(kroot: Path, rootfs: Path, wanted):
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


def _overlay(rootfs: Path, board):
    subst = {"@CONSOLE@": board["console"]["device"], "@BAUD@": str(board["console"]["baud"])}
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
    (rootfs / "etc/hostname").write_text(board["name"] + "\n")


def mkimage(kind, src: Path, dst: Path, board, name):
    m = board["mkimage"]
    cmd = ["mkimage", "-A", m["arch"], "-O", "linux", "-T", kind, "-C", "none", "-n", name]
    if kind == "kernel":
        cmd += ["-a", m["load_addr"], "-e", m["entry"]]
    run(cmd + ["-d", str(src), str(dst)])


def build_images(board, force=False) -> Path:
    """Build (or find up to date) the board's images; returns the images dir."""
    if not board.get("qemu"):
        raise FactsError(f"{board['_path']}: board {board['name']} is not a virtual board "
                         f"(no 'qemu' section): its images come from its kernel builds")
    out = Path(board["images"]["dir"])
    build = CACHE_DIR / "build" / board["name"]
    t0 = time.monotonic()
    kernel_pkgs = resolve_packages(_debian_packages(board))
    debs = download(list(kernel_pkgs.values()) + USERLAND_PACKAGES, CACHE_DIR / "debs")
    digest = inputs_digest(board, debs)
    stampfile = out / ".inputs"
    expected = [out / k["uimage"] for k in board["images"]["kernels"].values()
                if "debian_package" in k] + [out / board["images"]["ramdisk"], out / "nfsroot"]
    if (not force and stampfile.exists() and stampfile.read_text() == digest
            and all(p.exists() for p in expected)):
        progress(f"images for {board['name']} are up to date ({out})")
        nfsroot_tarball(out)
        return out

    progress(f"building images for {board['name']} into {out}")
    shutil.rmtree(build, ignore_errors=True)
    pkg_roots = []
    for name, deb in debs.items():
        if name in kernel_pkgs.values():
            continue
        _extract(deb, build / "pkgs" / name)
        pkg_roots.append(build / "pkgs" / name)
    out.mkdir(parents=True, exist_ok=True)
    rootfs = build / "rootfs"
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "run", "root",
              "etc/init.d", "mnt", "newroot", "var/tmp", "usr/lib/lmbench/bin"):
        (rootfs / d).mkdir(parents=True, exist_ok=True)

    # kernels: uImage + the modules the NFS loader needs
    loader_modules = board["images"].get("loader_modules", [])
    for name, pkg in kernel_pkgs.items():
        kroot = build / "kernels" / name
        _extract(debs[pkg], kroot)
        vmlinuz = next((kroot / "boot").glob("vmlinuz-*"))
        release = vmlinuz.name[len("vmlinuz-"):]
        uimage = out / board["images"]["kernels"][name]["uimage"]
        mkimage("kernel", vmlinuz, uimage, board, f"Linux-{release}")
        progress(f"  {uimage.name}: {release}, {uimage.stat().st_size} bytes")
        if loader_modules:
            _install_modules(kroot, rootfs, loader_modules)

    # userland
    busybox = build / "pkgs/busybox-static/bin/busybox"
    shutil.copy2(busybox, rootfs / "bin/busybox")
    for link in ("bin/sh", "sbin/init"):
        os.symlink("/bin/busybox", rootfs / link)
    programs = []
    for t in TOOLS:
        src = next(r / t for r in pkg_roots if (r / t).exists())
        shutil.copy2(src, rootfs / t)
        programs.append(rootfs / t)
    lmsrc = build / "pkgs/lmbench" / LMBENCH_BIN
    for p in sorted(lmsrc.iterdir()):
        if LMBENCH_TOOLS.match(p.name):
            shutil.copy2(p, rootfs / "usr/lib/lmbench/bin" / p.name)
            programs.append(rootfs / "usr/lib/lmbench/bin" / p.name)
    _copy_with_libs(programs, rootfs, pkg_roots)
    run([CROSS_CC, "-static", "-O2", "-Wall", "-o", str(rootfs / "usr/bin/mem_eat"),
         str(TARGET_DIR / "mem_eat.c")])
    _overlay(rootfs, board)

    # the same tree twice: a U-Boot ramdisk (initramfs cpio) and an NFS root
    cpio = build / "rootfs.cpio"
    cpio.write_bytes(cpio_newc(tree_entries(rootfs, devices=[("dev/console", 5, 1),
                                                            ("dev/null", 1, 3)])))
    ramdisk = out / board["images"]["ramdisk"]
    mkimage("ramdisk", cpio, ramdisk, board, f"boardlab rootfs {board['name']}")
    progress(f"  {ramdisk.name}: {ramdisk.stat().st_size} bytes")
    nfsroot = out / "nfsroot"
    shutil.rmtree(nfsroot, ignore_errors=True)
    shutil.copytree(rootfs, nfsroot, symlinks=True)
    for name, major, minor in (("console", 5, 1), ("null", 1, 3)):
        os.mknod(nfsroot / "dev" / name, stat.S_IFCHR | 0o600, os.makedev(major, minor))
    nfsroot_tarball(out)
    stampfile.write_text(digest)
    progress(f"images for {board['name']} built in {time.monotonic() - t0:.1f} s")
    return out


def nfsroot_tarball(out: Path) -> Path:
    """The NFS root as a tarball, for LAVA's nfsrootfs deploy (it extracts and exports
    it itself); made again when the tree is newer."""
    tarball = out / NFSROOT_TARBALL
    tree = out / "nfsroot"
    if not tarball.exists() or tarball.stat().st_mtime < tree.stat().st_mtime:
        tmp = tarball.with_suffix(".tmp")
        run(["tar", "-C", str(tree), "--numeric-owner", "-cJf", str(tmp), "."])
        tmp.replace(tarball)
        progress(f"  {tarball.name}: {tarball.stat().st_size} bytes")
    return tarball


def sync_tree(src: Path, dst: Path):
    """Make dst hold exactly src, emptying dst in place: an NFS server keeps the
    export's inode, so recreating the directory would give 'Stale file handle'."""
    dst.mkdir(parents=True, exist_ok=True)
    for child in dst.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    # cp -a keeps device nodes, links and modes as they are
    run(["cp", "-a", f"{src}/.", f"{dst}/"])
