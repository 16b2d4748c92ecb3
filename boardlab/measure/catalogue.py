"""Every metric the lab measures, in one place: its suite and name, unit, which way is
better, what it is timed by, whether the virtual board's deterministic clock makes it
exact, and the smallest change worth reporting (its floor). The suites, the gate, the
study reference, the LAVA side and the report read it; tests check that the LAVA test
definitions report exactly its names.

Floors, and why (the 2005 study's smallest differences: boot +6 %, free memory -2 %,
lmbench +55 % and more; the noise bench/noise.py measured on the deterministic clock):
- boot milestones 1 %: a sixth of the study's smallest boot difference; the guest-time
  milestones vary by 0.006 % from boot to boot, host-arrival ones by ~8 % (those are
  decided by a rank test, and only against the same host).
- sizes 0.5 %: vmlinux and uImage are exact; half a percent is ~25 kB of a 5 MB uImage,
  less than any config change the study compared.
- memory 4 kB: one page; memory figures are identical from boot to boot, but free's used
  and free, 64 kB: they carry the kernel's worker threads, and on qemu-ppc one more
  kworker is up on some boots (+28 or +32 kB used: 3184 kB on 7 of 12 boots, 3212 on 1,
  3216 on 4, host vm-39331bb95fb08427, 2026-11-29; armmp: 6288 kB on 8 of 8), so two
  such threads are below the floor. The study's smallest memory change was 2 % of free.
- lmbench 3 %: the figures vary by 0.04 % (median) on the deterministic clock; loopback
  TCP (bw_tcp) has a second mode (1 run in 10 reads 59 against 42 MB/s on armmp), connect
  follows it, and lat_ctx has single runs 3-15 % off: those are decided by a rank test.
- jitter 10 % (p99, max, avg), 5 % (the 0.1th percentile): cyclictest's timer swept
  against the kernel's tick (workloads.CYCLICTEST_INTERVAL_US), avg and p99 repeat to 0.2
  and 1.8 % on the deterministic clock; max is one worst path (CV 8-9 % per 10 s run,
  decided from 60 s a boot); always a rank test. min is information only.
- build times 10 %: this host's own, noisy (a rank test).
- hackbench 5 %: one run's time (rt-tests' hackbench, 160 processes over sockets) on the
  board's clock. No baseline is measured yet; the run is the scheduler's order of 160
  tasks, which the harness's input timing moves as it moves lat_ctx's ring (up to 15 %
  in single runs), so it is noisy, decided by a rank test; 5 % is above lmbench's 3 % for
  that, and still a sixth of the smallest change the study's lmbench tables showed."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from boardlab.errors import InputError
from boardlab.measure.console import MILESTONE_LABELS

HOST, GUEST, NONE = "host", "guest", "none"   # timed by: boardlab.measure.clocks resolves 'guest'


@dataclass(frozen=True)
class MetricSpec:
    key: str                  # suite.name, as results.json and the baselines name it
    unit: str
    direction: str            # lower or higher is better
    timed_by: str             # host, guest (the board's clock), none (a size or amount)
    floor_rel: float          # the smallest change worth reporting, relative ...
    floor_abs: float = 0.0    # ... or absolute (in unit), whichever is larger
    exact: bool = True        # may repeat to well under the floor (on a deterministic clock);
    #                           whether a pair of figures is judged so, the samples must show
    #                           (boardlab.judge.decide.exactness)
    tail: bool = False        # a worst case: one run far beyond the baseline's worst is the answer
    lava: bool = True         # LAVA's test definitions (or its log) report it too
    what: str = ""
    not_judged: str = ""      # why the figure is information only (recorded, never judged)

    @property
    def suite(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    def floor(self, value: float) -> float:
        return max(self.floor_abs, self.floor_rel * abs(value))


def _boot():
    labels = {n: MILESTONE_LABELS[n] for n in ("linux_version", "freeing_init", "login", "shell")}
    out = [MetricSpec(f"boot_time.{n}", "s", "lower", HOST, 0.01, exact=False,
                      what=f"{label}, s from the load command (host arrival)")
           for n, label in labels.items()]
    out += [MetricSpec(f"boot_time.guest_{n}", "s", "lower", GUEST, 0.01, lava=False,
                       what=f"{labels[n]}, s from the kernel's start (the board's clock)")
            for n in ("freeing_init", "login")]
    return out


def _build():
    out = [MetricSpec(f"build.{n}_s", "s", "lower", HOST, 0.10, exact=False, lava=False,
                      what=f"kernel build, {n} time") for n in ("real", "user", "sys")]
    sizes = {"uimage_data_bytes": "compressed kernel (uImage data)",
             "uncompressed_bytes": "uncompressed kernel image",
             "vmlinux_text_bytes": "vmlinux text", "vmlinux_data_bytes": "vmlinux data",
             "vmlinux_bss_bytes": "vmlinux bss", "vmlinux_dec_bytes": "vmlinux total (size)"}
    out += [MetricSpec(f"build.{n}", "bytes", "lower", NONE, 0.005, lava=False, what=w)
            for n, w in sizes.items()]
    return out


def _memory():
    page, worker = 4.0, 64.0   # free's used and free move with the kernel's worker threads
    kb = [("free_total_kb", "higher", True, page, "free: total"),
          ("free_used_kb", "lower", True, worker, "free: used"),
          ("free_free_kb", "higher", True, worker, "free: free"),
          # not under LAVA: its test overlay, unpacked in the ramdisk, fills the page cache
          ("free_buffers_kb", "lower", False, page, "free: buffers (buff/cache)"),
          ("kernel_available_kb", "higher", False, page, "boot line Memory: available"),
          ("kernel_code_kb", "lower", False, page, "boot line Memory: kernel code"),
          ("kernel_init_kb", "lower", False, page, "boot line Memory: init"),
          ("kernel_code_data_kb", "lower", False, page, "boot line Memory: code + data"),
          ("mem_eat_kb", "higher", True, page, "what an application can allocate (mem_eat)")]
    return [MetricSpec(f"memory.{n}", "kB", d, NONE, 0.0, floor, lava=lava, what=w)
            for n, d, lava, floor, w in kb]


def _lmbench():
    noisy = {"lat_connect_us", "bw_tcp_mb_s"}   # loopback TCP: a run in 10 lands in a second mode
    # lat_ctx: a ring of processes passing a token; on the deterministic clock its figures
    # mostly repeat to 0.4 %, but single runs jump: armmp 16k/2p 70.44 against 68.23-68.49 us
    # (+3 %, a CI run of 2026-11-23), rt-armmp 0k/16p 111.62 against 96.5-96.7 us (+15 %).
    # Likely where the timer tick falls in the ring, which the harness's input timing moves.
    # Judged from samples by the rank test, never one run against the floor.
    noisy |= {f"lat_ctx_{s}k_{p}p_us" for s in (0, 1, 16) for p in (2, 4, 8, 16)}
    lat = ["lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us", "lat_udp_us",
           "lat_tcp_us", "lat_connect_us", "lat_select_100fd_us", "lat_pagefault_us",
           "lat_mmap_1m_us"]
    lat += [f"lat_ctx_{s}k_{p}p_us" for s in (0, 1, 16) for p in (2, 4, 8, 16)]
    out = [MetricSpec(f"lmbench.{n}", "us", "lower", GUEST, 0.03, exact=n not in noisy,
                      what=n[:-3].replace("_", " ")) for n in lat]
    out += [MetricSpec(f"lmbench.lat_fs_{op}_0k_per_s", "1/s", "higher", GUEST, 0.03,
                       what=f"lat_fs: 0k files {op}d per second") for op in ("create", "delete")]
    out += [MetricSpec(f"lmbench.{n}", "MB/s", "higher", GUEST, 0.03, exact=n not in noisy,
                       what=n[:-5].replace("_", " ")) for n in
            ("bw_pipe_mb_s", "bw_unix_mb_s", "bw_tcp_mb_s", "bw_file_reread_mb_s")]
    return out


# min is a single early wake-up (37-56 us against 66-67, 1-3 cycles in 10 000, in ~40 % of
# runs): no number of runs decides it at any useful floor. The lower tail is judged by
# the 0.1th percentile (67 us in 67 of 68 runs); min is kept as information.
MIN_NOT_JUDGED = ("information only: the single shortest wake-up comes and goes from run to run "
                  "(jitter.p0_1_us, the 0.1th percentile, is judged instead)")


def _jitter():
    what = {"min_us": "minimum", "p0_1_us": "0.1th percentile", "avg_us": "average",
            "max_us": "maximum", "p99_us": "99th percentile"}
    return [MetricSpec(f"jitter.{n}", "us", "lower", GUEST, floor, exact=False, tail=n == "max_us",
                       what=f"cyclictest under load: {what[n]} latency",
                       not_judged=MIN_NOT_JUDGED if n == "min_us" else "")
            for n, floor in (("min_us", 0.05), ("p0_1_us", 0.05), ("avg_us", 0.10), ("max_us", 0.10),
                             ("p99_us", 0.10))]


def _hackbench():
    return [MetricSpec("hackbench.time_s", "s", "lower", GUEST, 0.05, exact=False,
                       what="hackbench: 4 groups of 40 processes, 100 messages, its time")]


# the families, their clocks and order: boardlab.measure.families (each metric's suite is one)
METRICS: dict[str, MetricSpec] = {m.key: m for m in _boot() + _build() + _memory() + _lmbench() + _jitter()
                                  + _hackbench()}


# A harness whose figures carry something of its own gets a wider floor for them. LAVA
# unpacks its test overlay (test definitions, the job's parameters) into the ramdisk: its
# memory figures move with the job, 8 to 68 kB between two renderings of the same job
# (armmp, 2026-11-23), so a quarter MB; still a quarter of the 1 % memory change.
HARNESS_FLOOR_ABS = {"lava": {"memory": 256.0}}


def for_harness(spec: MetricSpec, harness: str | None) -> MetricSpec:
    """The metric as a harness measures it (its floor widened where HARNESS_FLOOR_ABS says)."""
    wider = HARNESS_FLOOR_ABS.get(harness or "", {}).get(spec.suite)
    return replace(spec, floor_abs=max(spec.floor_abs, wider)) if wider else spec


class UnknownMetric(InputError, KeyError):
    __str__ = Exception.__str__     # KeyError's would quote the whole line


def spec(key: str) -> MetricSpec:
    try:
        return METRICS[key]
    except KeyError:
        raise UnknownMetric(f"metric {key!r} is not in the catalogue (boardlab/measure/catalogue.py): "
                            f"add it there with its unit, direction and floor") from None


class BadFigure(InputError):
    """A figure no verdict can use: names where it came from and the metric."""


def usable(key: str, values, where: str, reference: bool = False) -> list[float]:
    """The figures of metric key as floats, or BadFigure saying where (the file and the
    metric there): none at all, one that is no number, NaN or infinite (each would pass a
    comparison as 'same' or make the floor infinite). reference: they are what others are
    judged against (a baseline, side A), where a zero of a metric whose floor is relative
    only would make the floor 0 and every change infinitely many percent."""
    if not isinstance(values, (list, tuple)):
        raise BadFigure(f"{where}: {values!r} is not a list of figures")
    if not values:
        raise BadFigure(f"{where}: no figures (an empty list): a metric needs one at least")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BadFigure(f"{where}: {v!r} is not a number")
        if not math.isfinite(v):
            raise BadFigure(f"{where}: {v} is no figure (a measurement that failed?)")
    metric = METRICS.get(key)
    if reference and metric and metric.floor_rel > 0 and metric.floor_abs == 0 and 0 in values:
        raise BadFigure(f"{where}: 0 {metric.unit} as a baseline: the floor is {metric.floor_rel:.1%} "
                        f"of it, so every change would be infinitely large")
    return [float(v) for v in values]


def of_suite(suite: str, lava: bool | None = None) -> list[MetricSpec]:
    return [m for m in METRICS.values() if m.suite == suite and (lava is None or m.lava == lava)]


# A boot's spans (boardlab.measure.phases: initcall.<fn>, phase.<name>, script.<name>) are
# named by the kernel, not listed here; one rule gives each its spec. Floor 1 ms or 1 %:
# an initcall's duration is the kernel's own count on the board's clock, which the
# deterministic clock repeats (bench/initcall_detection.py measures false alarms and the
# detection of a 2 ms delay); 1 % is the milestones' floor, for the long spans. Spans
# timed by the console's arrival (the old kernels) are the host's: noisy, a rank test.
SPAN_FLOOR_REL, SPAN_FLOOR_ABS = 0.01, 0.001
SPAN_KINDS = ("initcall", "phase", "script")


def span(key: str, source: str = "printk") -> MetricSpec:
    """The spec of a boot span, timed as its source says (phases.SOURCES)."""
    if key.split(".", 1)[0] not in SPAN_KINDS:
        raise UnknownMetric(f"{key!r} is no boot span ({', '.join(k + '.*' for k in SPAN_KINDS)})")
    console = source == "console"
    return MetricSpec(key, "s", "lower", HOST if console else GUEST, SPAN_FLOOR_REL, SPAN_FLOOR_ABS,
                      exact=not console, lava=False, what=f"boot span ({source})")
