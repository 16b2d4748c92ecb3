"""Parsers of the tools' output into named numbers. Pure functions: text in, dict out;
tested on output captured from the virtual board (tests/data/)."""
from __future__ import annotations

import json
import re

from boardlab.errors import Bug


class ParseError(Bug, ValueError):
    """Output a parser cannot read: the parsers are tested on the boards' output, so a
    miss is ours."""


def _num(s: str) -> float:
    return float(s)


# ---- build: size, mkimage -l, time -------------------------------------------------

def parse_size(text: str) -> dict:
    """GNU `size` (Berkeley format) of one file: text, data, bss, dec."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and all(p.isdigit() for p in parts[:4]):
            return dict(zip(("text", "data", "bss", "dec"), map(int, parts[:4])))
    raise ParseError("no 'text data bss dec hex filename' line in size output")


def parse_mkimage_list(text: str) -> dict:
    """`mkimage -l`: image name, type, data size in bytes, load address and entry."""
    out = {}
    for key, pattern, conv in (
            ("name", r"Image Name:\s*(.*)", str.strip),
            ("type", r"Image Type:\s*(.*)", str.strip),
            ("data_size", r"Data Size:\s*(\d+) Bytes", int),
            ("load_addr", r"Load Address:\s*([0-9a-fA-F]+)", lambda s: int(s, 16)),
            ("entry", r"Entry Point:\s*([0-9a-fA-F]+)", lambda s: int(s, 16))):
        m = re.search(pattern, text)
        if m:
            out[key] = conv(m.group(1))
    if "data_size" not in out:
        raise ParseError("no 'Data Size: N Bytes' in mkimage -l output")
    return out


def parse_free(text: str) -> dict:
    """`free` (busybox or procps, old or new columns): the Mem: row by column name, kB."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = next((ln.split() for ln in lines if "total" in ln.split()), None)
    row = next((ln.split() for ln in lines if ln.split()[0] == "Mem:"), None)
    if not header or not row:
        raise ParseError("no header and Mem: row in free output")
    values = row[1:]
    return {name.replace("/", "_"): int(v) for name, v in zip(header, values)}


RE_MEMORY = re.compile(r"Memory:\s*(\d+)([kK]B?)(?:/(\d+)[kK])?\s+available\s*\(([^)]*)\)")


def parse_kernel_memory(text: str) -> dict:
    """The boot line 'Memory: …k available (…k kernel code, …k data, …k init …)' of
    2.4/2.6/6.x and ARM kernels, in kB. code_data_kb: code plus all data sections."""
    m = RE_MEMORY.search(text)
    if not m:
        raise ParseError("no 'Memory: …k available (…)' line")
    out = {"available_kb": int(m.group(1))}
    if m.group(3):
        out["total_kb"] = int(m.group(3))
    for amount, what in re.findall(r"(\d+)[kK]B?\s+([\w-]+(?:\s+code)?)", m.group(4)):
        key = {"kernel code": "code", "code": "code"}.get(what, what).replace("-", "_")
        out[f"{key}_kb"] = int(amount)
    out["code_data_kb"] = sum(out.get(k, 0) for k in ("code_kb", "data_kb", "rwdata_kb", "rodata_kb"))
    return out


# the memory suite's metrics from that line (the pytest suite, compare's samples, LAVA's logs)
KERNEL_MEMORY_METRICS = (("kernel_available_kb", "available_kb"), ("kernel_code_kb", "code_kb"),
                         ("kernel_init_kb", "init_kb"), ("kernel_code_data_kb", "code_data_kb"))


def kernel_memory_metrics(boot_log: str) -> dict:
    """{memory metric name: kB} of the boot log's 'Memory:' line."""
    mem = parse_kernel_memory(boot_log)
    return {name: mem[key] for name, key in KERNEL_MEMORY_METRICS}


# initcall_debug (6.x): "calling  name+0x0/0x18 @ 1", then "initcall name+0x0/0x18 returned
# 0 after 12 usecs", each stamped by printk; a device's own "calling" (PCI fixups) is not
# an initcall and has the device's name before it
def parse_mem_eat(text: str) -> dict:
    """mem_eat's running totals: the last one is what it got before it was stopped."""
    totals = re.findall(r"Got total = (\d+) = (\d+)kB", text)
    if not totals:
        raise ParseError("no 'Got total = N = NkB' line in mem_eat output")
    return {"bytes": int(totals[-1][0]), "kb": int(totals[-1][1]),
            "ended_by": "malloc failed" if "malloc failed" in text else "killed"}


