"""boardlab's pytest plugin (the `pytest11` entry point, as labgrid's): with `pytest --lg-env
lab/<board>.yaml testsuites/`, the suites' options and fixtures - kernel and root, the run's
directory and console logs, the board at its shell (booted once per kernel), the gate - and a
lab fault said as an error (boardlab.pytestfaults). Inert without a board (tests/)."""
import os
from pathlib import Path

import pytest

from boardlab.judge import outcomes
from boardlab.judge.gate import Gate
from boardlab.measure import baselines, families

pytest_plugins = ("boardlab.pytestfaults", "boardlab.pytestprogress")


def pytest_addoption(parser):
    g = parser.getgroup("boardlab")
    g.addoption("--kernel", default=os.environ.get("BOARDLAB_KERNEL"),
                help="kernel under test: a name from the board's facts (e.g. armmp, rt-armmp), "
                     "a uImage file, or tftp:<file> already on the TFTP server "
                     "(default: the board's default kernel; env BOARDLAB_KERNEL)")
    g.addoption("--root", default=os.environ.get("BOARDLAB_ROOT"), choices=["ramdisk", "nfs"],
                help="root file system: ramdisk or nfs (default: the board's; env BOARDLAB_ROOT)")
    g.addoption("--ramdisk", default=os.environ.get("BOARDLAB_RAMDISK"),
                help="ramdisk uImage to boot instead of the board's (a root file system variant)")
    g.addoption("--run-dir", default=os.environ.get("BOARDLAB_RUN_DIR"),
                help="directory for this run's results and console logs "
                     "(default: results/<date>-<time>)")
    g.addoption("--quick", action="store_true", default=bool(os.environ.get("BOARDLAB_QUICK")),
                help="quick mode: the latency programs' short timing loops")
    g.addoption("--boot-repeats", type=int, default=3,
                help="boots per boot-time measurement (at least; default 3)")
    g.addoption("--repeats", type=int, default=1,
                help="samples of every repeated measurement (noisy figures: jitter's, a ring's, "
                     "boots: at least --boot-repeats) before the verdict; 5 to record baselines")
    g.addoption("--max-repeats", type=int, default=5,
                help="while a noisy metric's verdict is unknown, more samples up to this many")
    g.addoption("--jitter-duration", type=int, default=None,
                help="cyclictest run length in seconds (default 60, in quick mode too: a "
                     "shorter run's maximum is not decidable)")
    g.addoption("--phases", action="store_true",
                help="boot time: one more boot with the kernel's phase log (initcall_debug) after the "
                     "milestone boots, its spans in boot-phases.md/json (the figures stay without it)")
    g.addoption("--baselines-dir", default=os.environ.get("BOARDLAB_BASELINES_DIR"),
                help="where the stored baselines are (default: kernels/ of this checkout; "
                     "env BOARDLAB_BASELINES_DIR)")
    g.addoption("--build-alongside", action="store_true", default=bool(os.environ.get("BOARDLAB_BUILD_ALONGSIDE")),
                help="the kernel build (test_build.py) in a process of its own while the board's suites "
                     "run, its tests last: a run takes the longer of the two, not their sum; "
                     "host-clock figures say what shared the host (the main job's way)")
    g.addoption("--update-baselines", action="store_true",
                help="write this run's metrics as the stored baselines (kernels/<kernel>/<board>.yaml);"
                     " nothing else ever changes them")


def pytest_sessionstart(session):
    """An environment through the coordinator (lab/remote/): a coordinator that does not
    answer is one line and exit 2 before anything runs, not a traceback per test."""
    from boardlab.envgen import unreachable_coordinator
    why = unreachable_coordinator(session.config.getoption("lg_env", default=None),
                                  session.config.getoption("lg_coordinator", default=None))
    if why:
        pytest.exit(why, returncode=2)


@pytest.fixture(scope="session")
def run_dir(request):
    """The run's directory, checked writable before any board is booted; the default
    is a new one (two runs started in the same second get two)."""
    from boardlab.judge.results import RunDirError, prepare_run_dir
    try:
        return prepare_run_dir(request.config.getoption("--run-dir"))
    except RunDirError as e:
        pytest.exit(str(e), returncode=4)


