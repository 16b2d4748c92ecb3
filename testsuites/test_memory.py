"""Memory, as the study measured it on a ramdisk root: `free`, the kernel's
'Memory: …k available (…k kernel code, …k data, …k init)' boot line, and how much an
application can allocate (mem_eat, until malloc fails or the OOM killer stops it)."""
import pytest

from boardlab.measure.families import memory


@pytest.fixture
def ramdisk_shell(board_strategy, fresh_shell):
    if board_strategy.plan().root != "ramdisk":
        pytest.skip("memory is measured on the ramdisk root, as in the study (--root ramdisk)")
    return fresh_shell


def test_free(ramdisk_shell, gate):
    gate.sample("memory", lambda: memory.free(ramdisk_shell))
    gate.check()


def test_kernel_memory_line(board_strategy, ramdisk_shell, gate):
    gate.sample("memory", lambda: memory.kernel_memory(board_strategy.last_boot))
    gate.check()


@pytest.mark.workload   # takes every page it can: caches and slabs are not as before
def test_mem_eat(board_strategy, ramdisk_shell, gate):
    """One run per boot; more (each on a fresh boot) while the verdict is unknown: on
    qemu-ppc mem_eat ends 256 kB early on some boots, by where the OOM kill falls."""
    runs = []

    def eat():
        if runs:   # mem_eat leaves the board without caches: the next run on a fresh boot
            board_strategy.transition("off")
            board_strategy.transition("shell")
        runs.append(board_strategy.boot_count)
        return memory.mem_eat(ramdisk_shell)
    gate.sample("memory", eat)
    gate.check()
