"""Debian's armhf packages for a virtual board's images: which package a kernel
metapackage stands for today, the candidate versions, the .debs (downloaded once)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from boardlab.images import aptanswers
from boardlab.kernelbuilds.buildenv import ImageBuildError, run
from boardlab.log import progress


def resolve_packages(metas: dict) -> dict:
    """Metapackages (linux-image-armmp) to the packages they stand for today,
    in one apt-cache call: {kernel name: package}."""
    if not metas:
        return {}
    cmd = ["apt-cache", "depends"] + [f"{p}:armhf" for p in metas.values()]
    out = aptanswers.answer(" ".join(cmd), lambda: run(cmd))
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
    if not pkgs:
        return {}    # (without packages, apt-cache policy prints apt's whole policy)
    cmd = ["apt-cache", "policy"] + [f"{p}:armhf" for p in pkgs]
    found = parse_policy(aptanswers.answer(" ".join(cmd), lambda: run(cmd)))
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


def extract(deb: Path, dest: Path):
    dest.mkdir(parents=True, exist_ok=True)
    run(["dpkg-deb", "-x", str(deb), str(dest)])


def pinned_deb(pin, debs_dir: Path) -> Path:
    """Where a pinned kernel package's .deb lies in the cache."""
    return debs_dir / f"{pin.package}_{pin.version.replace(':', '%3a')}_armhf.deb"


def served_versions(package: str) -> list[str]:
    """The armhf versions apt serves of a package."""
    out = subprocess.run(["apt-cache", "madison", f"{package}:armhf"], capture_output=True, text=True).stdout
    return [ln.split("|")[1].strip() for ln in out.splitlines() if "|" in ln]


def download_exact(pins, debs_dir: Path) -> dict[str, Path]:
    """Pinned kernel packages (facts.kernelpin.Pin) at exactly their versions: from the
    cache, else apt-get download pkg=version; one line naming the pin when neither has it."""
    debs_dir.mkdir(parents=True, exist_ok=True)
    have = {}
    for pin in pins:
        deb = pinned_deb(pin, debs_dir)
        if not deb.exists():
            progress(f"downloading {pin.package} {pin.version} (armhf), as kernels/{pin.kernel}/pin.yaml pins it")
            try:
                run(["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root",
                     f"{pin.package}:armhf={pin.version}"], cwd=debs_dir)
            except ImageBuildError:
                pass
        if not deb.exists():
            versions = ", ".join(served_versions(pin.package))
            raise ImageBuildError(
                f"kernel {pin.kernel} is pinned to {pin.line()} (kernels/{pin.kernel}/pin.yaml): not in "
                f"{debs_dir}, and apt cannot get it (it serves: {versions or 'no version'}); put the .deb "
                f"there, or move the pin: boardlab kernel pin {pin.kernel} VERSION --why '...'")
        have[pin.package] = deb
    return have
