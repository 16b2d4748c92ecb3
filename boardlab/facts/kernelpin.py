"""A kernel's pin: the exact Debian package (or linux-source version) its stored
baselines were measured with, in kernels/<kernel>/pin.yaml beside them. The lab builds
the kernel from exactly that, never from whatever the archive offers that day; the pin
is moved only by `boardlab kernel pin`, which re-measures and says why."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from boardlab.errors import InputError, one_line
from boardlab.facts.board import KERNELS_DIR
from boardlab.files import atomic_write
from boardlab import yamltext

HEADER = ("# The package the baselines of this kernel were measured with: the lab builds the kernel\n"
          "# from exactly it (the .deb or source tarball cached). Moved only by\n"
          "# `boardlab kernel pin`, which re-measures and records why.\n")


class PinError(InputError):
    pass


@dataclass(frozen=True)
class Pin:
    kernel: str
    package: str       # linux-image-6.1.0-50-armmp, or linux-source-6.1 for a kernel built here
    version: str       # 6.1.176-1
    since: str = ""    # the date it was set
    why: str = ""
    run: str = ""      # the run that measured its baselines

    @property
    def is_source(self) -> bool:
        return self.package.startswith("linux-source-")

    def line(self) -> str:
        return f"{self.package} {self.version}"


def pin_path(kernel: str, root: Path = KERNELS_DIR) -> Path:
    return root / kernel / "pin.yaml"


def load_pin(kernel: str, root: Path = KERNELS_DIR) -> Pin | None:
    path = pin_path(kernel, root)
    if not path.exists():
        return None
    try:
        data = yamltext.load(path.read_text())
    except yaml.YAMLError as e:
        raise PinError(f"{path}: not valid YAML: {one_line(e)}") from None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) and data[k] for k in ("package", "version")):
        raise PinError(f"{path}: needs 'package' and 'version' (strings), got {data!r}")
    extra = set(data) - {"package", "version", "since", "why", "run"}
    if extra:
        raise PinError(f"{path}: unknown field(s) {', '.join(sorted(extra))}")
    return Pin(kernel, **{k: str(v) for k, v in data.items()})


def write_pin(pin: Pin, root: Path = KERNELS_DIR) -> Path:
    path = pin_path(pin.kernel, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {k: v for k, v in asdict(pin).items() if k != "kernel" and v}
    doc.setdefault("since", time.strftime("%Y-%m-%d"))
    atomic_write(path, HEADER + yaml.safe_dump(doc, sort_keys=False, width=100))
    return path
