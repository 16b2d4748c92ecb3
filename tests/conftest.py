"""Fixtures of the project's own tests: the virtual lab, brought up once per session
(and down again, unless it was up before), and the virtual board's labgrid target."""
import atexit
import os
import shutil
import tempfile

# The tests' runs (compare, bisect steps, suites) never land in this host's lab history:
# theirs is a directory of their own, for every process they start.
os.environ["BOARDLAB_HISTORY_DIR"] = tempfile.mkdtemp(prefix="boardlab-tests-history-")
atexit.register(shutil.rmtree, os.environ["BOARDLAB_HISTORY_DIR"], True)

import pytest  # noqa: E402

from paths import ROOT  # noqa: E402


@pytest.fixture(scope="session")
def vlab():
    from boardlab.vlab.lab import kept_up
    # the default board's images; a test of another board prepares it (vlab.prepare)
    with kept_up("vlab", boards=("qemu-arm",),
                 leave_up=bool(os.environ.get("BOARDLAB_KEEP_LAB"))) as lab:
        yield lab


@pytest.fixture(scope="session")
def qemu_env(vlab, tmp_path_factory):
    from labgrid import Environment
    env = Environment(str(ROOT / "lab" / "qemu-arm.yaml"))
    yield env
    env.cleanup()


@pytest.fixture(scope="session")
def qemu_target(qemu_env):
    return qemu_env.get_target("main")


@pytest.fixture
def qemu(qemu_target, tmp_path):
    """The virtual board's strategy, defaults selected, console logs in tmp_path.
    Left powered off if the test failed, so the next test starts clean."""
    strategy = qemu_target.get_driver("Strategy")
    strategy.select(kernel="", root="", ramdisk="")
    strategy.uboot_timeout = strategy.boot_timeout = 0.0
    strategy.log_dir = str(tmp_path)
    yield strategy
    strategy.uboot_timeout = strategy.boot_timeout = 0.0
    strategy.release_board()   # a later test may run pytest on the board in a subprocess


