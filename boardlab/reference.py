"""The 2005 study's numbers (../shared/reference/linux-2.4-vs-2.6.yaml) as stored
baselines of the real boards: kernels/<version>/<board>.yaml, with the same metric
names the suites measure. `boardlab baselines seed-reference` writes them."""
from __future__ import annotations

from pathlib import Path

import yaml

from . import baselines as bl
from .facts import PROJECT_ROOT
from .parsers import parse_kernel_memory
from .results import default_tolerance

REFERENCE = PROJECT_ROOT.parent / "shared" / "reference" / "linux-2.4-vs-2.6.yaml"
SOURCE = {"kind": "study", "title": "Comparing Linux 2.4 and Linux 2.6 Kernels (DENX, 2005)",
          "repeats": 1}


def study_metrics(result: dict) -> dict:
    """One (board, kernel) entry of the reference -> {suite.metric: (value, unit, direction)}."""
    out = {}
    b = result.get("build", {})
    for k in ("real_s", "user_s", "sys_s"):
        if k in b:
            out[f"build.{k}"] = (b[k], "s", "lower")
    if "uimage_data_bytes" in result:
        out["build.uimage_data_bytes"] = (result["uimage_data_bytes"], "bytes", "lower")
    for k, v in result.get("vmlinux", {}).items():
        out[f"build.vmlinux_{k}_bytes"] = (v, "bytes", "lower")
    names = {"linux_version": "linux_version", "freeing_init_memory": "freeing_init",
             "login": "login"}
    for k, v in result.get("boot_s", {}).items():
        out[f"boot_time.{names[k]}"] = (v, "s", "lower")
    mem = result.get("memory", {})
    for k, direction in (("total", "higher"), ("used", "lower"), ("free", "higher"),
                         ("buffers", "lower")):
        if k in mem.get("free_kb", {}):
            out[f"memory.free_{k}_kb"] = (mem["free_kb"][k], "kB", direction)
    if "mem_eat_bytes" in mem:
        out["memory.mem_eat_kb"] = (mem["mem_eat_bytes"] // 1024, "kB", "higher")
    if "kernel_banner" in mem:
        km = parse_kernel_memory(mem["kernel_banner"])
        out["memory.kernel_available_kb"] = (km["available_kb"], "kB", "higher")
        out["memory.kernel_code_kb"] = (km["code_kb"], "kB", "lower")
        out["memory.kernel_init_kb"] = (km["init_kb"], "kB", "lower")
        out["memory.kernel_code_data_kb"] = (km["code_data_kb"], "kB", "lower")
    return out


def seed(reference: Path = REFERENCE, root: Path = bl.KERNELS_DIR) -> list[Path]:
    data = yaml.safe_load(Path(reference).read_text())
    written = []
    for board, kernels in data["results"].items():
        if board not in data["boards"]:
            continue   # the lmbench/ARM tables are relative figures, not baselines
        for kernel, result in kernels.items():
            metrics = {key: bl.Baseline(key, float(v), unit, direction,
                                        default_tolerance(key, root), None, dict(SOURCE))
                       for key, (v, unit, direction) in study_metrics(result).items()}
            written.append(bl.write(kernel, board, metrics, root, merge=False))
    return written
