"""Build size, as the study measured it: a clean kernel build timed (real, user, sys),
the uImage's data size (compressed), `size vmlinux` and the uncompressed image. Built
from Debian's linux-source with each config kernels/<kernel>/<board>.config (merged over
allnoconfig, or over the defconfig its `# base:` line names); then the fresh uImage is
booted, root=/dev/nfs, like a real board (build -> boot).

The build needs no board: `pytest --lg-env lab/tqm860l.yaml testsuites/test_build.py`
runs on any host with the cross compiler; the boot test then says the board's console
is not reachable from here."""
import pytest

from boardlab.kernelbuilds import alongside, kbuild, uimage
from boardlab.measure import kernelid
from boardlab.net import tcp_open

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(board_facts, build_alongside, results):
    """{kernel: BuildResult}: built here, or waited for when built beside the board's suites
    (--build-alongside; its host-clock times then say so)."""
    why_not = alongside.not_buildable(board_facts)
    if why_not:
        pytest.skip(why_not)
    if build_alongside is None:
        yield alongside.build_all(board_facts, alongside.configs_of(board_facts.name))
        return
    got = build_alongside.result()
    results.meta["build_alongside_s"] = build_alongside.seconds   # the run's timing table says it
    results.host_load = alongside.BESIDE_SUITES
    yield got
    results.host_load = None


def test_build_time_and_size(built, offline_gate):
    gate = offline_gate
    configs = gate.results.meta.setdefault("kernel_configs", {})
    for cfg in alongside.configs_of(gate.strategy.board.name):
        configs[f"{gate.strategy.board.name} {cfg.parent.name}"] = kbuild.describe_config(cfg)
    for kernel, b in built.items():
        figures = b.figures()
        ident = kernelid.of_image(b.uimage)   # the source, config and compiler it was built from
        for name, value in figures.items():
            gate.record("build", name, value, kernel=kernel, identity=ident)
    gate.check()


def test_the_fresh_kernel_boots_with_nfs_root(built, board_facts, request):
    console = (board_facts.serial_host, board_facts.console.ser2net_port)
    if not tcp_open(console[1], console[0], timeout=2.0):
        pytest.skip(f"board {board_facts.name}: its console {console[0]}:{console[1]} does not "
                    f"answer from this host; the build was measured, the boot needs the board")
    board_strategy = request.getfixturevalue("board_strategy")
    target = request.getfixturevalue("target")
    selected = (board_strategy.kernel, board_strategy.root, board_strategy.ramdisk)
    kernel, b = next(iter(built.items()))
    try:
        board_strategy.select(kernel=kernel, root="nfs", ramdisk="")
        board_strategy.transition("shell")
        shell = target.get_driver("ShellDriver")
        assert shell.run_check("uname -r") == [uimage.read(b.uimage).release]
        assert "root=/dev/nfs" in shell.run_check("cat /proc/cmdline")[0]
        assert board_strategy.last_boot.milestones.get("shell"), board_strategy.last_boot.log_path
    finally:
        board_strategy.select(*selected)
