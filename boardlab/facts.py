"""Board facts: one YAML file per board under boards/, the single source from which
the labgrid environment, the lab-host configs and the LAVA device dictionary are
made. Loading validates every field so that a typo is reported with file and field."""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from .errors import BoardlabError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BOARDS_DIR = PROJECT_ROOT / "boards"
PLACES_DIR = PROJECT_ROOT / "places"


class FactsError(BoardlabError):
    """A facts file is missing, unreadable or has a bad field."""


# field path -> expected type(s); a trailing '?' marks an optional field.
BOARD_SCHEMA = {
    "name": str,
    "description": str,
    "arch": str,
    "cpu": str,
    "cpu_mhz?": (int, float, type(None)),
    "ram_mb": int,
    "lab_host": str,
    "console.device": str,
    "console.baud": int,
    "console.ser2net_port": int,
    "console.serial_adapter?": str,
    "power.model": str,
    "power.host": str,
    "power.index": int,
    "network.ip": str,
    "network.netmask": str,
    "network.server_ip": str,
    "network.mac?": str,
    "uboot.prompt": str,
    "uboot.dialect": str,
    "uboot.autoboot": str,
    "uboot.kernel_addr": str,
    "uboot.ramdisk_addr": str,
    "uboot.fdt_addr?": str,
    "uboot.load_command": str,
    "uboot.boot_command": str,
    "uboot.init_commands?": list,
    "uboot.kernel_message?": str,   # what U-Boot prints as it hands over (LAVA waits for it)
    "mkimage.arch": str,
    "mkimage.load_addr": str,
    "mkimage.entry": str,
    "tftp.dir": str,
    "tftp.prefix": str,
    "nfs.export": str,
    "images.dir": str,
    "images.default_kernel": str,
    "images.ramdisk?": str,
    "images.kernels": dict,
    "root.default": str,
    "root.bootargs": dict,
    "shell.prompt": str,
    "shell.login_prompt": str,
    "shell.username": str,
    "shell.password?": str,
    "timeouts.uboot_s": (int, float),
    "timeouts.load_s": (int, float),
    "timeouts.boot_s": (int, float),
    "qemu?": dict,
}

QEMU_SCHEMA = {              # a virtual board's emulator (when the facts have 'qemu')
    "qemu.machine": str,
    "qemu.cpu": str,
    "qemu.smp?": int,
    "qemu.bios": str,
    "qemu.tap": str,
    "qemu.clock?": str,          # deterministic (icount, the default) or realtime
    "qemu.icount_shift?": int,   # one instruction = 2**shift ns of guest time
}
QEMU_CLOCKS = ("deterministic", "realtime")

LAB_HOST_SCHEMA = {          # a real lab host
    "name": str,
    "address": str,
    "tftp_root": str,
    "boards": list,
    "exporter_name?": str,
    "lava_worker?": bool,    # default true: it also exports LAVA's NFS root directory
}
VIRTUAL_LAB_HOST_SCHEMA = {  # the virtual one adds its LAN and power switch
    **LAB_HOST_SCHEMA,
    "netns": str,
    "bridge": str,
    "run_dir": str,
    "power_switch.listen": str,
    "power_switch.port": int,
}

UBOOT_DIALECTS = ("hush", "old")
NFSROOT_TARBALL = "nfsroot.tar.xz"   # a board's NFS root as a tarball in images.dir (LAVA)
ROOT_MODES = ("ramdisk", "nfs")


def _lookup(data, dotted):
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def _typename(types):
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join("null" if t is type(None) else t.__name__ for t in types)


def validate(data, schema, source):
    """Check data against schema; raise FactsError naming the file and field."""
    if not isinstance(data, dict):
        raise FactsError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    for key, types in schema.items():
        optional = key.endswith("?")
        field = key.rstrip("?")
        try:
            value = _lookup(data, field)
        except KeyError:
            if optional:
                continue
            raise FactsError(f"{source}: missing field '{field}'") from None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in
                                              (types if isinstance(types, tuple) else (types,))):
            raise FactsError(
                f"{source}: field '{field}' must be {_typename(types)}, got {value!r}")


def _load_yaml(path: Path):
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise FactsError(f"{path}: no such file") from None
    except yaml.YAMLError as e:
        raise FactsError(f"{path}: not valid YAML: {e}") from None


