"""Where the tests find the project and their captured data, and the two boards they test
(a module of its own: tests import it, not conftest, which pytest loads as a plugin;
scripts/test.sh runs it to learn which board it builds beside the set-up)."""
from boardlab.facts.board import PROJECT_ROOT as ROOT
from boardlab.facts.labfacts import default_board

DATA = ROOT / "tests" / "data"
DEFAULT_BOARD = default_board()   # the lab's (places/lab.yaml): the session the tests run on it
# The PowerPC board: its images are a clean kernel build of their own, built beside the
# set-up and the default board's tests (scripts/test.sh, conftest.py)
BUILT_BESIDE = "qemu-ppc"


def lmbench_deselected(groups) -> list[str]:
    """pytest's --deselect for each of lmbench's groups (testsuites/test_lmbench.py), each
    checked to be there: pytest ignores a --deselect that names no test, so a renamed group
    would come back in silence."""
    suite = ROOT / "testsuites" / "test_lmbench.py"
    lacking = [g for g in groups if f"def {g}(" not in suite.read_text()]
    assert not lacking, f"{suite}: no {lacking}"
    return [f"--deselect=testsuites/test_lmbench.py::{g}" for g in groups]


def real_roots() -> list[str]:
    """The boards `boardlab images root` builds a root for (tests/test_realroot.py): on a
    host's first run their cross builds (musl, soft-fp, busybox) follow the PowerPC
    board's images beside the set-up, so the unit tests find them built."""
    from boardlab.facts.board import BOARDS_DIR, load_board
    from boardlab.images.realroot import refuse_why
    boards = (load_board(p) for p in sorted(BOARDS_DIR.glob("*.yaml")))
    return [b.name for b in boards if refuse_why(b) is None]


if __name__ == "__main__":
    import sys
    print(" ".join(real_roots()) if sys.argv[1:] == ["--real-roots"] else BUILT_BESIDE)
