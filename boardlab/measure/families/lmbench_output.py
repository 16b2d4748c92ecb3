"""What lmbench's programs print, and the project's programs in their place (the
@raw lines, measure.ownoutput), read into the family's figures: its runs (runs.sh's
groups and labels), each program's own lines, the median of a label's runs. Pure
functions: text in, figures out, tested on output captured from the virtual boards.
Its results are on stderr."""
from __future__ import annotations

import re
import statistics

from boardlab.measure import ownoutput
from boardlab.measure.boardrun import MeasureError
from boardlab.measure.parsers import ParseError

NAME = "lmbench"

# What each group of runs.sh gives, as the catalogue names it (a bisect of one figure runs
# its group); runs.sh has the runs, the parsers below read them.
GROUPS = {
    "latencies": ("lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us", "lat_udp_us",
                  "lat_tcp_us", "lat_select_100fd_us", "lat_pagefault_us", "lat_mmap_1m_us"),
    "connect": ("lat_connect_us",),
    "file_create_delete": ("lat_fs_create_0k_per_s", "lat_fs_delete_0k_per_s"),
    "context_switch": tuple(f"lat_ctx_{s}k_{n}p_us" for s in (0, 1, 16) for n in (2, 4, 8, 16)),
    "bandwidth": ("bw_pipe_mb_s", "bw_unix_mb_s", "bw_file_reread_mb_s"),
    "tcp_bandwidth": ("bw_tcp_mb_s",),
}
ALONE = "latency:"   # runs.sh's group of one latency's run: latency:LABEL
SIZE_VALUE = ("lat_mmap_1m_us", "bw_file_reread_mb_s", "bw_tcp_mb_s")   # 'size value' programs


LINES = (
    ("lat_syscall_null_us", r"Simple syscall:\s*([\d.]+) microseconds"),
    ("lat_syscall_read_us", r"Simple read:\s*([\d.]+) microseconds"),
    ("lat_proc_fork_us", r"Process fork\+exit:\s*([\d.]+) microseconds"),
    ("lat_proc_exec_us", r"Process fork\+execve:\s*([\d.]+) microseconds"),
    ("lat_pipe_us", r"Pipe latency:\s*([\d.]+) microseconds"),
    ("lat_unix_us", r"AF_UNIX sock stream latency:\s*([\d.]+) microseconds"),
    ("lat_udp_us", r"UDP latency using \S+:\s*([\d.]+) microseconds"),
    ("lat_tcp_us", r"TCP latency using \S+:\s*([\d.]+) microseconds"),
    ("lat_rpc_udp_us", r"RPC/udp latency using \S+:\s*([\d.]+) microseconds"),
    ("lat_rpc_tcp_us", r"RPC/tcp latency using \S+:\s*([\d.]+) microseconds"),
    ("lat_connect_us", r"TCP/IP connection cost to \S+:\s*([\d.]+) microseconds"),
    ("lat_select_100fd_us", r"Select on 100 fd's:\s*([\d.]+) microseconds"),
    ("lat_select_100tcp_us", r"Select on 100 tcp fd's:\s*([\d.]+) microseconds"),
    ("lat_pagefault_us", r"Pagefaults on \S+:\s*([\d.]+) microseconds"),
    ("bw_pipe_mb_s", r"Pipe bandwidth:\s*([\d.]+) MB/sec"),
    ("bw_unix_mb_s", r"AF_UNIX sock stream bandwidth:\s*([\d.]+) MB/sec"),
)


def parse_lines(text: str) -> dict:
    """The 'Name: value unit' lines of lmbench's lat_*/bw_* programs."""
    out = {}
    for name, pattern in LINES:
        m = re.search(pattern, text)
        if m:
            out[name] = float(m.group(1))
    return out


def parse_lat_ctx(text: str) -> dict:
    """lat_ctx: '"size=0k ovr=1.23' then 'N value' lines; -> {size_kb: {nproc: us},
    with the overhead under 'ovr'}."""
    out, size = {}, None
    for line in text.splitlines():
        m = re.match(r'^"size=(\d+)k ovr=([\d.]+)', line.strip())
        if m:
            size = int(m.group(1))
            out[size] = {"ovr": float(m.group(2))}
            continue
        m = re.match(r"^(\d+)\s+([\d.]+)$", line.strip())
        if m and size is not None:
            out[size][int(m.group(1))] = float(m.group(2))
    if not out:
        raise ParseError('no "size=Nk ovr=X block in lat_ctx output')
    return out


