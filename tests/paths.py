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

if __name__ == "__main__":
    print(BUILT_BESIDE)
