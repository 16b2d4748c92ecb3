"""What happened to a run's kernel besides its figures, as the run keeps it:

- results.json `meta.outcomes`: {"<board>/<kernel>": {test: result, "why": {test: why}}}, the
  tests kernel/checkout, kernel/build, kernel/boot (a nightly build's, the suites' boot, a
  LAVA job's) and lava/job, each pass, fail (the kernel's: it did not build, it did not
  boot) or error (anyone else's, as errors.fault_of says: the lab broke, its part named
  in the why, or the input, or boardlab);
- the suites' own tests, as pytest's junit.xml beside it says them: passed, failed,
  skipped, or errored (in set-up or tear-down: not the kernel's doing, unless the kernel
  failed to boot in that run, when they did not run at all: skipped).

Read by history.submit, which lands them as tests beside the figures."""
from __future__ import annotations

import contextlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from boardlab.errors import KERNEL, Fault, fault_of

PASS, FAIL, ERROR, SKIP = "pass", "fail", "error", "skip"
WORST_FIRST = (FAIL, ERROR, PASS)   # KCIDB's order: what a run's several answers sum to
BOOT = "kernel/boot"
JUNIT = "junit.xml"
JUNIT_SUITE = "pytest"               # the suites' tests: pytest/<file>.<test>


def first_line(e) -> str:
    return (str(e).splitlines() or [""])[0]


def record(results, board: str, kernel: str, test: str, result: str, why: str = "",
           keep_worst: bool = False):
    """One test of what happened to the kernel (kernel/boot: error, ...), saved in results.json.
    keep_worst: an earlier answer worse than this one stays (a boot that failed, then
    succeeded on the next try, failed)."""
    entry = results.meta.setdefault("outcomes", {}).setdefault(f"{board}/{kernel}", {})
    had = entry.get(test)
    if keep_worst and had in WORST_FIRST and WORST_FIRST.index(had) <= WORST_FIRST.index(result):
        return
    entry[test] = result
    if why:
        entry.setdefault("why", {})[test] = why
    elif had != result:
        entry.get("why", {}).pop(test, None)
    if had != result or why:
        results.save()


def of_fault(fault: Fault) -> tuple[str, str]:
    """A fault as a test's result and why: the kernel's a fail; anyone else's an error
    whose why says whose ('the lab broke: power: ...'): the kernel is not judged by it."""
    if fault.party == KERNEL:
        return FAIL, fault.line
    return ERROR, f"{fault.words()}: {fault.line}"


@contextlib.contextmanager
def boot_recorded(results, board: str, kernel: str):
    """A boot (the suites' board to a shell) said as kernel/boot: pass, fail when the kernel
    failed by itself, error when anyone else did (of_fault); the error goes on."""
    try:
        yield
    except Exception as e:
        record(results, board, kernel, BOOT, *of_fault(fault_of(e)), keep_worst=True)
        raise
    record(results, board, kernel, BOOT, PASS, keep_worst=True)


def junit(path: Path) -> dict:
    """{pytest/<file>.<test>: (result, why)} of a pytest junit.xml; {} when there is none
    or it cannot be read (a run cut off)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    out = {}
    for case in root.iter("testcase"):
        where = re.sub(r"^testsuites\.", "", case.get("classname") or "")
        name = f"{JUNIT_SUITE}/" + f"{where}.{case.get('name', '')}".replace("/", "_")
        said = {child.tag: child.get("message") or "" for child in case}
        for tag, result in (("error", ERROR), ("failure", FAIL), ("skipped", SKIP)):
            if tag in said:
                out[name] = (result, first_line(said[tag]))
                break
        else:
            out[name] = (PASS, "")
    return out


def of_run(run_dir: Path, doc: dict) -> dict:
    """{(board, kernel): {test: (result, why)}}: results.json's outcomes, and the suites'
    junit.xml on the kernel under test (the one whose boot was said, else the run's only
    kernel; a run of several with none said keeps its junit.xml to itself)."""
    out = {}
    for key, entry in (doc["meta"].get("outcomes") or {}).items():
        board, _, kernel = key.partition("/")
        whys = entry.get("why", {})
        out[(board, kernel)] = {t: (r, whys.get(t, "")) for t, r in entry.items() if t != "why"}
    tests = junit(Path(run_dir) / JUNIT)
    booted = [k for k, said in out.items() if BOOT in said]
    pairs = booted or sorted({(m["board"], m["kernel"]) for m in doc["metrics"]} | set(out))
    if tests and len(pairs) == 1:
        said = out.setdefault(pairs[0], {})
        kernel_failed = said.get(BOOT, (None,))[0] == FAIL
        for name, (result, why) in tests.items():
            # a test the kernel's failed boot kept from running: not run, not the lab's
            said[name] = (SKIP, "the kernel did not boot") if result == ERROR and kernel_failed \
                else (result, why)
    return out
