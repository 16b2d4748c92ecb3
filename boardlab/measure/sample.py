"""One sample of a board's figures, family by family, named as the catalogue names them:
what `boardlab compare` and the benches take per boot. The same commands as the suites
(testsuites/) in their quick form; each boot goes the real path (power switch, U-Boot,
TFTP, ser2net, the strategy)."""
from __future__ import annotations

from boardlab.measure import families, parsers, target_load, workloads
from boardlab.measure.readings import free_figures, jitter_figures, lmbench_figures, lmbench_group_of
from boardlab.measure.boardrun import MeasureError, failed_run

FAMILIES = families.on_boot()   # the families a boot measures, memory before any workload


def missing_packages(shell) -> dict:
    """{package: why} the board's image lacks (a cross-built image lists them in
    /etc/boardlab-userland; other images have every package the suites use)."""
    out, _, rc = shell.run("cat /etc/boardlab-userland 2>/dev/null")
    manifest = parsers.parse_userland_manifest("\n".join(out)) if rc == 0 else {}
    return {pkg: why for pkg, why in manifest.items() if why}


def why_not_measurable(shell, family: str, tools: str | None, missing: dict | None = None) -> str | None:
    """Why the board's image cannot measure `family` with the programs of `tools`, or None:
    Debian's need their packages (missing: missing_packages, read once), the project's
    their binary in families.OWN_BIN."""
    if tools == families.OWN:
        _, _, rc = shell.run(f"test -x {families.OWN_BIN}/blmeasure")
        return None if rc == 0 else f"its image has no {families.OWN_BIN}/blmeasure (the project's programs)"
    missing = missing_packages(shell) if missing is None else missing
    pkg = next((p for p in families.get(family).packages if p in missing), None)
    return f"its image has no {pkg}: {missing[pkg]}" if pkg else None


def measurable(shell, wanted, isa: str = "armhf", tools: str | None = None) -> tuple[list, dict]:
    """-> (the families the board's image can measure, {family: why not} for the rest),
    each with its set of programs for the board's isa (or `tools`)."""
    missing = missing_packages(shell)
    lacking = {}
    for f in wanted:
        why = why_not_measurable(shell, f, families.tool_set(f, isa, tools), missing)
        if why:
            lacking[f] = why
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
    return free_figures("\n".join(shell.run_check("free")))


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


def lmbench_runner(shell, quick: bool = True, small: bool = False, tools: str | None = None):
    """-> run(*groups): text, lmbench's groups run on the board by the board-side script LAVA
    runs too (jobs/testdefs/lmbench/runs.sh, written to the board here); quick: lmbench's
    short timing loops, for every command of them; tools: whose programs (families.DEBIAN,
    the default, or OWN: the project's, target/measure/)."""
    for cmd in target_load.install_commands("lmbench/runs.sh"):
        shell.run_check(cmd)

    def run(*groups, timeout=3600):
        out, _, rc = shell.run(target_load.lmbench_groups(groups, quick, small, tools), timeout=timeout)
        if rc != 0:
            raise failed_run(f"lmbench {' '.join(groups)}", rc, out)
        return "\n".join(out)
    run.tools = tools
    return run


def lmbench_group(name: str, lm) -> dict:
    """One group's figures, named as the catalogue names them."""
    return lmbench_figures(lm(name), getattr(lm, "tools", None))


def lmbench(shell, small: bool = False, groups=None, tools: str | None = None) -> dict:
    """The lmbench suite's figures (quick timing), every group a board of its RAM runs
    (runs.sh leaves the large ones out on a small board)."""
    return lmbench_figures(lmbench_runner(shell, small=small, tools=tools)(*(groups or ())), tools)


def cyclictest_under_load(shell, seconds: int, per_slice: int = 0, tools: str | None = None) -> tuple[dict, list]:
    """The jitter suite's measurement: cyclictest under its load, `seconds` long ->
    (cyclictest's JSON, thread 0, with the histogram and its overflows made from every
    cycle's latency; the latency over time, the max of every per_slice cycles as (s, us),
    when per_slice). The one definition: the suite, compare and the benches take it from here."""
    shell.run_check(target_load.install_command("load.sh"))
    shell.run_check(target_load.install_command("cycles.sh"))
    try:
        out, _, _ = shell.run(target_load.under_load(target_load.with_tools(workloads.cyclictest(
            seconds, "--json=/tmp/cyc.json > /tmp/cyc.v 2>/dev/null"), tools)), timeout=seconds * 20 + 60)
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


