"""One sample of a board's figures, family by family, named as the catalogue names them:
what `boardlab compare` and the benches take per boot. The same commands as the suites
(testsuites/) in their quick form; each boot goes the real path (power switch, U-Boot,
TFTP, ser2net, the strategy)."""
from __future__ import annotations

from boardlab.measure import catalogue, parsers, target_load, workloads

FAMILIES = tuple(f for f in catalogue.FAMILIES if f != "build")   # the families a boot measures
FAMILY_PACKAGE = {"lmbench": "lmbench", "jitter": "rt-tests"}   # what a family runs on the board


def missing_packages(shell) -> dict:
    """{package: why} the board's image lacks (a cross-built image lists them in
    /etc/boardlab-userland; other images have every package the suites use)."""
    out, _, rc = shell.run("cat /etc/boardlab-userland 2>/dev/null")
    manifest = parsers.parse_userland_manifest("\n".join(out)) if rc == 0 else {}
    return {pkg: why for pkg, why in manifest.items() if why}


def measurable(shell, families) -> tuple[list, dict]:
    """-> (the families the board's image can measure, {family: why not} for the rest)."""
    missing = missing_packages(shell)
    lacking = {f: f"its image has no {FAMILY_PACKAGE[f]}: {missing[FAMILY_PACKAGE[f]]}"
               for f in families if FAMILY_PACKAGE.get(f) in missing}
    return [f for f in families if f not in lacking], lacking


def boot(rec) -> dict:
    """The boot's milestones: host arrival and the board's own time."""
    out = {f"boot_time.{k}": v for k, v in rec.milestones.items() if k != "starting_kernel"}
    out.update({f"boot_time.guest_{k}": v for k, v in rec.guest_milestones.items()})
    return out


def memory(shell, rec) -> dict:
    """free and the kernel's Memory: line, right after boot (no mem_eat: it would need a
    fresh boot after it)."""
    free = parsers.parse_free("\n".join(shell.run_check("free")))
    kernel = parsers.kernel_memory_metrics("\n".join(ln.text for ln in rec.lines))
    return {"memory.free_total_kb": free["total"], "memory.free_used_kb": free["used"],
            "memory.free_free_kb": free["free"],
            **{f"memory.{name}": kb for name, kb in kernel.items()}}


def _lm(shell, cmd) -> str:
    out, _, rc = shell.run(f"{workloads.lmbench_env()}{cmd} 2>&1", timeout=900)
    if rc != 0:
        raise RuntimeError(f"{cmd} failed ({rc}): {out[-3:]}")
    return "\n".join(out)


# lmbench figures one command gives alone: a bisect of one of them runs only that
LMBENCH_ONE = {"lmbench.lat_syscall_null_us": "lat_syscall null", "lmbench.lat_proc_fork_us":
               "lat_proc fork", "lmbench.lat_pipe_us": "lat_pipe", "lmbench.lat_unix_us": "lat_unix",
               "lmbench.bw_pipe_mb_s": "bw_pipe", "lmbench.bw_unix_mb_s": "bw_unix"}


def lmbench(shell) -> dict:
    """The quick suite's latencies and pipe/unix bandwidth."""
    def lm(cmd):
        return _lm(shell, cmd)
    r = parsers.parse_lmbench("\n".join([
        lm("lat_syscall null"), lm("lat_proc fork"), lm("lat_pipe"), lm("lat_unix"),
        lm("lat_udp -s; sleep 0.2; lat_udp 127.0.0.1; lat_udp -S 127.0.0.1"),
        lm("lat_select -n 100 file"), lm("bw_pipe"), lm("bw_unix")]))
    shell.run("dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null")
    r["lat_pagefault_us"] = parsers.parse_lmbench(lm("lat_pagefault /tmp/lmfile"))["lat_pagefault_us"]
    r["lat_mmap_1m_us"] = parsers.parse_size_value(lm("lat_mmap 1m /tmp/lmfile"))[1]
    ctx = parsers.parse_lat_ctx(lm("lat_ctx -s 0 2 8"))[0]
    r.update({"lat_ctx_0k_2p_us": ctx[2], "lat_ctx_0k_8p_us": ctx[8]})
    return {f"lmbench.{k}": v for k, v in r.items()}


