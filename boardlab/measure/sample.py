"""One sample of a board's figures, family by family, named as the catalogue names them:
what `boardlab compare` and the benches take per boot. The same commands as the suites
(testsuites/) in their quick form; each boot goes the real path (power switch, U-Boot,
TFTP, ser2net, the strategy)."""
from __future__ import annotations

import statistics

from boardlab.errors import BoardlabError, KERNEL
from boardlab.measure import families, parsers, target_load, workloads

FAMILIES = families.on_boot()   # the families a boot measures, memory before any workload


def missing_packages(shell) -> dict:
    """{package: why} the board's image lacks (a cross-built image lists them in
    /etc/boardlab-userland; other images have every package the suites use)."""
    out, _, rc = shell.run("cat /etc/boardlab-userland 2>/dev/null")
    manifest = parsers.parse_userland_manifest("\n".join(out)) if rc == 0 else {}
    return {pkg: why for pkg, why in manifest.items() if why}


def measurable(shell, wanted) -> tuple[list, dict]:
    """-> (the families the board's image can measure, {family: why not} for the rest)."""
    missing = missing_packages(shell)
    lacking = {}
    for f in wanted:
        pkg = next((p for p in families.get(f).packages if p in missing), None)
        if pkg:
            lacking[f] = f"its image has no {pkg}: {missing[pkg]}"
    return [f for f in wanted if f not in lacking], lacking


MILESTONES = ("linux_version", "freeing_init", "login", "shell")   # the study's, host arrival


def boot(rec) -> dict:
    """The boot's milestones: host arrival and the board's own time (where the kernel
    stamps its log: in every boot's log, or in none, as Linux 2.4 stamps nothing).
    Raises MeasureError naming the console log when a milestone was not reached."""
    missing = [m for m in MILESTONES if m not in rec.milestones]
    if missing:
        raise MeasureError(f"milestone {missing[0]} not reached; console log {rec.log_path}")
    out = {f"boot_time.{m}": rec.milestones[m] for m in MILESTONES}
    out.update({f"boot_time.guest_{k}": v for k, v in rec.guest_milestones.items()})
    return out


def free(shell) -> dict:
    """`free` right after boot (before any workload)."""
    f = parsers.parse_free("\n".join(shell.run_check("free")))
    return {"memory.free_total_kb": f["total"], "memory.free_used_kb": f["used"],
            "memory.free_free_kb": f["free"],
            "memory.free_buffers_kb": f.get("buffers", f.get("buff_cache"))}


def kernel_memory(rec) -> dict:
    """The kernel's 'Memory: ...k available (...k kernel code, ...)' boot line."""
    text = "\n".join(ln.text for ln in rec.lines)
    return {f"memory.{name}": kb for name, kb in parsers.kernel_memory_metrics(text).items()}


def memory(shell, rec) -> dict:
    """free and the kernel's Memory: line, right after boot (mem_eat, the suite's third
    figure, needs a fresh boot after it: see mem_eat)."""
    return {**free(shell), **kernel_memory(rec)}


def mem_eat(shell) -> dict:
    """How much an application can allocate: mem_eat until malloc fails or the OOM killer
    stops it. Leaves the board without caches: one run per boot."""
    out, _, _ = shell.run("mem_eat > /tmp/mem_eat.log 2>&1; tail -n 3 /tmp/mem_eat.log; "
                          "rm /tmp/mem_eat.log", timeout=300)
    return {"memory.mem_eat_kb": parsers.parse_mem_eat("\n".join(out))["kb"]}


class MeasureError(BoardlabError, RuntimeError):
    """A measurement command failed on the board, or its output lacks a figure."""
    party = KERNEL   # the board is up: what fails on it runs on the kernel under test


def lmbench_runner(shell, quick: bool = True):
    """-> run(cmd): text, an lmbench command on the board (lmbench writes its results to
    stderr; the console carries both); quick: lmbench's short timing loops, for every
    command of the line."""
    def run(cmd, timeout=900):
        out, _, rc = shell.run(f"{workloads.lmbench_line(cmd, quick)} 2>&1", timeout=timeout)
        if rc != 0:
            raise MeasureError(f"{cmd} failed ({rc}): " + " | ".join(out[-3:]))
        return "\n".join(out)
    return run


def _served(lm, prog, *args) -> str:
    """A client/server program: start its server, measure, stop it."""
    return lm(f"{prog} -s; sleep 0.2; {prog} {' '.join(args)} 127.0.0.1; {prog} -S 127.0.0.1")


def _parsed(text, names) -> dict:
    r = parsers.parse_lmbench(text)
    lacking = [n for n in names if n not in r]
    if lacking:
        raise MeasureError(f"{lacking[0]} missing in lmbench output: " + " | ".join(text.splitlines()[-3:]))
    return {n: r[n] for n in names}


