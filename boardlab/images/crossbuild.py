"""Target programs for a board whose architecture Debian no longer ships (32-bit
powerpc): built here from Debian's source packages (`apt-get source`, deb-src lines
that setup adds) with Debian's cross compiler, linked statically so the root file
system needs no C library of its own. Each build is cached by source version and
rebuilt when the version or this recipe changes.

A source package the archive does not serve is not an error of the image: the image is
built without it and says so (`/etc/boardlab-userland` on the board, and the build's
progress lines), so the suites that need it skip with that reason."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from boardlab.files import locked
from boardlab.images import aptanswers
from boardlab.log import progress
from boardlab.images.debs import ImageBuildError, run

RECIPE = Path(__file__)
USERLAND_MANIFEST = "etc/boardlab-userland"   # on the board: what its image has, and lacks


@dataclass(frozen=True)
class CrossTarget:
    cross: str          # CROSS_COMPILE prefix of Debian's cross compiler
    gnu_type: str       # Debian's multiarch triplet, for configure scripts
    cc: str = ""        # a compiler of its own (softfloat.sysroot's), else Debian's cross gcc
    name: str = ""      # its builds' cache key, when not the arch's
    busybox_off: tuple = ()   # options of Debian's busybox config its C library cannot take

    @property
    def compiler(self) -> str:
        return self.cc or self.cross + "gcc"


CROSS_TARGETS = {"ppc": CrossTarget("powerpc-linux-gnu-", "powerpc-linux-gnu")}


class SourceUnavailable(ImageBuildError):
    """Debian's archive does not serve a source package to this host."""


def source_version(pkg: str) -> str:
    """The version `apt-get source` would fetch (the deb-src candidate)."""
    version = aptanswers.answer(f"apt-cache showsrc --only-source {pkg}", lambda: _newest_source(pkg))
    if not version:
        raise SourceUnavailable(f"no deb-src entry for {pkg} (setup adds 'deb-src' to "
                                f"/etc/apt/sources.list.d/debian.sources; run apt-get update)")
    return version


def _newest_source(pkg: str) -> str:
    out = run(["apt-cache", "showsrc", "--only-source", pkg])
    versions = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Version:")]
    return max(versions, key=_version_key) if versions else ""


def _version_key(v: str):
    r = subprocess.run(["dpkg", "--compare-versions", v, "gt", "0"], capture_output=True)
    return (r.returncode == 0, v)


def fetch_source(pkg: str, version: str, cache: Path) -> Path:
    """Unpacked source tree of pkg at version (downloaded and unpacked once)."""
    # two image builds at once share the source tree: one unpacks, the other waits
    with locked(cache / "locks" / f"source-{pkg}"):
        return _fetched(pkg, version, cache)


def _fetched(pkg: str, version: str, cache: Path) -> Path:
    upstream = version.split(":")[-1]
    tree = cache / "src" / f"{pkg}-{upstream}"
    if (tree / ".boardlab-unpacked").exists():
        return tree
    dl = cache / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    # a refusal is kept (until apt's lists change): the next images step does not wait
    # for the same 404 again
    refusal = aptanswers.answer(f"apt-get source {pkg}={version}",
                                lambda: _download_source(pkg, version, dl), keep=bool)
    if refusal:
        raise SourceUnavailable(refusal)
    dsc = dl / f"{pkg}_{upstream}.dsc"
    shutil.rmtree(tree, ignore_errors=True)
    tree.parent.mkdir(parents=True, exist_ok=True)
    run(["dpkg-source", "--no-check", "-x", str(dsc), str(tree)])
    (tree / ".boardlab-unpacked").write_text(version + "\n")
    return tree