def jitter(shell, seconds: int, tools: str | None = None) -> tuple[dict, dict]:
    """The jitter suite's cyclictest under its load, `seconds` long -> (figures, histogram)."""
    t, _ = cyclictest_under_load(shell, seconds, tools=tools)
    return jitter_figures(t), t["histogram"]


# a family's measurement on a boot: (shell, rec, metric, jitter_s, small, tools) -> figures,
# for the families measured here rather than by their record's run (by_script)
MEASURED_HERE: dict = {}


def measures(family_name: str):
    def put(fn):
        MEASURED_HERE[family_name] = fn
        return fn
    return put


@measures("boot_time")
def measure_boot_time(shell, rec, **_) -> dict:
    return boot(rec)


@measures("memory")
def measure_memory(shell, rec, **_) -> dict:
    """The memory suite's figures of one boot, in its order: free and the Memory: line
    right after boot, then mem_eat (which leaves the board without caches: the workloads
    come after it, as in the suites)."""
    return {**memory(shell, rec), **mem_eat(shell)}


@measures("lmbench")
def measure_lmbench(shell, rec, metric=None, small=False, tools=None, **_) -> dict:
    return lmbench(shell, small, groups=[lmbench_group_of(metric)] if metric else None, tools=tools)


@measures("jitter")
def measure_jitter(shell, rec, jitter_s=workloads.JITTER_RUN_S, tools=None, **_) -> dict:
    return jitter(shell, jitter_s, tools)[0]


def by_script(name: str, shell, timeout: float = 1800, tools: str | None = None) -> dict:
    """A family's figures from its record alone: its board-side files written to the board
    (the runs LAVA's definition has too), its run, its figures read by their patterns."""
    fam = families.get(name)
    for f in fam.board_files:
        for cmd in target_load.install_commands(f):
            shell.run_check(cmd)
    out, _, rc = shell.run(target_load.sourced(fam.board_files, fam.run, tools), timeout=timeout)
    if rc != 0:
        raise failed_run(f"{name}: {fam.run}", rc, out)
    try:
        return fam.read(out)
    except parsers.ParseError as e:
        raise MeasureError(f"{name}: {e}: " + " | ".join(out[-3:])) from None


def family(name: str, shell, rec, metric: str | None = None, jitter_s: int = workloads.JITTER_RUN_S,
           small: bool = False, tools: str | None = None) -> dict:
    """One family's figures on the running boot (rec: its BootRecord); metric: the one
    figure wanted, when a cheaper run gives it (its lmbench group). A family without a
    measurement in MEASURED_HERE is measured by its record's run (by_script)."""
    fam = families.get(name)
    here = MEASURED_HERE.get(name)
    if not fam.on_boot or not (here or fam.run):
        raise ValueError(f"no measurement of family {name!r} on a boot (known: {', '.join(FAMILIES)})")
    if here is None:
        return by_script(name, shell, tools=tools)
    return here(shell, rec, metric=metric, jitter_s=jitter_s, small=small, tools=tools)


def one_sample(strategy, shell_driver, wanted=FAMILIES, jitter_s: int = workloads.JITTER_RUN_S,
               tools: str | None = None, own_onto=None) -> tuple[dict, dict]:
    """A fresh boot of the selected kernel and its figures -> (figures, extras: the boot
    record and the jitter histogram). Memory is read before any workload. tools: whose
    programs (None: each family's set for the board's CPU, its record says); own_onto(sh):
    puts the project's programs on a root that lacks them, after memory is read."""
    rec = strategy.reboot()
    figures, extras = {}, {"boot": rec}
    sh = shell_driver()
    small = workloads.small_board(strategy.board.ram_mb)
    for name in (f for f in FAMILIES if f in wanted):   # memory first: before any workload
        its = families.tool_set(name, strategy.board.isa, tools)
        if its == families.OWN and own_onto:
            own_onto(sh)
        if name == "jitter":
            j, extras["histogram"] = jitter(sh, jitter_s, its)
            figures.update(j)
        else:
            figures.update(family(name, sh, rec, small=small, tools=its))
    return figures, extras