def cyclictest_under_load(shell, seconds: int, per_slice: int = 0) -> tuple[dict, list]:
    """The jitter suite's measurement: cyclictest under its load, `seconds` long ->
    (cyclictest's JSON, thread 0; the latency over time, the max of every per_slice
    cycles as (s, us), when per_slice). The one definition: the suite, compare and the
    benches take it from here."""
    shell.run_check(target_load.install_command())
    try:
        out, _, _ = shell.run(target_load.under_load(workloads.cyclictest(
            seconds, "--json=/tmp/cyc.json > /tmp/cyc.v 2>/dev/null")), timeout=seconds * 20 + 60)
    finally:   # stopped already, unless the run was interrupted
        shell.run(f". {target_load.ON_BOARD} && load_stop", timeout=30)
    if out[-1] != "rc=0":
        raise RuntimeError(f"cyclictest failed: {out[-3:]}")
    t = parsers.parse_cyclictest_json("\n".join(shell.run_check("cat /tmp/cyc.json")))["thread"]["0"]
    loops = workloads.cyclictest_loops(seconds)
    if t["cycles"] < loops * 0.99:
        raise RuntimeError(f"cyclictest ran {t['cycles']} of {loops} cycles")
    series = []
    if per_slice:   # reduced on the board: the max of each slice
        series_out = shell.run_check(
            f"awk -F: 'NF==3 && $2 ~ /^ *[0-9]+$/ {{n++; if ($3+0 > m) m = $3+0; "
            f"if (n % {per_slice} == 0) {{ print n, m; m = 0 }} }}' /tmp/cyc.v")
        series = [(int(n) * workloads.CYCLICTEST_INTERVAL_US / 1e6, int(v))
                  for n, v in (ln.split() for ln in series_out)]
    shell.run("rm -f /tmp/cyc.v")
    return t, series


def jitter_figures(thread: dict) -> dict:
    """The jitter metrics of one cyclictest run (its JSON's thread 0)."""
    hist = thread["histogram"]
    return {"jitter.min_us": thread["min"], "jitter.avg_us": thread["avg"], "jitter.max_us": thread["max"],
            "jitter.p99_us": parsers.percentile_from_histogram(hist, 99),
            "jitter.p0_1_us": parsers.percentile_from_histogram(hist, 0.1)}


def jitter(shell, seconds: int) -> tuple[dict, dict]:
    """The jitter suite's cyclictest under its load, `seconds` long -> (figures, histogram)."""
    t, _ = cyclictest_under_load(shell, seconds)
    return jitter_figures(t), t["histogram"]


def family(name: str, shell, rec, metric: str | None = None, jitter_s: int = 5) -> dict:
    """One family's figures on the running boot (rec: its BootRecord); metric: the one
    figure wanted, when a cheaper command gives it alone."""
    if name == "boot_time":
        return boot(rec)
    if name == "memory":
        return memory(shell, rec)
    if name == "lmbench" and metric in LMBENCH_ONE:
        return {f"lmbench.{k}": v for k, v in parsers.parse_lmbench(_lm(shell, LMBENCH_ONE[metric])).items()}
    if name == "lmbench":
        return lmbench(shell)
    if name == "jitter":
        return jitter(shell, jitter_s)[0]
    raise ValueError(f"no measurement of family {name!r} on a boot (known: {', '.join(FAMILIES)})")


def one_sample(strategy, shell_driver, families=FAMILIES, jitter_s: int = 5) -> tuple[dict, dict]:
    """A fresh boot of the selected kernel and its figures -> (figures, extras: the boot
    record and the jitter histogram). Memory is read before any workload."""
    rec = strategy.reboot()
    figures, extras = {}, {"boot": rec}
    if "boot_time" in families:
        figures.update(boot(rec))
    sh = shell_driver()
    if "memory" in families:
        figures.update(memory(sh, rec))
    if "lmbench" in families:
        figures.update(lmbench(sh))
    if "jitter" in families:
        j, extras["histogram"] = jitter(sh, jitter_s)
        figures.update(j)
    return figures, extras
