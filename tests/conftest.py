"""Fixtures of the project's own tests: the virtual lab, brought up once per session
(and down again, unless it was up before), and the virtual board's labgrid target."""
import atexit
import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# The tests' runs (compare, bisect steps, suites) never land in this host's lab history:
# theirs is a directory of their own, for every process they start.
os.environ["BOARDLAB_HISTORY_DIR"] = tempfile.mkdtemp(prefix="boardlab-tests-history-")
atexit.register(shutil.rmtree, os.environ["BOARDLAB_HISTORY_DIR"], True)

import pytest  # noqa: E402

import packageguard  # noqa: E402
from paths import BUILT_BESIDE, DEFAULT_BOARD, ROOT  # noqa: E402


# scripts/test.sh runs sessions side by side: the tests on the lab's default board
# (DEFAULT_BOARD, places/lab.yaml: qemu-arm), one after another (a board takes one user at
# a time, and a test may take its lab host down), and beside them the rest: the PowerPC
# board's own tests (another lab host), those that wait on scripted consoles, servers and
# the cross compiler, and the unit tests.
# --on-default-board picks a session's share. All may use the lab (vlab.lab.kept_up: the
# first one in brings it up, the last one out takes it down).
SHARES = ("all", "only", "none")

# The PowerPC board's images are a clean kernel build of their own (about 5 min on a fresh
# host): built from the session's start beside its tests (in each session with tests on
# that board: the second waits on the board's image lock and finds them built), at idle
# I/O priority; its tests run last. It is a session of its own, like each board's QEMU and
# the session beside: the kernel's autogroup scheduling (Debian's default) shares the CPU
# between sessions whatever their nice, so its nice 19 orders only make and the compilers.
# (BUILT_BESIDE: tests/paths.py, which scripts/test.sh asks)
BESIDE_KEY = pytest.StashKey()


def pytest_addoption(parser):
    parser.addoption("--on-default-board", choices=SHARES, default="all",
                     help=f"the tests on the lab's default board, {DEFAULT_BOARD} (fixture vlab, but for "
                          "the PowerPC board's own): all tests (default), only those, or none of "
                          "them (scripts/test.sh runs 'only' and 'none' side by side)")
    parser.addoption("--beside-name", default="beside", metavar="NAME",
                     help="a session beside's name (scripts/test.sh runs three: unit, powerpc and end-to-end): "
                          "its --junitxml file is FILE-NAME.xml")
    parser.addoption("--order", default="file", metavar="file|reversed|shuffled[:SEED]",
                     help="the tests' order: as in their files (default), reversed, or shuffled "
                          "(SEED: a number, printed; a test that passes only in file order leans on "
                          "another's leftovers)")


def _ordered(items, order: str, say) -> None:
    import random
    kind, _, seed = order.partition(":")
    if kind == "file":
        return
    if kind == "reversed":
        items.reverse()
    elif kind == "shuffled":
        seed = int(seed) if seed else random.randrange(1 << 32)
        random.Random(seed).shuffle(items)
        say(f"tests shuffled with seed {seed} (--order shuffled:{seed} repeats it)")
    else:
        raise pytest.UsageError(f"--order {order}: file, reversed or shuffled[:SEED]")


def pytest_configure(config):
    # a test that leaves the package changed is an error at its own teardown
    config.pluginmanager.register(packageguard, "packageguard")
    xml = config.option.xmlpath
    if xml and config.option.on_default_board == "none":   # the session beside: a file of its own
        xml = Path(xml)
        config.option.xmlpath = str(xml.with_name(f"{xml.stem}-{config.option.beside_name}{xml.suffix}"))


def on_the_ppc_board(item) -> bool:
    return "ppc_board" in getattr(item, "fixturenames", ())


def on_the_default_board(item) -> bool:
    """The default board's: every test on the lab, but the PowerPC board's alone (the coordinator's
    places hold both boards)."""
    names = getattr(item, "fixturenames", ())
    return "vlab" in names and ("coordinator" in names or "ppc_board" not in names)


