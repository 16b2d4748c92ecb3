"""SQUAD's web front end wants JavaScript, CSS and fonts that its `download` script
fetches from CDNs at every start (squad/frontend/static/download.conf); none is reachable
here. The same releases are on the npm registry: each is fetched from there once, checked
against the tarball's sha1 pinned below (the registry's own dist.shasum), and where
download.conf's sha1 is of the very file, against that too. download.status then lists
every entry, so `download` skips them all."""
from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.errors import LabFault

REGISTRY = "https://registry.npmjs.org"


class AssetError(LabFault):
    part = "history"


@dataclass(frozen=True)
class Asset:
    dest: str            # download.conf's destination, under the static directory
    package: str         # on the npm registry
    version: str
    tgz_sha1: str        # the registry's dist.shasum of the tarball
    member: str          # file or directory in the tarball (under package/)
    same_bytes: bool     # download.conf's sha1 is this file's: checked too


ASSETS = (
    Asset("angularjs/angular.min.js", "angular", "1.6.6",
          "fd5a3cfb437ce382d854ee01120797978527cb64", "angular.min.js", False),
    Asset("angularjs/angular-mocks.js", "angular-mocks", "1.6.6",
          "c93018e7838c6dc5ceaf1a6bcf9be13c830ea515", "angular-mocks.js", False),
    Asset("angularjs/angular-resource.min.js", "angular-resource", "1.6.6",
          "430660e969c3e7cf40c5e247e5e690f06d6efc61", "angular-resource.min.js", False),
    Asset("bootstrap", "bootstrap", "3.3.7", "5a389394549f23330875a3b150656574f8a9eb71", "dist", False),
    Asset("chartjs/Chart.bundle.js", "chart.js", "2.7.0",
          "330dbbee0c66199eb715f60fbf8ca4029609a529", "dist/Chart.bundle.js", True),
    Asset("font-awesome", "font-awesome", "4.7.0", "8fa8cf0411a1a31afd07b06d2902bb9fc815a133", "", False),
    Asset("lodash.js", "lodash", "4.17.14", "9ce487ae66c96254fe20b599f21b6816028078ba", "lodash.js", True),
    Asset("jquery.js", "jquery", "3.2.1", "5c4d9de652af6cd0a770154a631bba12b015c787", "dist/jquery.js", True),
    Asset("floatThead", "floatthead", "2.0.3", "a0df62342bf169aa1d56c3b518348b0916231df2", "", False),
    Asset("select2.js/select2.min.js", "select2", "4.0.5",
          "7aac50692561985b34d3b82ec55e226f8960d40a", "dist/js/select2.min.js", True),
    Asset("select2.js/select2.css", "select2", "4.0.5",
          "7aac50692561985b34d3b82ec55e226f8960d40a", "dist/css/select2.css", True),
    Asset("chartjs/chartjs-plugin-annotation.min.js", "chartjs-plugin-annotation", "0.5.7",
          "1bf0e30199a6a9ff9889ce0f37a1e755a80d10bf", "chartjs-plugin-annotation.min.js", True),
)


def download_conf(static: Path) -> dict:
    """download.conf: {destination: (url, sha1)}."""
    out = {}
    for line in (static / "download.conf").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#"):
            out[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return out


def tarball(asset: Asset, cache: Path) -> bytes:
    """The package's tarball, from the cache or the registry, its sha1 checked."""
    path = cache / f"{asset.package}-{asset.version}.tgz"
    if path.exists():
        data = path.read_bytes()
    else:
        url = f"{REGISTRY}/{asset.package}/-/{asset.package}-{asset.version}.tgz"
        try:
            data = urllib.request.urlopen(url, timeout=60).read()
        except OSError as e:
            raise AssetError(f"{url}: {e}") from None
    got = hashlib.sha1(data).hexdigest()
    if got != asset.tgz_sha1:
        raise AssetError(f"{asset.package}@{asset.version}: tarball sha1 {got}, pinned {asset.tgz_sha1}")
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def _extract(data: bytes, member: str, dest: Path):
    """package/<member> of the tarball to dest: a file, or a directory's files."""
    root = f"package/{member}" if member else "package"
    found = False
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for m in tar.getmembers():
            if not m.isfile() or ".." in m.name.split("/"):
                continue
            if m.name == root:
                target = dest
            elif m.name.startswith(root + "/"):
                target = dest / m.name[len(root) + 1:]
            else:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(m).read())
            found = True
    if not found:
        raise AssetError(f"{member or 'package'}: not in the tarball")


def install(static: Path, cache: Path = CACHE_DIR / "npm", progress=print) -> int:
    """Every asset in place and download.status listing them; returns how many were
    fetched or extracted now (0: all there already)."""
    conf = download_conf(static)
    status = static / "download.status"
    listed = status.read_text() if status.exists() else ""
    done = 0
    for a in ASSETS:
        url, sha1 = conf.get(a.dest, ("", ""))
        dest = static / a.dest
        if dest.exists() and f"{a.dest} {url}" in listed:
            continue
        progress(f"  SQUAD web assets: {a.dest} from npm {a.package}@{a.version}")
        shutil.rmtree(dest, ignore_errors=True) if dest.is_dir() else dest.unlink(missing_ok=True)
        _extract(tarball(a, cache), a.member, dest)
        if a.same_bytes and sha1 and hashlib.sha1(dest.read_bytes()).hexdigest() != sha1:
            raise AssetError(f"{a.dest}: sha1 differs from download.conf's {sha1}")
        done += 1
    status.write_text("".join(f"{d} {u} {s}\n" for d, (u, s) in conf.items()))
    return done