def _download_source(pkg: str, version: str, dl: Path) -> str:
    """apt-get source into dl: '' when it came, else why not (one line)."""
    progress(f"  apt-get source {pkg}={version}")
    r = subprocess.run(["apt-get", "source", "-q", "--download-only",
                        "-o", "APT::Sandbox::User=root", f"{pkg}={version}"],
                       cwd=dl, capture_output=True, text=True)
    if r.returncode == 0:
        return ""
    # (without the mirror's address: the reason goes into the image's inputs)
    errors = [re.sub(r"\s*\[IP: [^]]*\]", "", ln)
              for ln in (r.stderr + r.stdout).splitlines() if ln.startswith("E:")]
    return (f"apt-get source {pkg}={version} failed: "
            + ("; ".join(errors[:2]) or f"status {r.returncode}"))


def _busybox(tree: Path, out: Path, ct: CrossTarget) -> dict[str, Path]:
    """Debian's own static configuration (what busybox-static ships)."""
    build = out / "build"
    build.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tree / "debian/config/pkg/static", build / ".config")
    if ct.busybox_off:
        config = (build / ".config").read_text()
        for option in ct.busybox_off:
            config = config.replace(f"{option}=y\n", f"# {option} is not set\n")
        (build / ".config").write_text(config)
    make = ["make", "-C", str(tree), f"O={build}", f"CROSS_COMPILE={ct.cross}", f"CC={ct.compiler}"]
    run(make + ["oldconfig"], input="\n" * 1000)   # busybox's kconfig has no olddefconfig
    run(make + [f"-j{os.cpu_count() or 1}", "busybox"])
    return {"bin/busybox": build / "busybox"}


# package -> its recipe: (source tree, output dir, target) -> {path in the root: built file}.
# The measurement families' packages have none yet: their sources are not served to the
# hosts this was written on (the archive answers 404), so a recipe could not be tried; the
# image says which it lacks and why.
RECIPES = {"busybox": _busybox}
REQUIRED = ("busybox",)     # the root file system itself


def recipe_digest() -> str:
    return hashlib.sha256(RECIPE.read_bytes()).hexdigest()[:16]


def build_userland(arch: str, packages, cache: Path,
                   target: CrossTarget | None = None) -> tuple[dict[str, Path], dict[str, str]]:
    """Build each source package for arch (with `target`'s compiler if given): ({path in
    root: built file}, {package: version, or 'missing: reason'})."""
    ct = target or CROSS_TARGETS[arch]
    key = ct.name or arch
    files, manifest = {}, {}
    for pkg in packages:
        try:
            # and its build directory: one make at a time, the second finds it built
            with locked(cache / "locks" / f"build-{pkg}"):
                files.update(_built(pkg, key, ct, cache))
            manifest[pkg] = source_version(pkg)
        except SourceUnavailable as e:
            if pkg in REQUIRED:
                raise
            progress(f"  {pkg}: left out of the image: {e}")
            manifest[pkg] = f"missing: {e}"
    return files, manifest


def _built(pkg: str, key: str, ct: CrossTarget, cache: Path) -> dict[str, Path]:
    """{path in root: built file} of pkg for key, built unless its build is up to date."""
    version = source_version(pkg)
    out = cache / "build" / key / f"{pkg}-{version.split(':')[-1]}"
    stamp = out / ".boardlab-built"
    want = recipe_digest()
    if not (stamp.exists() and stamp.read_text() == want):
        tree = fetch_source(pkg, version, cache)
        if pkg not in RECIPES:
            raise SourceUnavailable(f"its source {version} is here, but boardlab has "
                                    f"no cross-build recipe for it yet "
                                    f"(boardlab/images/crossbuild.py RECIPES)")
        progress(f"  cross-building {pkg} {version} for {key} ({ct.compiler}, static)")
        shutil.rmtree(out, ignore_errors=True)
        built = RECIPES[pkg](tree, out, ct)
        (out / "files").write_text("".join(f"{k} {v}\n" for k, v in built.items()))
        stamp.write_text(want)
    return {dst: Path(src) for dst, src in
            (line.split(" ", 1) for line in (out / "files").read_text().splitlines())}