# The PowerPC board serves both sessions: its own tests beside, and the coordinator's that
# boot it (reserving both boards) on the default board's. One test at a time on it: a test
# that uses it waits for the other session's to end (an flock: it dies with its holder).
# The coordinator's tests that only reserve the default board need neither the turn nor
# its images, and run in their file's order.
PPC_TURN = Path(tempfile.gettempdir()) / "boardlab-tests-qemu-ppc.turn"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not on_the_ppc_board(item):
        return (yield)
    with open(PPC_TURN, "a") as turn:
        fcntl.flock(turn, fcntl.LOCK_EX)
        return (yield)


@pytest.hookimpl(tryfirst=True)   # before -m deselects: the marker follows the fixture
def pytest_itemcollected(item):
    if on_the_ppc_board(item):
        item.add_marker("ppc_board")


@pytest.hookimpl(trylast=True)   # after -m/-k have deselected
def pytest_collection_modifyitems(config, items):
    share = config.option.on_default_board
    if share != "all":
        ours = {i: on_the_default_board(i) == (share == "only") for i in items}
        config.hook.pytest_deselected(items=[i for i in items if not ours[i]])
        items[:] = [i for i in items if ours[i]]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    _ordered(items, config.option.order, reporter.write_line if reporter else print)
    items.sort(key=on_the_ppc_board)   # stable: the rest keep their order
    if not config.option.collectonly and any(map(on_the_ppc_board, items)):
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
def vlab(pytestconfig):
    from boardlab.vlab.lab import kept_up
    # the default board's images (not in the session beside, which leaves it to the other);
    # a test of another board prepares it (vlab.prepare)
    boards = () if pytestconfig.option.on_default_board == "none" else (DEFAULT_BOARD,)
    with kept_up("vlab", boards=boards, leave_up=bool(os.environ.get("BOARDLAB_KEEP_LAB"))) as lab:
        yield lab


@contextlib.contextmanager
def board_env(name: str):
    """The board's labgrid environment (lab/<board>.yaml), cleaned up at the end."""
    from labgrid import Environment
    env = Environment(str(ROOT / "lab" / f"{name}.yaml"))
    try:
        yield env
    finally:
        env.cleanup()


def board_strategy(target, tmp_path):
    """A board's strategy, defaults selected, console logs in tmp_path. Left powered off if
    the test failed, so the next test starts clean."""
    strategy = target.get_driver("Strategy")
    strategy.select(kernel="", root="", ramdisk="")
    strategy.uboot_timeout = strategy.boot_timeout = 0.0
    strategy.log_dir = str(tmp_path)
    yield strategy
    strategy.uboot_timeout = strategy.boot_timeout = 0.0
    strategy.release_board()   # a later test may run pytest on the board in a subprocess


@pytest.fixture(scope="session")
def qemu_env(vlab):
    with board_env(DEFAULT_BOARD) as env:
        yield env


@pytest.fixture(scope="session")
def qemu_target(qemu_env):
    return qemu_env.get_target("main")


@pytest.fixture
def qemu(qemu_target, tmp_path):
    """The lab's default board's (qemu-arm's) strategy."""
    yield from board_strategy(qemu_target, tmp_path)


@pytest.fixture(scope="session")
def ppc_target(ppc_board):
    with board_env(BUILT_BESIDE) as env:
        yield env.get_target("main")


@pytest.fixture
def ppc(ppc_target, tmp_path):
    """The PowerPC board's (qemu-ppc's) strategy: for the tests of the lab around a board,
    which run beside the default board's."""
    yield from board_strategy(ppc_target, tmp_path)


@pytest.fixture(scope="session")
def ppc_host(ppc_board):
    """The PowerPC board's lab host (vlab2): its services, to stop and start."""
    from boardlab.vlab.lab import VirtualLab
    return VirtualLab().host_of(BUILT_BESIDE)
