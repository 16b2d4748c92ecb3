"""Debian's kernel source at an exact version: `linux-source-<series>` as installed, or as
Debian's archive serves it (apt-get download once, the tarball kept under
<cache>/sources/<package>_<version>/). A version neither installed, cached nor served
is said in one line, with the versions the archive does serve."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.errors import InputError
from boardlab.log import progress

SOURCES_DIR = CACHE_DIR / "sources"
VERSION = re.compile(r"^(\d+\.\d+)\.\d+-[0-9A-Za-z.+~]+$")   # 6.12.117-1~deb12u1


class SourceError(InputError):
    """A linux-source version this host cannot get: said in one line (exit 2)."""


@dataclass(frozen=True)
class Source:
    package: str      # linux-source-6.1
    version: str      # 6.1.192-2
    tarball: Path

    @property
    def label(self) -> str:
        return f"{self.package} {self.version}"


def package_of(version: str) -> str:
    """'6.12.117-1~deb12u1' -> 'linux-source-6.12' (SourceError for a malformed one)."""
    m = VERSION.match(version)
    if not m:
        raise SourceError(f"{version!r} is not a Debian kernel source version (like 6.1.192-2 "
                          f"or 6.12.117-1~deb12u1)")
    return f"linux-source-{m.group(1)}"


def installed_version(package: str) -> str | None:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", package], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith("install ok installed"):
        return None
    return r.stdout.split()[-1]


def served_versions(package: str) -> list[str]:
    """The versions `apt-cache madison` lists, newest first."""
    r = subprocess.run(["apt-cache", "madison", package], capture_output=True, text=True)
    seen = []
    for line in r.stdout.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 2 and parts[0] == package and parts[1] not in seen:
            seen.append(parts[1])
    return seen


def cached(package: str, version: str) -> Path:
    return SOURCES_DIR / f"{package}_{version}" / f"{package}.tar.xz"


def source(version: str, package: str | None = None) -> Source:
    """The tarball of linux-source at this version: the installed one's, the cache's, or
    fetched from the archive once."""
    package = package or package_of(version)
    if installed_version(package) == version and Path(f"/usr/src/{package}.tar.xz").exists():
        return Source(package, version, Path(f"/usr/src/{package}.tar.xz"))
    tarball = cached(package, version)
    if tarball.exists():
        return Source(package, version, tarball)
    served = served_versions(package)
    if version not in served:
        raise SourceError(f"{package} {version}: not installed, not in {tarball.parent.parent}, and "
                          f"apt does not serve it (it serves: {', '.join(served) or 'none'}; "
                          f"apt-get update?)")
    progress(f"fetching {package} {version} from Debian's archive (once; kept in {tarball.parent})")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tarball.parent) as tmp:
        r = subprocess.run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root",
                            f"{package}={version}"], cwd=tmp, capture_output=True, text=True)
        debs = list(Path(tmp).glob("*.deb"))
        if r.returncode != 0 or not debs:
            raise SourceError(f"apt-get download {package}={version} failed: "
                              f"{(r.stderr or r.stdout).strip().splitlines()[-1:]}")
        member = f"./usr/src/{package}.tar.xz"
        with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(debs[0])], stdout=subprocess.PIPE) as deb:
            subprocess.run(["tar", "-x", "-C", tmp, member], stdin=deb.stdout, check=True)
        shutil.move(str(Path(tmp) / member), tarball)
    progress(f"  {tarball}: {tarball.stat().st_size // 2**20} MB")
    return Source(package, version, tarball)


def installed(package: str = "linux-source-6.1") -> Source:
    """The installed linux-source (what a kernel without a pin is built from)."""
    version = installed_version(package)
    if version is None:
        raise SourceError(f"{package} is not installed (scripts/setup-host.sh installs it)")
    return Source(package, version, Path(f"/usr/src/{package}.tar.xz"))


def of_kernel(kernel: str) -> Source:
    """What a kernel built here is built from: its pin's linux-source version
    (kernels/<kernel>/pin.yaml), else the installed linux-source."""
    from boardlab.facts.kernelpin import load_pin
    pin = load_pin(kernel)
    if pin is None:
        return installed()
    if not pin.is_source:
        raise SourceError(f"kernel {kernel} is pinned to the package {pin.line()}, not to a linux-source "
                          f"version: it is not built here")
    return source(pin.version, pin.package)
