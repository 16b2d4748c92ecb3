"""What a kernel is, not what the lab calls it. A short name (armmp, virt-nfs) stays
the same when Debian's index moves the package under it or linux-source moves to a new
point release; its identity does not:

- `release` and `proc_version`: `uname -r` and /proc/version as the board prints them
  (the kernel's `Linux version ...` line on the console: the same text);
- `package`, `package_version`: the Debian package it came from;
- `source_version`, `config_sha256`, `compiler`: or what it was built from, and with;
- `uimage_sha256`: the image the board was given.

Whoever makes a uImage writes what it knows beside it (`<uImage>.identity.json`); a
boot adds what the board printed and the image's digest. Two identities are compared on
the strongest fields both sides have (what the board printed, else the package, else the
build's inputs, else the image), so a kernel is judged only against its own figures."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

FIELDS = ("release", "proc_version", "package", "package_version", "source_version",
          "config_sha256", "compiler", "uimage_sha256", "flavour")
# flavour: which series of kernels it belongs to (armmp, virt-nfs: one config over
# versions); it names the series in the history, it does not tell two kernels apart
# compared in this order: the first group both identities have decides
PRINTED, BUILT = ("proc_version",), ("source_version", "config_sha256", "compiler")
KEYS = (PRINTED, ("package", "package_version"), BUILT, ("uimage_sha256",))
LINUX_VERSION = re.compile(r"(Linux version (\S+) .*?)\s*$")


def from_console(lines) -> dict:
    """{release, proc_version} from a boot's console lines (text, or lines with .text)."""
    for line in lines:
        text = getattr(line, "text", line)
        m = LINUX_VERSION.search(text)
        if m:
            return {"release": m.group(2), "proc_version": m.group(1)}
    return {}


_DIGESTS: dict = {}   # (path, size, mtime) -> sha256: a run records dozens of metrics of one image


def sha256(path: Path) -> str:
    st = Path(path).stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = _digest(path)
    return _DIGESTS[key]


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sidecar(uimage: Path) -> Path:
    return Path(f"{uimage}.identity.json")


def read_sidecar(uimage: Path) -> dict:
    try:
        return json.loads(sidecar(uimage).read_text())
    except (OSError, ValueError):
        return {}


NFS_ROOTS = ("built-in", "loader")   # how a kernel mounts an NFS root: itself, or by the loader ramdisk


def write_sidecar(uimage: Path, known: dict, nfs_root: str | None = None) -> dict:
    """What the maker of a uImage knows of it, beside it, with the image's digest; and
    how it mounts an NFS root, where the maker knows."""
    doc = {k: v for k, v in known.items() if k in FIELDS and v}
    doc["uimage_sha256"] = sha256(uimage)
    if nfs_root:
        assert nfs_root in NFS_ROOTS, nfs_root
        doc["nfs_root"] = nfs_root
    sidecar(uimage).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return doc


def nfs_root(uimage: Path) -> str | None:
    """'built-in' or 'loader' where the uImage's maker said (None: it did not)."""
    return read_sidecar(uimage).get("nfs_root")


def of_image(uimage: Path | None) -> dict:
    """A uImage's identity as far as the host knows it (its sidecar, its digest)."""
    if uimage is None or not Path(uimage).is_file():
        return {}
    known = read_sidecar(uimage)
    digest = sha256(uimage)
    if known.get("uimage_sha256") not in (None, digest):
        known = {}   # the image was replaced since: its maker's note is of another kernel
    return {**known, "uimage_sha256": digest}


def merge(*parts: dict) -> dict:
    out = {}
    for p in parts:
        out.update({k: v for k, v in (p or {}).items() if k in FIELDS and v})
    return out


def differs(a: dict | None, b: dict | None) -> tuple[str, str] | None:
    """The two kernels in words when the identities are of two (None: the same one, or
    not known on a side). The first group both sides know decides; but a build made
    reproducibly prints the same /proc/version whatever its config, so where both sides
    also know the build's inputs, those must agree too."""
    for group in KEYS:
        if a and b and all(a.get(k) for k in group) and all(b.get(k) for k in group):
            if any(a[k] != b[k] for k in group):
                return describe(a), describe(b)
            if group == PRINTED and all(a.get(k) and b.get(k) for k in BUILT) \
                    and any(a[k] != b[k] for k in BUILT):
                return describe(a), describe(b)
            return None
    return None


def describe(ident: dict | None) -> str:
    """One line: release, then where it came from."""
    if not ident:
        return "an unknown kernel"
    parts = [ident.get("release") or ""]
    if ident.get("package"):
        parts.append(f"{ident['package']} {ident.get('package_version', '')}".strip())
    elif ident.get("source_version"):
        parts.append(f"from {ident['source_version']}, config {ident.get('config_sha256', '')[:12]}")
    if not parts[0] and ident.get("uimage_sha256"):
        parts.append(f"uImage {ident['uimage_sha256'][:12]}")
    if ident.get("proc_version") and not ident.get("package"):
        m = re.search(r"#\S+ .*$", ident["proc_version"])
        if m:
            parts.append(m.group(0))
    return " ".join(p for p in parts if p) or "an unknown kernel"


def build_name(kernel: str, ident: dict | None) -> str:
    """How the history names a kernel's build: its release and a digest of what decides
    its identity ('6.1.0-50-armmp_3f2a9c1b'; SQUAD's names take letters, digits and
    '_.-' only), or the lab's name where nothing is known."""
    for group in KEYS:
        if ident and all(ident.get(k) for k in group):
            digest = hashlib.sha256("\n".join(ident[k] for k in group).encode()).hexdigest()[:8]
            release = re.sub(r"[^A-Za-z0-9_.-]", "-", ident.get("release") or kernel)
            return f"{release}_{digest}"
    return kernel