@pytest.fixture(scope="session")
def board_strategy(strategy, run_dir, request):
    """The board's strategy, the command line's kernel and root selected, its place held
    where LAVA shares the board (sharing.placehold: the sweep's runs inherit the sweep's)."""
    from boardlab.sharing.placehold import place_held
    opt = request.config.getoption
    strategy.select(kernel=opt("--kernel") or "", root=opt("--root") or "", ramdisk=opt("--ramdisk") or "")
    strategy.log_dir = str(run_dir / "console")
    _prepare_virtual_board(strategy.board)
    # the strategy knows when each milestone is due from these baselines on its own
    strategy.baselines_dir = str(opt("--baselines-dir") or "")
    _check_before_boot(strategy, request)
    with place_held(strategy.board, "pytest"):
        yield strategy
        strategy.transition("off")   # powered off before the place is given back


def _prepare_virtual_board(board):
    """A virtual board's images are built when it is first used (not at `vlab up`)."""
    from boardlab.errors import BoardlabError, InputError
    from boardlab.vlab.host import prepare_if_virtual
    try:
        prepare_if_virtual(board)
    except BoardlabError as e:   # InputError: its lab host is down, said as it is
        pytest.exit(str(e) if isinstance(e, InputError) else f"board {board.name}: its images: {e}", returncode=4)


def _check_before_boot(strategy, request):
    """A selection the board cannot boot (a name U-Boot cannot take, a file not built yet) or
    a malformed baseline of the kernel under test: an error before the board is booted."""
    from boardlab.boot.strategy import BootError
    root = Path(request.config.getoption("--baselines-dir") or baselines.KERNELS_DIR)
    try:
        strategy.require_files(plan := strategy.plan())
        baselines.load(plan.kernel.name, strategy.board.name, root)
    except (baselines.BaselineError, BootError) as e:
        pytest.exit(f"boardlab: {e} (nothing was booted)", returncode=4)


@pytest.fixture(scope="session")
def unpowered_strategy(target):
    """The board's strategy, not activated: nothing connects to the console or the power
    switch (what a suite needs that runs without the board, e.g. the kernel build)."""
    return target.get_driver("Strategy", activate=False)


@pytest.fixture(scope="session")
def board_facts(unpowered_strategy):
    """The board's facts (boardlab.facts.board.Board), as its environment names them."""
    return unpowered_strategy.board


# Memory right after boot, as the study: before the suites whose load leaves slab, sockets
# and processes behind (workload). Each family's place and mark: its record (measure.families).
SUITE_ORDER = families.in_suite_order({"test_shell": 30})


def pytest_collection_modifyitems(config, items):
    for item in (i for i in items if getattr(families.BY_NAME.get(_suite_of(i.path)), "workload", False)):
        item.add_marker(pytest.mark.workload)
    order = SUITE_ORDER
    if config.getoption("--build-alongside"):   # the build runs beside them: its tests wait for it last
        order = tuple(s for s in SUITE_ORDER if s != "test_build") + ("test_build",)
    ranked = {name: i for i, name in enumerate(order)}   # stable: each suite keeps its own order
    items.sort(key=lambda i: ranked.get(i.path.stem, len(order)) if _suite_of(i.path) else len(order))
    config.stash[_BUILD_SELECTED] = any(i.path.stem == "test_build" for i in items)
    chosen = {}
    for item in items:   # a suite named test by test (file::test) is not run whole
        chosen.setdefault(item.parent, []).append(item)
    for module, its in chosen.items():
        if _suite_of(module.path) and len(its) < sum(isinstance(x, pytest.Function) for x in module.collect()):
            _PARTIAL_SUITES.add(_suite_of(module.path))


_BUILD_SELECTED = pytest.StashKey[bool]()


@pytest.fixture(scope="session", autouse=True)
def build_alongside(request):
    """With --build-alongside and the build suite selected: the kernel build, started
    before the first test (boardlab.kernelbuilds.alongside); None otherwise."""
    from boardlab.kernelbuilds import alongside
    if not (request.config.getoption("--build-alongside") and request.config.stash.get(_BUILD_SELECTED, False)):
        yield None
        return
    board = request.getfixturevalue("board_facts")
    if alongside.not_buildable(board):   # the build suite says why it skips
        yield None
        return
    results = request.getfixturevalue("results")
    build = alongside.BuildAlongside(board, alongside.configs_of(board.name), request.getfixturevalue("run_dir") / "kernel-build.log")
    results.host_load = alongside.BESIDE_BUILD
    yield build
    build.stop()


@pytest.fixture(scope="session")
def disturbed_boots():
    """Boots (boot_count) on which a workload test has run."""
    return set()