def _latencies(lm) -> dict:
    names = LMBENCH_FIGURES["latencies"][:-1]
    r = _parsed("\n".join([
        lm("lat_syscall null"), lm("lat_proc fork"), lm("lat_pipe"), lm("lat_unix"),
        _served(lm, "lat_udp"), _served(lm, "lat_tcp"), lm("lat_select -n 100 file"),
        lm("dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null; lat_pagefault /tmp/lmfile")]),
        names)
    r["lat_mmap_1m_us"] = parsers.parse_size_value(lm("lat_mmap 1m /tmp/lmfile; rm -f /tmp/lmfile"))[1]
    return r


# Loopback TCP's figures are the median of 5 runs: one bw_tcp run in about 10 lands in a
# second mode (59 against 42 MB/s on armmp, each run its own connection), and the median
# passes it by. jobs/testdefs/lmbench does the same.
TCP_RUNS = 5


def _connect(lm) -> dict:
    return {"lat_connect_us": statistics.median(
        _parsed(_served(lm, "lat_connect"), ("lat_connect_us",))["lat_connect_us"] for _ in range(TCP_RUNS))}


def _file_create_delete(lm) -> dict:
    fs = parsers.parse_lat_fs(lm("lat_fs -s 0 /tmp"))[0]
    return {"lat_fs_create_0k_per_s": fs["create_per_s"], "lat_fs_delete_0k_per_s": fs["delete_per_s"]}


# The 16k ring's figures are the median of 3 invocations: about one invocation in 5 draws
# a second value of lat_ctx_16k_2p (70 against 68 us on armmp) and its repetitions share
# it, so only more invocations pass it by (docs/measurement.md). jobs/testdefs/lmbench alike.
CTX_INVOCATIONS = {0: 1, 1: 1, 16: 3}


def _context_switch(lm) -> dict:
    out = {}
    for size, invocations in CTX_INVOCATIONS.items():
        runs = [parsers.parse_lat_ctx(lm(f"lat_ctx -s {size} 2 4 8 16"))[size] for _ in range(invocations)]
        out.update({f"lat_ctx_{size}k_{n}p_us": statistics.median(r[n] for r in runs) for n in (2, 4, 8, 16)})
    return out


def _bandwidth(lm) -> dict:
    r = _parsed(lm("bw_pipe") + "\n" + lm("bw_unix"), ("bw_pipe_mb_s", "bw_unix_mb_s"))
    r["bw_file_reread_mb_s"] = parsers.parse_size_value(lm(
        "dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null; "
        "bw_file_rd 1m io_only /tmp/lmfile; rm -f /tmp/lmfile"))[1]
    return r


def _tcp_bandwidth(lm) -> dict:
    return {"bw_tcp_mb_s": statistics.median(
        parsers.parse_size_value(_served(lm, "bw_tcp", "-m 65536"))[1] for _ in range(TCP_RUNS))}


# The lmbench suite, group by group: each group one test of testsuites/test_lmbench.py,
# a compare's or a bench's boot runs them all, a bisect of one figure runs its group.
# small: skipped on a board with little RAM (it ran out of memory there in the study).
LMBENCH_FIGURES = {   # what each group gives
    "latencies": ("lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us", "lat_udp_us",
                  "lat_tcp_us", "lat_select_100fd_us", "lat_pagefault_us", "lat_mmap_1m_us"),
    "connect": ("lat_connect_us",),
    "file_create_delete": ("lat_fs_create_0k_per_s", "lat_fs_delete_0k_per_s"),
    "context_switch": tuple(f"lat_ctx_{s}k_{n}p_us" for s in (0, 1, 16) for n in (2, 4, 8, 16)),
    "bandwidth": ("bw_pipe_mb_s", "bw_unix_mb_s", "bw_file_reread_mb_s"),
    "tcp_bandwidth": ("bw_tcp_mb_s",),
}
LMBENCH_GROUPS = {   # name: (measure(lm) -> {figure: value}, small)
    "latencies": (_latencies, True), "connect": (_connect, True),
    "file_create_delete": (_file_create_delete, True), "context_switch": (_context_switch, False),
    "bandwidth": (_bandwidth, False), "tcp_bandwidth": (_tcp_bandwidth, False),
}


def lmbench_group(name: str, lm) -> dict:
    """One group's figures, named as the catalogue names them."""
    return {f"lmbench.{k}": v for k, v in LMBENCH_GROUPS[name][0](lm).items()}


def lmbench(shell, small: bool = False, groups=None) -> dict:
    """The lmbench suite's figures (quick timing), every group a board of its RAM runs."""
    lm = lmbench_runner(shell)
    out = {}
    for name, (_, on_small) in LMBENCH_GROUPS.items():
        if (groups is None or name in groups) and (on_small or not small):
            out.update(lmbench_group(name, lm))
    return out


def lmbench_group_of(metric: str) -> str:
    """The group whose run gives `metric` (a catalogue name)."""
    for name, figures in LMBENCH_FIGURES.items():
        if metric.split(".", 1)[-1] in figures:
            return name
    raise ValueError(f"no lmbench group gives {metric}")


