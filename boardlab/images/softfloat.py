"""A C library for a PowerPC without FPU whose kernel has no FPU emulation (the TQM860L's
MPC860T under tqm8xx_defconfig): one floating-point instruction kills the program.

Debian ships no soft-float 32-bit PowerPC C library, and the soft-float routines in its
cross compiler's libgcc.a are built for the hard-float ABI (their doubles come in FPRs).
So both are built here from Debian's sources, once per digest:

- musl (`apt-get source musl`), configured for `-msoft-float -mlong-double-64`: musl's
  powerpc-sf port, no FP register touched (its setjmp saves none);
- the soft-float routines from gcc's own libgcc/soft-fp (Debian's gcc-N-source package,
  N the cross compiler's major version), compiled with the board's flags into
  libsoftfp.a, linked before libgcc.a so the hard-float ABI's copies are never taken.

The result is a sysroot with a `cc` that compiles and links statically against it (a gcc
specs file, as musl's own wrapper does); libgcc.a still gives the integer helpers, which
hold no FP instruction. Every binary built with it is scanned before it is used
(`ownprograms.fpu_instructions`)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from boardlab.files import locked
from boardlab.images.debs import ImageBuildError, run
from boardlab.log import progress

RECIPE = Path(__file__)
# Debian's static busybox config against musl: grep -z and vi's search use glibc's regex
# extensions (re_search, REG_STARTEND), which musl has not
BUSYBOX_OFF = ("CONFIG_EXTRA_COMPAT", "CONFIG_FEATURE_VI_REGEX_SEARCH")
KERNEL_HEADERS = ("linux", "asm", "asm-generic", "mtd", "rdma", "scsi", "sound", "video", "misc", "xen")


def _names():
    """libgcc/soft-fp's single and double routines (no TFmode: long double is double
    here), by file name: floatsisf, floatunsidf, fixdfsi, adddf3, ..."""
    out = []
    for m in ("sf", "df"):
        out += [f"{op}{m}3" for op in ("add", "sub", "mul", "div")]
        out += [f"{op}{m}2" for op in ("neg", "eq", "ge", "le", "unord")]
        out += [f"fix{m}si", f"fixuns{m}si", f"fix{m}di", f"fixuns{m}di"]
        out += [f"float{i}{m}" for i in ("si", "unsi", "di", "undi")]
    return out + ["extendsfdf2", "truncdfsf2"]


SOFTFP = _names()


class SoftFloatBuildError(ImageBuildError):
    """The soft-float C library did not build."""


def cc_version(cross: str) -> tuple[str, str]:
    """(major, the first line of --version) of the cross compiler."""
    try:
        major = subprocess.run([cross + "gcc", "-dumpversion"], capture_output=True, text=True,
                               check=True).stdout.strip().split(".")[0]
        line = subprocess.run([cross + "gcc", "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as e:
        raise SoftFloatBuildError(f"{cross}gcc: the cross compiler is not here ({e}); "
                                  f"scripts/setup-host.sh installs it") from None
    return major, line


def sysroot(cross: str, flags: tuple, cache: Path) -> Path:
    """The sysroot for `flags` (with -msoft-float), built once -> its path; its `cc`
    compiles and links statically for the board."""
    from boardlab.images.crossbuild import fetch_source, source_version   # (it imports us)
    major, line = cc_version(cross)
    musl_v = source_version("musl")
    gcc_src = f"gcc-{major}-source"
    gcc_v = _candidate(gcc_src)
    h = hashlib.sha256(RECIPE.read_bytes() + repr((cross, flags, line, musl_v, gcc_v)).encode())
    root = cache / "softfloat" / h.hexdigest()[:16]
    # one build at a time (two roots built at once on one lab host): the second waits and
    # finds it, instead of removing the first's sysroot while the first compiles with it
    with locked(root):
        if (root / "cc").exists():
            return root
        progress(f"  building a soft-float C library ({' '.join(flags)}): musl {musl_v}, "
                 f"libgcc's soft-fp from {gcc_src} {gcc_v}")
        tmp = root.with_name(root.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        (tmp / "lib").mkdir(parents=True)
        cflags = [*flags, "-mlong-double-64", "-O2"]
        _musl(fetch_source("musl", musl_v, cache), tmp, cross, cflags)
        _softfp(_gcc_softfp_tree(gcc_src, gcc_v, cache), tmp, cross, cflags)
        _kernel_headers(cross, tmp / "kinclude")
        _driver(tmp, root, cross, cflags)
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
    return root


def _candidate(pkg: str) -> str:
    out = run(["apt-cache", "policy", pkg])
    for ln in out.splitlines():
        if ln.strip().startswith("Candidate:"):
            v = ln.split(":", 1)[1].strip()
            if v and v != "(none)":
                return v
    raise SoftFloatBuildError(f"{pkg}: apt has no candidate (it carries libgcc's soft-fp "
                              f"sources; run apt-get update)")


def _musl(tree: Path, prefix: Path, cross: str, cflags: list):
    build = prefix.parent / (prefix.name + "-musl")
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    cc = f"{cross}gcc {' '.join(cflags)}"
    run([str(tree / "configure"), f"--prefix={prefix}", "--target=powerpc-linux-gnu",
         "--disable-shared", f"CROSS_COMPILE={cross}", f"CC={cc}"], cwd=build)
    config = (build / "config.mak").read_text()
    if "SUBARCH = -sf" not in config:
        raise SoftFloatBuildError(f"musl's configure did not take the soft-float port ({cc})")
    run(["make", f"-j{os.cpu_count() or 1}"], cwd=build)
    run(["make", "install"], cwd=build)
    shutil.rmtree(build, ignore_errors=True)


def _gcc_softfp_tree(pkg: str, version: str, cache: Path) -> Path:
    """libgcc's soft-fp sources and rs6000's sfp-machine.h, from Debian's gcc source."""
    tree = cache / "src" / f"{pkg}-{version}"
    if (tree / ".boardlab-unpacked").exists():
        return tree
    dl = cache / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    progress(f"  apt-get download {pkg}={version}")
    r = subprocess.run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", f"{pkg}={version}"],
                       cwd=dl, capture_output=True, text=True)
    if r.returncode != 0:
        raise SoftFloatBuildError(f"apt-get download {pkg}={version} failed: {r.stderr.strip()[:200]}")
    deb = next(dl.glob(f"{pkg}_*.deb"))
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    listing = run(["dpkg-deb", "-c", str(deb)])
    tarball = next(ln.split()[-1] for ln in listing.splitlines() if ln.endswith("-dfsg.tar.xz")
                   or (ln.endswith(".tar.xz") and "/gcc-" in ln.split()[-1]))
    top = Path(tarball).name.removesuffix(".tar.xz").removesuffix("-dfsg")
    want = [f"{top}/libgcc/soft-fp", f"{top}/libgcc/config/rs6000/sfp-machine.h",
            f"{top}/include/longlong.h", f"{top}/include/ansidecl.h"]
    sh = (f"dpkg-deb --fsys-tarfile {deb} | tar -xO {tarball} | "
          f"tar -xJ -C {tree} --strip-components=1 " + " ".join(want))
    run(["sh", "-c", sh])
    (tree / ".boardlab-unpacked").write_text(version + "\n")
    return tree


