"""Memory, as the study measured it on a ramdisk root: `free`, the kernel's
'Memory: …k available (…k kernel code, …k data, …k init)' boot line, and how much an
application can allocate (mem_eat, until malloc fails or the OOM killer stops it)."""
import pytest

from boardlab.measure import parsers


@pytest.fixture
def ramdisk_shell(board_strategy, fresh_shell):
    if board_strategy.plan().root != "ramdisk":
        pytest.skip("memory is measured on the ramdisk root, as in the study (--root ramdisk)")
    return fresh_shell


def test_free(ramdisk_shell, gate):
    free = parsers.parse_free("\n".join(ramdisk_shell.run_check("free")))
    gate.record("memory", "free_total_kb", free["total"])
    gate.record("memory", "free_used_kb", free["used"])
    gate.record("memory", "free_free_kb", free["free"])
    buffers = free.get("buffers", free.get("buff_cache"))
    gate.record("memory", "free_buffers_kb", buffers)
    gate.check()


def test_kernel_memory_line(board_strategy, ramdisk_shell, gate):
    boot_log = "\n".join(ln.text for ln in board_strategy.last_boot.lines)
    for name, kb in parsers.kernel_memory_metrics(boot_log).items():
        gate.record("memory", name, kb)
    gate.check()


@pytest.mark.workload   # takes every page it can: caches and slabs are not as before
def test_mem_eat(board_strategy, ramdisk_shell, gate):
    """One run per boot; more (each on a fresh boot) while the verdict is unknown: on
    qemu-ppc mem_eat ends 256 kB early on some boots, by where the OOM kill falls."""
    boots = []

    def eat():
        if boots:   # mem_eat leaves the board without caches: the next run on a fresh boot
            board_strategy.transition("off")
            board_strategy.transition("shell")
        boots.append(board_strategy.boot_count)
        out, _, _ = ramdisk_shell.run("mem_eat > /tmp/mem_eat.log 2>&1; tail -n 3 /tmp/mem_eat.log; "
                                      "rm /tmp/mem_eat.log", timeout=300)
        return {"mem_eat_kb": parsers.parse_mem_eat("\n".join(out))["kb"]}
    gate.sample("memory", eat)
    gate.check()