@pytest.fixture
def shell(board_strategy, target, request, disturbed_boots, results):
    """The board at a shell with the selected kernel: booted once, reused after; kernel/boot said."""
    with outcomes.boot_recorded(results, board_strategy.board.name, board_strategy.kernel_under_test.name):
        board_strategy.transition("shell")
    yield target.get_driver("ShellDriver")
    if request.node.get_closest_marker("workload"):
        disturbed_boots.add(board_strategy.boot_count)


@pytest.fixture
def tool_set(board_facts, shell):
    """tool_set(FAMILY) -> whose programs the family runs here (its record, by the board's isa);
    Debian's missing package skips, the project's missing binary fails, unless own_onto."""
    from boardlab.images import ownprograms
    from boardlab.measure import families, sample

    def of(family: str) -> str | None:
        tools = families.tool_set(family, board_facts.isa)
        why = sample.why_not_measurable(shell, family, tools)
        if why and tools == families.OWN and families.get(family).own_onto:
            ownprograms.onto_running_board(shell, board_facts.isa)   # put there, or it raises
        elif why:
            (pytest.fail if tools == families.OWN else pytest.skip)(f"board {board_facts.name}: {why}")
        return tools
    return of


@pytest.fixture
def fresh_shell(board_strategy, shell, disturbed_boots):
    """A shell on a boot no workload test has run on: power-cycled if one has (a test
    run with -k, or a suite order of one's own), so memory reads as after boot."""
    if board_strategy.boot_count in disturbed_boots:
        board_strategy.transition("off")
        board_strategy.transition("shell")
    return shell


@pytest.fixture(scope="session")
def results(run_dir, request):
    """The run's results.json; with --update-baselines, written as baselines at the end."""
    from boardlab.judge.results import RunResults
    res = RunResults(run_dir, Path(request.config.getoption("--baselines-dir") or baselines.KERNELS_DIR))
    request.config.boardlab_results = res
    yield res
    if request.config.getoption("--update-baselines") and res.metrics:
        for path in res.update_baselines():
            print(f"\nbaselines written: {path}")


class SuiteGate(Gate):
    """boardlab.judge.gate.Gate for a test: check() fails the test on a regression."""

    def check(self):
        why = self.regressed()
        if why:
            pytest.fail(why, pytrace=False)


@pytest.fixture
def gate(results, board_strategy, request):
    return SuiteGate(results, board_strategy, request.node.nodeid,
                     request.config.getoption("--repeats"), request.config.getoption("--max-repeats"))


@pytest.fixture
def offline_gate(results, unpowered_strategy, request):
    """A gate for figures measured without the board (the kernel build): the board's
    console and power switch are never touched, so it runs on any host."""
    return SuiteGate(results, unpowered_strategy, request.node.nodeid)


def pytest_terminal_summary(terminalreporter, config):
    """Where a run of the suites left its results, their verdicts' counts, and where the
    boot time went (--phases): what `pytest --lg-env ... testsuites/` ends with."""
    res = getattr(config, "boardlab_results", None)
    if res is not None and res.metrics:
        from boardlab.pages.report import run_ending
        terminalreporter.write_sep("-", "boardlab")
        for line in run_ending(res.run_dir):
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def quick(request):
    return request.config.getoption("--quick")


# ---- nothing goes missing in silence -----------------------------------------------------
# A suite run whole (none of its tests deselected or skipped) must produce every metric of
# its family that the baseline of a kernel it measured holds; the rest are recorded as
# 'missing' and fail the suite (as LAVA's expected test cases do).
_PARTIAL_SUITES: set = set()


def _suite_of(path) -> str | None:
    path = Path(str(path))
    return path.stem.removeprefix("test_") if path.parent.name == "testsuites" else None


def pytest_deselected(items):
    _PARTIAL_SUITES.update(_suite_of(i.path) for i in items)


def pytest_runtest_logreport(report):
    if report.skipped:
        _PARTIAL_SUITES.add(_suite_of(report.fspath))


@pytest.fixture(scope="module", autouse=True)
def nothing_missing(request):
    yield
    suite = _suite_of(request.path)
    res = getattr(request.config, "boardlab_results", None)   # the run's, once a test made it
    if suite is None or suite in _PARTIAL_SUITES or res is None:
        return
    measured = {(m.board, m.kernel) for m in res.metrics if m.suite == suite and m.value is not None}
    missing = [m for board, kernel in sorted(measured) for m in res.mark_missing(board, kernel, {suite})]
    if missing:
        pytest.fail("missing (the baseline holds them, this run did not produce them):\n"
                    + "\n".join(f"  {m.board} {m.kernel} {m.describe()}" for m in missing), pytrace=False)
