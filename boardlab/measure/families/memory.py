"""Memory as the study read it, on the ramdisk: `free` right after boot, the kernel's
`Memory:` boot line, and what an application can allocate (mem_eat). Floors: 4 kB, one
page (memory figures are identical from boot to boot), but free's used and free 64 kB:
they carry the kernel's worker threads, and on qemu-ppc one more kworker is up on some
boots (+28 or +32 kB used: 3184 kB on 7 of 12 boots, 3212 on 1, 3216 on 4, host
vm-39331bb95fb08427, 2026-11-29; armmp: 6288 kB on 8 of 8), so two such threads are below
the floor. The study's smallest memory change was 2 % of free."""
from __future__ import annotations

from boardlab.measure import parsers
from boardlab.measure.families.record import NONE, Family
from boardlab.measure.metric import MetricSpec

NAME = "memory"
PAGE, WORKER = 4.0, 64.0   # free's used and free move with the kernel's worker threads
_KB = (("free_total_kb", "higher", True, PAGE, "free: total"),
       ("free_used_kb", "lower", True, WORKER, "free: used"),
       ("free_free_kb", "higher", True, WORKER, "free: free"),
       # not under LAVA: its test overlay, unpacked in the ramdisk, fills the page cache
       ("free_buffers_kb", "lower", False, PAGE, "free: buffers (buff/cache)"),
       ("kernel_available_kb", "higher", False, PAGE, "boot line Memory: available"),
       ("kernel_code_kb", "lower", False, PAGE, "boot line Memory: kernel code"),
       ("kernel_init_kb", "lower", False, PAGE, "boot line Memory: init"),
       ("kernel_code_data_kb", "lower", False, PAGE, "boot line Memory: code + data"),
       ("mem_eat_kb", "higher", True, PAGE, "what an application can allocate (mem_eat)"))
METRICS = tuple(MetricSpec(f"{NAME}.{n}", "kB", d, NONE, 0.0, floor, lava=lava, what=w)
                for n, d, lava, floor, w in _KB)

# LAVA unpacks its test overlay (test definitions, the job's parameters) into the
# ramdisk: its memory figures move with the job, 8 to 68 kB between two renderings of the
# same job (armmp, 2026-11-23), so a quarter MB; still a quarter of the 1 % memory change.
HARNESS_FLOOR_ABS = (("lava", 256.0),)


def free_figures(text: str) -> dict:
    """The figures of `free`'s output."""
    f = parsers.parse_free(text)
    return {f"{NAME}.free_total_kb": f["total"], f"{NAME}.free_used_kb": f["used"],
            f"{NAME}.free_free_kb": f["free"],
            f"{NAME}.free_buffers_kb": f.get("buffers", f.get("buff_cache"))}


def free(shell) -> dict:
    """`free` right after boot (before any workload)."""
    return free_figures("\n".join(shell.run_check("free")))


def kernel_memory(rec) -> dict:
    """The kernel's 'Memory: ...k available (...k kernel code, ...)' boot line."""
    text = "\n".join(ln.text for ln in rec.lines)
    return {f"{NAME}.{name}": kb for name, kb in parsers.kernel_memory_metrics(text).items()}


def after_boot(shell, rec) -> dict:
    """free and the kernel's Memory: line, right after boot (mem_eat, the suite's third
    figure, needs a fresh boot after it: see mem_eat)."""
    return {**free(shell), **kernel_memory(rec)}


def mem_eat(shell) -> dict:
    """How much an application can allocate: mem_eat until malloc fails or the OOM killer
    stops it. Leaves the board without caches: one run per boot."""
    out, _, _ = shell.run("mem_eat > /tmp/mem_eat.log 2>&1; tail -n 3 /tmp/mem_eat.log; "
                          "rm /tmp/mem_eat.log", timeout=300)
    return {f"{NAME}.mem_eat_kb": parsers.parse_mem_eat("\n".join(out))["kb"]}


def measure(shell, rec, **_) -> dict:
    """The memory suite's figures of one boot, in its order: free and the Memory: line
    right after boot, then mem_eat (which leaves the board without caches: the workloads
    come after it, as in the suites)."""
    return {**after_boot(shell, rec), **mem_eat(shell)}


def read(lines, tools=None) -> dict:
    """The board-side script's raw output: free's after '@free', mem_eat's after '@mem_eat'."""
    parts = parsers.marked(lines, ("@free", "@mem_eat"))
    return {**free_figures(parts.get("@free", "")),
            f"{NAME}.mem_eat_kb": parsers.parse_mem_eat(parts.get("@mem_eat", ""))["kb"]}


FAMILY = Family(NAME, METRICS, NONE, order=20, listed=30, what="free, the kernel's Memory: line, mem_eat", one_boot=True,
                measure=measure, script="memory/memory.sh", testdef="memory/memory.yaml",
                shown=f"{NAME}.mem_eat_kb", reads=read, root="ramdisk", harness_floor_abs=HARNESS_FLOOR_ABS)