def board_path(name_or_path) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or os.sep in str(name_or_path):
        return p
    return BOARDS_DIR / f"{name_or_path}.yaml"


def load_board(name_or_path) -> dict:
    """Load and validate a board's facts (by name, e.g. 'qemu-arm', or path)."""
    path = board_path(name_or_path)
    data = _load_yaml(path)
    validate(data, BOARD_SCHEMA, path)
    if data["uboot"]["dialect"] not in UBOOT_DIALECTS:
        raise FactsError(f"{path}: field 'uboot.dialect' must be one of {UBOOT_DIALECTS}, "
                         f"got {data['uboot']['dialect']!r}")
    if data["root"]["default"] not in ROOT_MODES:
        raise FactsError(f"{path}: field 'root.default' must be one of {ROOT_MODES}")
    for mode in data["root"]["bootargs"]:
        if mode not in ROOT_MODES:
            raise FactsError(f"{path}: field 'root.bootargs.{mode}': unknown root mode "
                             f"(known: {', '.join(ROOT_MODES)})")
    for kname, kernel in data["images"]["kernels"].items():
        if not isinstance(kernel, dict) or not isinstance(kernel.get("uimage"), str):
            raise FactsError(f"{path}: field 'images.kernels.{kname}.uimage' must be a file name")
    if data["images"]["default_kernel"] not in data["images"]["kernels"]:
        raise FactsError(f"{path}: field 'images.default_kernel' names "
                         f"{data['images']['default_kernel']!r}, which is not in images.kernels")
    if "qemu" in data:
        _check_qemu(data, path)
    if path.stem != data["name"]:
        raise FactsError(f"{path}: field 'name' is {data['name']!r} but the file is named "
                         f"{path.name}; they must agree")
    data["_path"] = str(path)
    return data


def _check_qemu(data: dict, path: Path):
    validate(data, QEMU_SCHEMA, path)
    q = data["qemu"]
    unknown = set(q) - {k.split(".")[1].rstrip("?") for k in QEMU_SCHEMA}
    if unknown:
        raise FactsError(f"{path}: unknown field(s) qemu.{', qemu.'.join(sorted(unknown))} "
                         f"(known: {', '.join(k[5:].rstrip('?') for k in QEMU_SCHEMA)})")
    q.setdefault("clock", "deterministic")
    if q["clock"] not in QEMU_CLOCKS:
        raise FactsError(f"{path}: field 'qemu.clock' must be one of {', '.join(QEMU_CLOCKS)}, "
                         f"got {q['clock']!r}")
    shift = q.setdefault("icount_shift", 4)
    if not 0 <= shift <= 10:
        raise FactsError(f"{path}: field 'qemu.icount_shift' must be 0..10, got {shift}")


def load_lab_host(name_or_path="vlab") -> dict:
    p = Path(name_or_path)
    path = p if p.suffix in (".yaml", ".yml") else PLACES_DIR / str(name_or_path) / "lab-host.yaml"
    data = _load_yaml(path)
    kind = data.get("kind", "virtual") if isinstance(data, dict) else None
    if kind not in ("virtual", "real"):
        raise FactsError(f"{path}: field 'kind' must be virtual or real, got {kind!r}")
    validate(data, VIRTUAL_LAB_HOST_SCHEMA if kind == "virtual" else LAB_HOST_SCHEMA, path)
    data["kind"] = kind
    data["_path"] = str(path)
    return data


def lab_hosts() -> list[dict]:
    return [load_lab_host(p) for p in sorted(PLACES_DIR.glob("*/lab-host.yaml"))]


def bootargs(board: dict, root: str, kernel: str | None = None) -> str:
    """The kernel command line for a root mode, with the board's facts filled in. A
    kernel may name its console differently (Linux 2.4's ttyS0 for 2.6's ttyCPM0)."""
    try:
        template = board["root"]["bootargs"][root]
    except KeyError:
        raise FactsError(f"{board['_path']}: no bootargs for root mode {root!r} "
                         f"(root.bootargs has: {', '.join(board['root']['bootargs'])})") from None
    net = board["network"]
    device = board["images"]["kernels"].get(kernel or "", {}).get("console") or board["console"]["device"]
    return template.format(
        console=f"{device},{board['console']['baud']}",
        ip=net["ip"], netmask=net["netmask"], server_ip=net["server_ip"],
        nfs_export=board["nfs"]["export"], name=board["name"])