def cyclictest_under_load(shell, seconds: int, per_slice: int = 0) -> tuple[dict, list]:
    """The jitter suite's measurement: cyclictest under its load, `seconds` long ->
    (cyclictest's JSON, thread 0, with the histogram and its overflows made from every
    cycle's latency; the latency over time, the max of every per_slice cycles as (s, us),
    when per_slice). The one definition: the suite, compare and the benches take it from here."""
    shell.run_check(target_load.install_command("load.sh"))
    shell.run_check(target_load.install_command("cycles.sh"))
    try:
        out, _, _ = shell.run(target_load.under_load(workloads.cyclictest(
            seconds, "--json=/tmp/cyc.json > /tmp/cyc.v 2>/dev/null")), timeout=seconds * 20 + 60)
    finally:   # stopped already, unless the run was interrupted
        shell.run(target_load.stop_load(), timeout=30)
    if out[-1] != "rc=0":
        raise RuntimeError(f"cyclictest failed: {out[-3:]}")
    t = parsers.parse_cyclictest_json("\n".join(shell.run_check("cat /tmp/cyc.json")))["thread"]["0"]
    loops = workloads.cyclictest_loops(seconds)
    if t["cycles"] < loops * 0.99:
        raise RuntimeError(f"cyclictest ran {t['cycles']} of {loops} cycles")
    # reduced on the board, the load stopped: a few hundred lines over the console, not 60000
    cycles = parsers.parse_cycles_reduction(
        shell.run_check(target_load.cycles_reduction("/tmp/cyc.v", per_slice), timeout=seconds * 2 + 60))
    shell.run("rm -f /tmp/cyc.v")
    if cycles["cycles"] != t["cycles"]:   # its main thread fell behind: a ring of 16384 values overrun
        raise RuntimeError(f"cyclictest printed {cycles['cycles']} of its {t['cycles']} cycles' latencies")
    t["histogram"], t["overflows"] = cycles["histogram"], cycles["overflows"]
    series = [(n * workloads.CYCLICTEST_INTERVAL_US / 1e6, v) for n, v in cycles["slices"]]
    return t, series


def jitter_figures(thread: dict) -> dict:
    """The jitter metrics of one cyclictest run (its JSON's thread 0)."""
    hist = thread["histogram"]
    return {"jitter.min_us": thread["min"], "jitter.avg_us": thread["avg"], "jitter.max_us": thread["max"],
            "jitter.p99_us": parsers.percentile_from_histogram(hist, 99, thread.get("overflows", 0)),
            "jitter.p0_1_us": parsers.percentile_from_histogram(hist, 0.1, thread.get("overflows", 0))}


def jitter(shell, seconds: int) -> tuple[dict, dict]:
    """The jitter suite's cyclictest under its load, `seconds` long -> (figures, histogram)."""
    t, _ = cyclictest_under_load(shell, seconds)
    return jitter_figures(t), t["histogram"]


# a family's measurement on a boot: measure_<family>(shell, rec, metric, jitter_s, small)
def measure_boot_time(shell, rec, **_) -> dict:
    return boot(rec)


def measure_memory(shell, rec, **_) -> dict:
    return memory(shell, rec)


def measure_lmbench(shell, rec, metric=None, small=False, **_) -> dict:
    return lmbench(shell, small, groups=[lmbench_group_of(metric)] if metric else None)


def measure_jitter(shell, rec, jitter_s=workloads.JITTER_RUN_S, **_) -> dict:
    return jitter(shell, jitter_s)[0]


def family(name: str, shell, rec, metric: str | None = None, jitter_s: int = workloads.JITTER_RUN_S,
           small: bool = False) -> dict:
    """One family's figures on the running boot (rec: its BootRecord); metric: the one
    figure wanted, when a cheaper run gives it (its lmbench group)."""
    if not families.get(name).on_boot:
        raise ValueError(f"no measurement of family {name!r} on a boot (known: {', '.join(FAMILIES)})")
    return globals()[f"measure_{name}"](shell, rec, metric=metric, jitter_s=jitter_s, small=small)


def one_sample(strategy, shell_driver, families=FAMILIES,
               jitter_s: int = workloads.JITTER_RUN_S) -> tuple[dict, dict]:
    """A fresh boot of the selected kernel and its figures -> (figures, extras: the boot
    record and the jitter histogram). Memory is read before any workload."""
    rec = strategy.reboot()
    figures, extras = {}, {"boot": rec}
    sh = shell_driver()
    small = workloads.small_board(strategy.board.ram_mb)
    for name in (f for f in FAMILIES if f in families):   # memory first: before any workload
        if name == "jitter":
            j, extras["histogram"] = jitter(sh, jitter_s)
            figures.update(j)
        else:
            figures.update(family(name, sh, rec, small=small))
    return figures, extras
