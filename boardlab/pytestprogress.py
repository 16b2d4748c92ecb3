"""Progress lines of a suite's long steps shown while pytest runs, as a command shows them
(a plugin that boardlab.pytestplugin loads): pytest captures a test's output until it
ends, and a jitter run under load or a family's groups of runs take minutes. Only in a session on
a board (--lg-env); the project's own tests read their progress lines themselves."""
import sys

from boardlab import log


def pytest_configure(config):
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is None or not config.getoption("lg_env", default=None):
        return

    def past_capture(line: str) -> None:
        with capman.global_and_fixture_disabled():
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
    log.write_through(past_capture)


def pytest_unconfigure(config):
    log.write_through(None)
