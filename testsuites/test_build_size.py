"""Build size, as the study measured it: a clean kernel build timed (real, user, sys),
the uImage's data size (compressed), `size vmlinux` and the uncompressed image. Built
from Debian's linux-source with each config kernels/<kernel>/<board>.config; then the
fresh uImage is booted, root=/dev/nfs, like a real board (build -> boot)."""
import pytest

from boardlab import kbuild, uimage
from boardlab.baselines import KERNELS_DIR

pytestmark = pytest.mark.slow


def configs_of(board_name):
    return sorted(KERNELS_DIR.glob(f"*/{board_name}.config"))


@pytest.fixture(scope="module")
def built(board_facts):
    configs = configs_of(board_facts.name)
    if not configs:
        pytest.skip(f"no kernel config for board {board_facts.name} under kernels/")
    if board_facts.arch not in kbuild.ARCH:
        pytest.skip(f"no cross compiler set up for arch {board_facts.arch}")
    return {cfg.parent.name: kbuild.build(board_facts, cfg.parent.name, cfg) for cfg in configs}


def test_build_time_and_size(built, gate):
    for kernel, b in built.items():
        gate.record("build", "real_s", b.real_s, kernel=kernel)
        gate.record("build", "user_s", b.user_s, kernel=kernel)
        gate.record("build", "sys_s", b.sys_s, kernel=kernel)
        gate.record("build", "uimage_data_bytes", b.uimage_data_bytes, kernel=kernel)
        for part in ("text", "data", "bss", "dec"):
            gate.record("build", f"vmlinux_{part}_bytes", b.vmlinux[part],
                        kernel=kernel)
        gate.record("build", "uncompressed_bytes", b.uncompressed_bytes,
                    kernel=kernel)
    gate.check()


def test_the_fresh_kernel_boots_with_nfs_root(built, board, target):
    selected = (board.kernel, board.root, board.ramdisk)
    kernel, b = next(iter(built.items()))
    try:
        board.select(kernel=kernel, root="nfs", ramdisk="")
        board.transition("shell")
        shell = target.get_driver("ShellDriver")
        assert shell.run_check("uname -r") == [uimage.read(b.uimage).release]
        assert "root=/dev/nfs" in shell.run_check("cat /proc/cmdline")[0]
        assert board.last_boot.milestones.get("shell"), board.last_boot.log_path
    finally:
        board.select(*selected)
