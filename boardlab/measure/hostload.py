"""What the lab host's CPUs did over a span (/proc/stat): the share of them busy, the share
the hypervisor gave another machine (steal), their CPU-seconds. A virtual board's
realtime figures follow it; a real board's own clock does not."""
from __future__ import annotations

import os
from pathlib import Path

IDLE, IOWAIT, STEAL = 3, 4, 7   # columns of the cpu line after its name


def cpu_ticks() -> list[int]:
    """The host's CPU time so far, all CPUs, in ticks: user nice system idle iowait irq
    softirq steal."""
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def share(before: list[int], after: list[int]) -> dict:
    """Over the span between two cpu_ticks(): busy and stolen as % of all the CPUs' time,
    the CPU-seconds spent busy (stolen included: the work waited for them), and the load
    average at its end."""
    d = [y - x for x, y in zip(before, after)]
    total = sum(d) or 1
    busy = total - d[IDLE] - d[IOWAIT]
    return {"busy_pct": round(100 * busy / total, 1), "steal_pct": round(100 * d[STEAL] / total, 1),
            "busy_cpu_s": round(busy / os.sysconf("SC_CLK_TCK"), 1), "load1": round(os.getloadavg()[0], 2)}