def parse_figures(text: str, patterns) -> dict:
    """{name: the number pattern's group matched last} for each (name, pattern) (a family's
    figures, boardlab.measure.families); ParseError naming the first one text lacks."""
    out = {}
    for name, pattern in patterns:
        found = re.findall(pattern, text, re.M)
        if not found:
            raise ParseError(f"no {name} ({pattern!r}) in the output")
        out[name] = _num(found[-1])
    return out


# ---- cyclictest ------------------------------------------------------------------------

def parse_cyclictest_json(text: str) -> dict:
    """cyclictest --json=FILE. Its keys 'cmdline:' and 'rt_test_version:' carry a
    trailing colon; they are given back without it. Histogram keys become ints."""
    start = text.find("{")   # warnings on stderr share the console: skip what precedes
    if start < 0:
        raise ParseError("no JSON object in cyclictest --json output")
    data = json.loads(text[start:])
    data = {k.rstrip(":"): v for k, v in data.items()}
    for t in data.get("thread", {}).values():
        if "histogram" in t:
            t["histogram"] = {int(k): v for k, v in t["histogram"].items()}
        if "sum" in t and "avg" not in t:   # the project's program: integers, the average here
            if not t.get("cycles"):
                raise ParseError("cyclictest --json: no cycles")
            t["avg"] = t["sum"] / t["cycles"]
    return data


def parse_cycles_reduction(lines) -> dict:
    """The board's reduction of a cyclictest run's per-cycle lines (jobs/testdefs/lib/cycles.sh):
    {'histogram': {us: count}, 'slices': [(cycles so far, max us)], 'cycles': n,
    'overflows': n, and from a full 'N' line 'min', 'max', 'sum' (us)}."""
    out = {"histogram": {}, "slices": [], "cycles": None, "overflows": 0}
    for ln in lines:
        f = ln.split()
        if len(f) == 3 and f[0] in ("H", "S") and f[1].isdigit() and f[2].isdigit():
            if f[0] == "H":
                out["histogram"][int(f[1])] = int(f[2])
            else:
                out["slices"].append((int(f[1]), int(f[2])))
        elif len(f) >= 3 and f[0] == "N" and f[1].isdigit() and f[2].isdigit():
            out["cycles"], out["overflows"] = int(f[1]), int(f[2])
            if len(f) == 6 and all(x.lstrip("-").isdigit() for x in f[3:]):   # min max sum, over every cycle
                out["min"], out["max"], out["sum"] = int(f[3]), int(f[4]), int(f[5])
    if out["cycles"] is None:
        raise ParseError("no 'N cycles overflows' line in the reduction of cyclictest's per-cycle output")
    return out


def percentile_from_histogram(counts: dict, p: float, overflows: int = 0) -> float:
    """The p-th percentile (0-100) of a latency histogram {us: count}."""
    total = sum(counts.values()) + overflows
    if total == 0:
        raise ParseError("empty histogram")
    need = p / 100.0 * total
    seen = 0
    for lat in sorted(counts):
        seen += counts[lat]
        if seen >= need:
            return float(lat)
    return float(max(counts))   # the rest are overflows: beyond the histogram


def parse_userland_manifest(text: str) -> dict:
    """/etc/boardlab-userland of a cross-built image: 'package: version' or 'package:
    missing: why' per line -> {package: None (present) or why it is missing}."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or ":" not in line:
            continue
        pkg, what = (s.strip() for s in line.split(":", 1))
        out[pkg] = what[len("missing:"):].strip() if what.startswith("missing:") else None
    return out


def marked(lines, marks) -> dict:
    """{mark: its text} of lines divided by marker lines (memory's '@free', '@mem_eat')."""
    out, at = {}, None
    for line in lines:
        if line.strip() in marks:
            at = line.strip()
            out[at] = []
        elif at is not None:
            out[at].append(line)
    return {k: "\n".join(v) for k, v in out.items()}