def _softfp(tree: Path, prefix: Path, cross: str, cflags: list):
    objs = prefix.parent / (prefix.name + "-softfp")
    shutil.rmtree(objs, ignore_errors=True)
    objs.mkdir()
    inc = ["-I", str(tree / "libgcc/config/rs6000"), "-I", str(tree / "libgcc/soft-fp"),
           "-I", str(tree / "libgcc"), "-I", str(tree / "include")]
    for name in SOFTFP:
        run([cross + "gcc", *cflags, "-fno-builtin", "-fexceptions", "-DFP_NO_EXCEPTIONS", *inc,
             "-c", "-o", str(objs / f"{name}.o"), str(tree / "libgcc/soft-fp" / f"{name}.c")])
    run([cross + "ar", "rcs", str(prefix / "lib/libsoftfp.a"), *sorted(map(str, objs.glob("*.o")))])
    shutil.rmtree(objs, ignore_errors=True)


def _kernel_headers(cross: str, dest: Path):
    """The kernel's uapi headers of the cross toolchain, beside musl's (busybox needs them)."""
    src = Path("/usr") / cross.rstrip("-") / "include"
    dest.mkdir(parents=True)
    for d in KERNEL_HEADERS:
        if (src / d).is_dir():
            shutil.copytree(src / d, dest / d)


def _driver(tmp: Path, prefix: Path, cross: str, cflags: list):
    """A gcc specs file (musl's wrapper's, with libsoftfp.a before libgcc.a) and `cc`,
    written into tmp naming the paths they will have (prefix)."""
    inc, lib = prefix / "include", prefix / "lib"
    (tmp / "cc.specs").write_text(f"""%rename cpp_options old_cpp_options

*cpp_options:
-nostdinc -isystem {inc} -isystem {prefix / 'kinclude'} -isystem include%s %(old_cpp_options)

*cc1:
%(cc1_cpu) -nostdinc -isystem {inc} -isystem {prefix / 'kinclude'} -isystem include%s

*link_libgcc:
-L{lib} -L .%s

*libgcc:
{lib / 'libsoftfp.a'} libgcc.a%s

*startfile:
{lib / 'crt1.o'} {lib / 'crti.o'} crtbeginT.o%s

*endfile:
crtend.o%s {lib / 'crtn.o'}

*link:
-nostdlib -static

""")
    cc = tmp / "cc"
    cc.write_text(f"#!/bin/sh\n# soft-float, static, against the musl beside this file\n"
                  f"exec {cross}gcc {' '.join(cflags)} -static -specs {prefix / 'cc.specs'} \"$@\"\n")
    cc.chmod(0o755)
