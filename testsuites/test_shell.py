"""The board reaches a shell running the kernel under test (the base of every suite)."""
import pytest

from boardlab.kernelbuilds import uimage


def test_kernel_release_matches_uimage(board_strategy, shell):
    kernel = board_strategy.kernel_under_test
    if kernel.local is None:
        pytest.skip(f"kernel {kernel.spec} is only on the TFTP server: "
                    f"no local uImage to read the release from")
    release = uimage.read(kernel.local).release
    assert shell.run_check("uname -r") == [release]


def test_boot_log_has_the_milestones(board_strategy, shell):
    rec = board_strategy.last_boot
    for name in ("linux_version", "freeing_init", "login", "shell"):
        assert name in rec.milestones, f"milestone {name} missing; console log {rec.log_path}"
    assert 0 < rec.milestones["linux_version"] < rec.milestones["login"]
