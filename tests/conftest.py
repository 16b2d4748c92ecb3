"""Fixtures of the project's own tests: the virtual lab, brought up once per session
(and down again, unless it was up before), and the virtual board's labgrid target."""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile

# The tests' runs (compare, bisect steps, suites) never land in this host's lab history:
# theirs is a directory of their own, for every process they start.
os.environ["BOARDLAB_HISTORY_DIR"] = tempfile.mkdtemp(prefix="boardlab-tests-history-")
atexit.register(shutil.rmtree, os.environ["BOARDLAB_HISTORY_DIR"], True)

import pytest  # noqa: E402

from paths import ROOT  # noqa: E402


# scripts/test.sh runs two sessions side by side: the tests on the virtual lab, one after
# another (its boards are leased one user at a time, and a test may take the lab down),
# and beside them the rest, which wait on scripted consoles, servers and the PowerPC cross
# compiler rather than on the lab's boards. --lab-tests picks a session's share.
LAB_TESTS = ("all", "only", "none")


def pytest_addoption(parser):
    parser.addoption("--lab-tests", choices=LAB_TESTS, default="all",
                     help="the tests on the virtual lab (fixture vlab): all tests (default), only "
                          "those, or none of them (scripts/test.sh runs 'only' and 'none' side by side)")


def pytest_configure(config):
    xml = config.option.xmlpath
    if xml and config.option.lab_tests == "none":   # the session beside writes a file of its own
        config.option.xmlpath = xml[:-4] + "-beside.xml" if xml.endswith(".xml") else xml + "-beside"


# The PowerPC board's images are a clean kernel build of their own (about 5 min on a fresh
# host): built beside the tests from the lab's first use, at the lowest CPU and I/O
# priority (the tests' QEMU and consoles come first), and its tests run last.
BUILT_BESIDE = "qemu-ppc"
BESIDE_KEY = pytest.StashKey()


def on_the_lab(item) -> bool:
    return "vlab" in getattr(item, "fixturenames", ())


def on_the_ppc_board(item) -> bool:
    return "ppc_board" in getattr(item, "fixturenames", ())


@pytest.hookimpl(trylast=True)   # after -m/-k have deselected
def pytest_collection_modifyitems(config, items):
    share = config.option.lab_tests
    if share != "all":
        config.hook.pytest_deselected(items=[i for i in items if on_the_lab(i) != (share == "only")])
        items[:] = [i for i in items if on_the_lab(i) == (share == "only")]
    items.sort(key=on_the_ppc_board)   # stable: the rest keep their order


def build_beside(config, items):
    """Starts the PowerPC board's image build once, if a selected test needs the board."""
    if BESIDE_KEY in config.stash or not any(map(on_the_ppc_board, items)):
        return
    log = open(tempfile.mkstemp(prefix="boardlab-tests-ppc-images-", suffix=".log")[1], "w")
    config.stash[BESIDE_KEY] = (subprocess.Popen(
        ["nice", "-n", "19", "ionice", "-c", "3", sys.executable, "-m", "boardlab.cli", "vlab", "build",
         "--board", BUILT_BESIDE], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True), log.name)


def pytest_unconfigure(config):
    proc, log = config.stash.get(BESIDE_KEY, (None, None))
    if proc is None:
        return
    if proc.poll() is None:   # the session ended before its tests ran
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    if proc.returncode == 0:
        os.unlink(log)


@pytest.fixture(scope="session")
def ppc_board(vlab, pytestconfig):
    """The lab with the PowerPC board's images ready: the build started beside the
    session's first tests ended (or the board's first use builds them, as always)."""
    proc, log = pytestconfig.stash.get(BESIDE_KEY, (None, None))
    if proc is not None and proc.wait() != 0:
        print(f"the PowerPC board's images beside the tests failed (log {log}); building them now")
    vlab.prepare(BUILT_BESIDE)
    return vlab


@pytest.fixture(scope="session")
def vlab(request):
    from boardlab.vlab.lab import kept_up
    # the default board's images; a test of another board prepares it (vlab.prepare)
    with kept_up("vlab", boards=("qemu-arm",),
                 leave_up=bool(os.environ.get("BOARDLAB_KEEP_LAB"))) as lab:
        build_beside(request.config, request.session.items)
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


