"""What a family's programs printed, read into its figures (named as the catalogue names
them): the one parser of each figure, whoever measured it (the pytest suites over the
shell, measure.sample; a LAVA job's raw output off the board, measure.tagged). Text in,
figures out: nothing here talks to a board. The family records name their readers
(measure.families: `reads`)."""
from __future__ import annotations

import statistics

from boardlab.measure import ownoutput, parsers
from boardlab.measure.boardrun import MeasureError


def free_figures(text: str) -> dict:
    """The figures of `free`'s output, named as the catalogue names them."""
    f = parsers.parse_free(text)
    return {"memory.free_total_kb": f["total"], "memory.free_used_kb": f["used"],
            "memory.free_free_kb": f["free"],
            "memory.free_buffers_kb": f.get("buffers", f.get("buff_cache"))}


# What each group of runs.sh gives, as the catalogue names it (a bisect of one figure runs
# its group); runs.sh has the runs, the parsers below read them.
LMBENCH_FIGURES = {
    "latencies": ("lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us", "lat_udp_us",
                  "lat_tcp_us", "lat_select_100fd_us", "lat_pagefault_us", "lat_mmap_1m_us"),
    "connect": ("lat_connect_us",),
    "file_create_delete": ("lat_fs_create_0k_per_s", "lat_fs_delete_0k_per_s"),
    "context_switch": tuple(f"lat_ctx_{s}k_{n}p_us" for s in (0, 1, 16) for n in (2, 4, 8, 16)),
    "bandwidth": ("bw_pipe_mb_s", "bw_unix_mb_s", "bw_file_reread_mb_s"),
    "tcp_bandwidth": ("bw_tcp_mb_s",),
}
SIZE_VALUE = ("lat_mmap_1m_us", "bw_file_reread_mb_s", "bw_tcp_mb_s")   # 'size value' programs


def _run_figures(label: str, text: str) -> dict:
    """One run's figures: its label (runs.sh's '@lm LABEL') says which program printed text
    (none from a run that printed none: the figure is then missing). The project's own
    programs print '@raw' lines; lmbench its own."""
    if "@raw " in text:
        return ownoutput.figures(label, text)
    try:
        if label.startswith("lat_ctx_"):   # lat_ctx_16k: a ring of 2, 4, 8, 16 processes
            size = int(label[len("lat_ctx_"):-1])
            ring = parsers.parse_lat_ctx(text).get(size, {})
            return {f"lat_ctx_{size}k_{n}p_us": ring[n] for n in (2, 4, 8, 16) if n in ring}
        if label == "lat_fs_0k":
            fs = parsers.parse_lat_fs(text)[0]
            return {"lat_fs_create_0k_per_s": fs["create_per_s"], "lat_fs_delete_0k_per_s": fs["delete_per_s"]}
        if label in SIZE_VALUE:
            return {label: parsers.parse_size_value(text)[1]}
    except (parsers.ParseError, KeyError):
        return {}
    return {k: v for k, v in parsers.parse_lmbench(text).items() if k == label}


def lmbench_figures(text: str, tools: str | None = None) -> dict:
    """The figures of runs.sh's output, named as the catalogue names them: each the median
    of its runs (loopback TCP 5, the 16k ring 3, the others 1: runs.sh says); MeasureError
    for a run that failed or a figure of a group that ran missing (ownoutput.ProgramOutputError
    where the project's programs ran: `tools` families.OWN)."""
    runs = parsers.parse_lmbench_runs(text)
    if runs["failed"]:
        raise MeasureError(f"lmbench: {runs['failed'][0]}")
    values: dict = {}
    for label, outputs in runs["runs"].items():
        for output in outputs:
            for name, v in _run_figures(label, output).items():
                values.setdefault(name, []).append(v)
    lacking = [n for g in runs["groups"] for n in LMBENCH_FIGURES[g] if n not in values]
    if lacking and tools == ownoutput.OWN:
        raise ownoutput.ProgramOutputError(f"{lacking[0]}: the project's program printed no figure (lat_ctx: "
                                 f"none beyond its overhead, left out as lmbench leaves it): "
                                 + " | ".join(text.splitlines()[-3:]))
    if lacking:
        raise MeasureError(f"{lacking[0]} missing in lmbench output: " + " | ".join(text.splitlines()[-3:]))
    return {f"lmbench.{n}": statistics.median(v) for n, v in values.items()}


def jitter_figures(thread: dict) -> dict:
    """The jitter metrics of one cyclictest run (its JSON's thread 0)."""
    hist = thread["histogram"]
    return {"jitter.min_us": thread["min"], "jitter.avg_us": thread["avg"], "jitter.max_us": thread["max"],
            "jitter.p99_us": parsers.percentile_from_histogram(hist, 99, thread.get("overflows", 0)),
            "jitter.p0_1_us": parsers.percentile_from_histogram(hist, 0.1, thread.get("overflows", 0))}



def lmbench_group_of(metric: str) -> str:
    """The group whose run gives `metric` (a catalogue name)."""
    for name, figures in LMBENCH_FIGURES.items():
        if metric.split(".", 1)[-1] in figures:
            return name
    raise ValueError(f"no lmbench group gives {metric}")


def read_memory(lines, tools=None) -> dict:
    """memory's raw output: free's after '@free', mem_eat's after '@mem_eat'."""
    parts = marked(lines, ("@free", "@mem_eat"))
    return {**free_figures(parts.get("@free", "")),
            "memory.mem_eat_kb": parsers.parse_mem_eat(parts.get("@mem_eat", ""))["kb"]}


def read_lmbench(lines, tools=None) -> dict:
    """lmbench's raw output: runs.sh's groups."""
    return lmbench_figures("\n".join(lines), tools)


def read_jitter(lines, tools=None) -> dict:
    """jitter's raw output: cycles.sh's reduction of cyclictest's per-cycle lines ('H us
    count', 'N cycles overflows min max sum')."""
    cycles = parsers.parse_cycles_reduction(lines)
    if "sum" not in cycles or not cycles["cycles"]:
        raise parsers.ParseError("no 'N cycles overflows min max sum' line with cycles")
    return jitter_figures({"min": cycles["min"], "max": cycles["max"],
                           "avg": round(cycles["sum"] / cycles["cycles"], 2),
                           "histogram": cycles["histogram"], "overflows": cycles["overflows"]})


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
