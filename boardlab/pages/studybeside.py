"""The study's own 2.4.25 -> 2.6.11.7 changes beside a pair of today's kernels: what
moved then on the real PowerPC boards, and what moves now. A virtual e500mc is not an
MPC860: the table compares changes (signs and sizes), never absolute figures, and each
column says its boards and its clock."""
from __future__ import annotations

from pathlib import Path

from boardlab.judge import reference

STUDY_COLUMN = ("the study, 2.4.25 -> 2.6.11.7: TQM860L (MPC860T, 50 MHz) and Sandpoint (MPC8240, "
                "132 MHz), real boards, their own time (lmbench 3.0-a4, its deltas pooled over both)")
# its lmbench deltas by what they measure: the relative change of the 2.6 result, positive
# slower (the study's reading); our rates (files a second) are the inverse of its latencies
_LATENCY = {"lat_pipe_us": "pipe", "lat_unix_us": "af_unix", "lat_udp_us": "udp", "lat_tcp_us": "tcp",
            "lat_connect_us": "tcp_connect"}
_FS_VM = {"lat_fs_create_0k_per_s": "file_create", "lat_fs_delete_0k_per_s": "file_delete",
          "lat_mmap_1m_us": "mmap", "lat_pagefault_us": "page_fault", "lat_select_100fd_us": "select_100fd"}
_BANDWIDTH = {"bw_pipe_mb_s": "pipe", "bw_unix_mb_s": "af_unix", "bw_tcp_mb_s": "tcp",
              "bw_file_reread_mb_s": "file_reread"}
_BOARD_WORDS = {"mpc860": "MPC860T", "mpc8240": "MPC8240"}


def _pct(v: float) -> str:
    return f"{v:+.0f} %"


def study_changes(path: Path = reference.REFERENCE) -> dict[str, str]:
    """{catalogue key: the study's 2.4.25 -> 2.6.11.7 change, in words}: per board where it
    measured each board (build, boot, memory), pooled where it reported so (lmbench)."""
    data = reference._load_reference(path)
    out: dict[str, list[str]] = {}
    for board, kernels in data["results"].items():
        if board not in data["boards"] or not {"2.4.25", "2.6.11.7"} <= set(kernels):
            continue
        old, new = (reference.study_metrics(kernels[k]) for k in ("2.4.25", "2.6.11.7"))
        for key in sorted(set(old) & set(new)):
            if old[key]:
                out.setdefault(key, []).append(f"{board} {_pct(100 * (new[key] - old[key]) / old[key])}")
    lm = data["results"].get("lmbench_deltas_2_4_to_2_6", {})
    ctx = lm.get("context_switch_pct", {})
    words = {}
    if ctx:
        for key in _lmbench_keys("lat_ctx_"):
            words[key] = f"context switch +{ctx['mean']} % (mean; {ctx['min']} .. {ctx['max']} %)"
    for key, name in _LATENCY.items():
        if name in lm.get("latency_pct", {}):
            words[f"lmbench.{key}"] = f"latency +{lm['latency_pct'][name]} %"
    for key, name in _FS_VM.items():
        if name in lm.get("fs_vm_latency_pct", {}):
            pct = lm["fs_vm_latency_pct"][name]
            words[f"lmbench.{key}"] = f"latency +{pct} %" + (
                f" (as files a second: {_pct(100 / (1 + pct / 100) - 100)})" if key.endswith("_per_s") else "")
    for key, name in _BANDWIDTH.items():
        said = lm.get("bandwidth", {}).get(name)
        if isinstance(said, dict):
            words[f"lmbench.{key}"] = "; ".join(f"{_BOARD_WORDS.get(b, b)} {w}" for b, w in said.items())
        elif said:
            words[f"lmbench.{key}"] = str(said)
    return {**{k: ", ".join(v) for k, v in out.items()}, **words}


def _lmbench_keys(prefix: str) -> list[str]:
    from boardlab.measure import catalogue
    return [k for k in catalogue.METRICS if k.startswith(f"lmbench.{prefix}")]


def table(rows, board: str, pair: str, clock_of) -> str:
    """Every metric of the pair the study also measured: this pair's change and verdict
    beside the study's. rows: compare's; clock_of(spec): a row's clock, in words."""
    study = study_changes()
    out = ["| metric | " + f"{board}, {pair} (change, verdict, clock) | {STUDY_COLUMN} |", "|---|---|---|"]
    for r in rows:
        if r.spec.key not in study:
            continue
        now = (f"{r.cmp.delta_pct:+.1f} %, {r.cmp.outcome}, {clock_of(r.spec)}" if r.cmp is not None
               else f"not judged: {r.note}")
        out.append(f"| {r.spec.key} | {now} | {study[r.spec.key]} |")
    return "\n".join(out) + "\n"
