"""One sample of a board's figures, family by family, named as the catalogue names them:
what `boardlab compare` and the benches take per boot. The same commands as the suites
(testsuites/) in their quick form; each boot goes the real path (power switch, U-Boot,
TFTP, ser2net, the strategy)."""
from __future__ import annotations

from boardlab.measure import families, parsers, target_load, workloads
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
           small: bool = False, tools: str | None = None, extras: dict | None = None) -> dict:
    """One family's figures on the running boot (rec: its BootRecord); metric: the figure
    (or figures) wanted, where cheaper runs give them (some of its runs); extras: where a
    measurement keeps what it has beside its figures (jitter's histogram). Its record's
    `measure`, else its run (by_script)."""
    fam = families.get(name)
    if not fam.on_boot or not (fam.measure or fam.run):
        raise families.NoMeasurement(f"no measurement of family {name!r} on a boot (known: {', '.join(FAMILIES)})")
    if fam.measure is None:
        return by_script(name, shell, tools=tools)
    return fam.measure(shell, rec, metric=metric, jitter_s=jitter_s, small=small, tools=tools,
                       extras=extras if extras is not None else {})


def narrowed(wanted) -> dict:
    """{family: its figures wanted, or None for all} of `wanted`: family names, or
    FAMILY:NAME[+NAME...] for some of its figures (the runs that give them, as a bisect's)."""
    out = {}
    for w in wanted:
        name, _, some = w.partition(":")
        out[name] = tuple(f"{name}.{m}" for m in some.split("+")) if some else None
    return out


def one_sample(strategy, shell_driver, wanted=FAMILIES, jitter_s: int = workloads.JITTER_RUN_S,
               tools: str | None = None, own_onto=None) -> tuple[dict, dict]:
    """A fresh boot of the selected kernel and its figures -> (figures, extras: the boot
    record and the jitter histogram); wanted: families, or some of their figures (narrowed). Memory is read before any workload. tools: whose
    programs (None: each family's set for the board's CPU, its record says); own_onto(sh):
    puts the project's programs on a root that lacks them, after memory is read."""
    rec = strategy.reboot()
    figures, extras = {}, {"boot": rec}
    sh = shell_driver()
    small = workloads.small_board(strategy.board.ram_mb)
    want = narrowed(wanted)
    for name in (f for f in FAMILIES if f in want):   # memory first: before any workload
        its = families.tool_set(name, strategy.board.isa, tools)
        if its == families.OWN and own_onto:
            own_onto(sh)
        figures.update(family(name, sh, rec, metric=want[name], small=small, tools=its, jitter_s=jitter_s,
                              extras=extras))
    return figures, extras
