"""Where the tests find the project and their captured data (a module of its own: tests
import it, not conftest, which pytest loads as a plugin)."""
from boardlab.facts.board import PROJECT_ROOT as ROOT

DATA = ROOT / "tests" / "data"