def parse_lat_fs(text: str) -> dict:
    """lat_fs: 'SIZEk\tN\tcreated/s\tremoved/s' per file size -> {size_kb: (create, delete)}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"\d+k", parts[0]):
            out[int(parts[0][:-1])] = {"create_per_s": float(parts[2]), "delete_per_s": float(parts[3])}
    if not out:
        raise ParseError("no 'SIZEk N creates/s deletes/s' line in lat_fs output")
    return out


def parse_size_value(text: str) -> tuple[float, float]:
    """Programs printing 'size value' (lat_mmap: MB us; bw_file_rd/bw_tcp: MB MB/s)."""
    for line in reversed(text.splitlines()):
        m = re.match(r"^\s*([\d.]+)\s+([\d.]+)(?:\s+MB/sec)?\s*$", line)
        if m:
            return float(m.group(1)), float(m.group(2))
    raise ParseError("no 'size value' line")


def parse_runs(text: str) -> dict:
    """The output of jobs/testdefs/lmbench/runs.sh: '@lm-group NAME' where a group starts,
    '@lm LABEL' before each run's own output (lmbench's lines, as above), '@lm-failed RC:
    CMD' after a run that failed -> {'groups': [name], 'runs': {label: [output of each
    run]}, 'failed': [what failed]}."""
    out: dict = {"groups": [], "runs": {}, "failed": []}
    current = None
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "@lm-group":
            out["groups"].append(rest.strip())
            current = None
        elif word == "@lm":
            current = []
            out["runs"].setdefault(rest.strip(), []).append(current)
        elif word == "@lm-failed":
            out["failed"].append(rest.strip())
            current = None
        elif current is not None:
            current.append(line)
    out["runs"] = {label: ["\n".join(r) for r in runs] for label, runs in out["runs"].items()}
    return out


def _run_figures(label: str, text: str) -> dict:
    """One run's figures: its label (runs.sh's '@lm LABEL') says which program printed text
    (none from a run that printed none: the figure is then missing). The project's own
    programs print '@raw' lines; lmbench its own."""
    if "@raw " in text:
        return ownoutput.figures(label, text)
    try:
        if label.startswith("lat_ctx_"):   # lat_ctx_16k: a ring of 2, 4, 8, 16 processes
            size = int(label[len("lat_ctx_"):-1])
            ring = parse_lat_ctx(text).get(size, {})
            return {f"lat_ctx_{size}k_{n}p_us": ring[n] for n in (2, 4, 8, 16) if n in ring}
        if label == "lat_fs_0k":
            fs = parse_lat_fs(text)[0]
            return {"lat_fs_create_0k_per_s": fs["create_per_s"], "lat_fs_delete_0k_per_s": fs["delete_per_s"]}
        if label in SIZE_VALUE:
            return {label: parse_size_value(text)[1]}
    except (ParseError, KeyError):
        return {}
    return {k: v for k, v in parse_lines(text).items() if k == label}


def figures(text: str, tools: str | None = None) -> dict:
    """The figures of runs.sh's output, named as the catalogue names them: each the median
    of its runs (loopback TCP 5, the 16k ring 3, the others 1: runs.sh says); MeasureError
    for a run that failed or a figure of a group that ran missing (ownoutput.ProgramOutputError
    where the project's programs ran: `tools` families.OWN)."""
    runs = parse_runs(text)
    if runs["failed"]:
        raise MeasureError(f"{NAME}: {runs['failed'][0]}")
    values: dict = {}
    for label, outputs in runs["runs"].items():
        for output in outputs:
            for name, v in _run_figures(label, output).items():
                values.setdefault(name, []).append(v)
    lacking = [n for g in runs["groups"] for n in figures_of(g) if n not in values]
    if lacking and tools == ownoutput.OWN:
        raise ownoutput.ProgramOutputError(f"{lacking[0]}: the project's program printed no figure (lat_ctx: "
                                 f"none beyond its overhead, left out as lmbench leaves it): "
                                 + " | ".join(text.splitlines()[-3:]))
    if lacking:
        raise MeasureError(f"{lacking[0]} missing in its output: " + " | ".join(text.splitlines()[-3:]))
    return {f"{NAME}.{n}": statistics.median(v) for n, v in values.items()}


def figures_of(group: str) -> tuple:
    """What a group of runs.sh gives: GROUPS', or latency:LABEL's one figure."""
    if group.startswith(ALONE):
        return (group[len(ALONE):],)
    return GROUPS[group]


def run_of(metric: str) -> str:
    """The smallest run of runs.sh that gives `metric`: a latency alone (latency:LABEL),
    else its group (a bisect of one figure runs it)."""
    name = metric.split(".", 1)[-1]
    return ALONE + name if name in GROUPS["latencies"] else group_of(metric)


def group_of(metric: str) -> str:
    """The group whose run gives `metric` (a catalogue name)."""
    for name, figures in GROUPS.items():
        if metric.split(".", 1)[-1] in figures:
            return name
    raise ValueError(f"no group of runs.sh gives {metric}")


def read(lines, tools=None) -> dict:
    """The board-side script's raw output: runs.sh's groups."""
    return figures("\n".join(lines), tools)
