"""Options and fixtures shared by testsuites/ (run with `pytest --lg-env lab/<board>.yaml
testsuites/`): which kernel and root to boot, where the run's results and console
logs go, and the board at shell state (booted once per kernel, then reused)."""
import os
import time
from pathlib import Path

import pytest


def pytest_addoption(parser):
    g = parser.getgroup("boardlab")
    g.addoption("--kernel", default=os.environ.get("BOARDLAB_KERNEL"),
                help="kernel under test: a name from the board's facts (e.g. armmp, rt-armmp), "
                     "a uImage file, or tftp:<file> already on the TFTP server "
                     "(default: the board's default kernel; env BOARDLAB_KERNEL)")
    g.addoption("--root", default=os.environ.get("BOARDLAB_ROOT"), choices=["ramdisk", "nfs"],
                help="root file system: ramdisk or nfs (default: the board's; env BOARDLAB_ROOT)")
    g.addoption("--run-dir", default=os.environ.get("BOARDLAB_RUN_DIR"),
                help="directory for this run's results and console logs "
                     "(default: results/<date>-<time>)")


@pytest.fixture(scope="session")
def run_dir(request):
    path = request.config.getoption("--run-dir") or os.path.join(
        "results", time.strftime("%Y%m%d-%H%M%S"))
    path = Path(path)
    (path / "console").mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def board(strategy, run_dir, request):
    """The board's strategy with the kernel and root of the command line selected.
    Powered off at the end of the session."""
    strategy.select(kernel=request.config.getoption("--kernel") or "",
                    root=request.config.getoption("--root") or "")
    strategy.log_dir = str(run_dir / "console")
    yield strategy
    strategy.transition("off")


@pytest.fixture
def shell(board, target):
    """The board at a shell with the selected kernel: booted once, reused after."""
    board.transition("shell")
    return target.get_driver("ShellDriver")
