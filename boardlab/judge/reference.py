"""The 2005 study's numbers (../shared/reference/linux-2.4-vs-2.6.yaml) as stored
baselines of the real boards: kernels/<version>/<board>.yaml, with the same metric
names the suites measure. `boardlab baselines seed-reference` writes them."""
from __future__ import annotations

from pathlib import Path

import yaml

from boardlab.errors import InputError, one_line
from boardlab.facts.board import PROJECT_ROOT
from boardlab.measure import baselines as bl
from boardlab.measure import catalogue
from boardlab.measure.parsers import parse_kernel_memory
from boardlab import yamltext

REFERENCE = PROJECT_ROOT.parent / "shared" / "reference" / "linux-2.4-vs-2.6.yaml"
SOURCE = {"kind": "study", "title": "Comparing Linux 2.4 and Linux 2.6 Kernels (DENX, 2005)",
          "repeats": 1}


def study_metrics(result: dict) -> dict:
    """One (board, kernel) entry of the reference -> {suite.metric: value}, the names of
    the catalogue (whose units they are in)."""
    out = {}
    b = result.get("build", {})
    for k in ("real_s", "user_s", "sys_s"):
        if k in b:
            out[f"build.{k}"] = b[k]
    if "uimage_data_bytes" in result:
        out["build.uimage_data_bytes"] = result["uimage_data_bytes"]
    for k, v in result.get("vmlinux", {}).items():
        out[f"build.vmlinux_{k}_bytes"] = v
    names = {"linux_version": "linux_version", "freeing_init_memory": "freeing_init",
             "login": "login"}
    for k, v in result.get("boot_s", {}).items():
        out[f"boot_time.{names[k]}"] = v
    mem = result.get("memory", {})
    for k in ("total", "used", "free", "buffers"):
        if k in mem.get("free_kb", {}):
            out[f"memory.free_{k}_kb"] = mem["free_kb"][k]
    if "mem_eat_bytes" in mem:
        out["memory.mem_eat_kb"] = mem["mem_eat_bytes"] // 1024
    if "kernel_banner" in mem:
        km = parse_kernel_memory(mem["kernel_banner"])
        for k in ("available", "code", "init", "code_data"):
            out[f"memory.kernel_{k}_kb"] = km[f"{k}_kb"]
    return out


def _load_reference(reference: Path) -> dict:
    """The study's file, or one line why not (InputError) before anything is written."""
    try:
        data = yamltext.load(Path(reference).read_text())
    except FileNotFoundError:
        raise InputError(f"{reference}: not there (the study's numbers, in ../shared/reference "
                         f"beside this checkout)") from None
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as e:
        raise InputError(f"{reference}: cannot be read ({one_line(e)})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict) \
            or not isinstance(data.get("boards"), dict):
        raise InputError(f"{reference}: fields 'boards' and 'results' are needed (mappings)")
    return data


def seed(reference: Path = REFERENCE, root: Path = bl.KERNELS_DIR) -> list[Path]:
    data = _load_reference(reference)
    written = []
    for board, kernels in data["results"].items():
        if board not in data["boards"]:
            continue   # the latency and ARM tables are relative figures, not baselines
        for kernel, result in kernels.items():
            metrics = {}
            for key, v in study_metrics(result).items():
                spec = catalogue.spec(key)
                metrics[key] = bl.Baseline(key, float(v), spec.unit, spec.direction, None,
                                           dict(SOURCE))
            written.append(bl.write(kernel, board, metrics, root, merge=False))
    return written
