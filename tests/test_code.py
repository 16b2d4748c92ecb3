"""The house rules a newcomer relies on: modules and functions of a readable size, no
import circle, no look-ups into untyped facts, pyflakes clean, dependencies locked."""
import ast
import re
import subprocess
import sys
from pathlib import Path

from paths import ROOT

CODE = [p for d in ("boardlab", "testsuites", "bench", "scripts") for p in (ROOT / d).rglob("*.py")]

MODULE_LINES, FUNCTION_LINES = 300, 60
# modules allowed over MODULE_LINES, and why
LONGER_MODULES: dict = {
    # one lifecycle: the server's processes by PID, its registrations, a dead worker's jobs
    # ended and the arbiter started before the scheduler; split, each part needs the others' PIDs
    "boardlab/lava/localserver.py": "the local LAVA server, up to down",
    # one front: every command's parser and the one place where errors and Ctrl-C become exit codes
    "boardlab/cli.py": "the command line",
    # one bench: its events, its looks at the lab, the power log's overlaps and the table
    "bench/chaos.py": "the chaos bench",
    # one bench: boots of the noisy board kept with the host's share, judged three ways, the table
    "bench/noisy_board.py": "the noisy board's error-rate bench",
    # one bench: the main job's parts alone, the main job, rounds of both in turned order, the tables
    "bench/critical_path.py": "the main job's critical-path bench",
}


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def test_modules_and_functions_are_of_a_readable_size():
    long_modules = {_rel(p): n for p in CODE if (n := len(p.read_text().splitlines())) > MODULE_LINES}
    assert set(long_modules) <= set(LONGER_MODULES), long_modules
    long_functions = []
    for p in CODE:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.end_lineno - node.lineno + 1 > FUNCTION_LINES:
                long_functions.append(f"{_rel(p)}:{node.lineno} {node.name}")
    assert long_functions == []


def _imports(path: Path, module: str) -> set:
    """The boardlab modules a module imports (at any depth in it)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out |= {target} | {f"{target}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_no_import_circle():
    modules = {}
    for p in (ROOT / "boardlab").rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = p
    deps = {m: {d for d in _imports(p, m) if d in modules and d != m} for m, p in modules.items()}
    circles = []

    def walk(m, path):
        for d in deps[m]:
            if d in path:
                circles.append(" -> ".join(path[path.index(d):] + [d]))
            elif len(path) < 12:
                walk(d, path + [d])
    for m in deps:
        walk(m, [m])
    assert circles == []


# the package's rooms, lowest first: a module imports its own room's and lower rooms' only
LAYERS = [
    ("errors", "files", "log", "procs", "net", "yamltext"),  # the ground floor: no facts, no boards
    ("services",),   # host services this project runs, by PID: daemons, PostgreSQL
    ("facts",),      # what a board and a lab host are
    ("measure",),    # what a figure is, what runs on the board for it, parsers
    ("kernelbuilds",),  # kernels built from Debian's source, and their uImages
    ("images",),     # a virtual board's images from Debian packages (its kernels are kernelbuilds')
    ("sharing",),    # a board held while one uses it: the place at the coordinator, the lock on its lab host
    ("boot",),       # a board from power-off to a shell
    ("judge",),      # figures against baselines: verdicts, results, the gate, health
    ("pages",),      # what a person reads: reports, plots, the compare page, the study table
    ("ab",),         # two kernels booted in turn until decided (compare): the floor of bisect and sweep
    ("vlab",),       # the virtual lab host
    ("history",),    # the results database: runs submitted, change points
    ("lava",),       # LAVA's device types, jobs, server
    ("bisect",),     # the automatic bisect
    ("kernel",),     # kernels by what they are: built by version, pinned, swept
    ("lab",),        # the lab as people and schedulers share it: health, at a glance
    ("envgen", "cli", "__main__", "pytestplugin", "pytestfaults", "pytestprogress"),  # generated from the facts; the command line; the suites' plugin
]


def _room(module: str) -> int:
    part = module.split(".")[1]
    return next(i for i, rooms in enumerate(LAYERS) if part in rooms)


def test_imports_only_point_down():
    upward = []
    for p in (ROOT / "boardlab").rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        if name == "boardlab":
            continue
        for dep in _imports(p, name):
            if dep.startswith("boardlab.") and _room(dep) > _room(name):
                upward.append(f"{name} imports {dep}")
    assert sorted(set(upward)) == []


def test_facts_are_read_as_typed_fields():
    pattern = re.compile(r"\bboard\.board\[|\bboard\[\"(?:name|uboot|console|images|power|shell)\"\]")
    users = [_rel(p) for p in CODE + list((ROOT / "tests").glob("*.py")) if pattern.search(p.read_text())]
    assert users == []


def test_pyflakes_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "pyflakes", "boardlab", "tests", "testsuites", "bench",
                        "scripts"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_pinned_dependency_is_locked_with_hashes():
    lock = (ROOT / "requirements.lock").read_text()
    pins = re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert pins
    for name, version in pins:
        entry = re.search(rf"^{re.escape(name.lower())}=={re.escape(version)} \\\n\s+--hash=sha256:",
                          lock.replace("_", "-").lower(), re.M)
        assert entry, f"{name}=={version} is not in requirements.lock: run scripts/lock-deps.sh"


def test_the_architecture_page_names_every_module():
    """docs/architecture.md's rooms are where a newcomer looks for a module: it names each
    one, in its room's entry."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    layout = page[page.index("In `boardlab/`"):page.index("## A figure's way")]
    entries = {}    # room ('' for the top level's entries) -> its text
    for entry in layout.split("\n- ")[1:]:
        room = re.match(r"`(\w+)/`", entry)
        key = room.group(1) if room else ""
        entries[key] = entries.get(key, "") + entry
    missing = []
    for p in (ROOT / "boardlab").rglob("*.py"):
        if p.name == "__init__.py":
            continue
        rel = p.relative_to(ROOT / "boardlab")
        room, name = (rel.parts[0], f"`{p.stem}`") if len(rel.parts) > 1 else ("", f"`{p.name}`")
        if name not in entries.get(room, ""):
            missing.append(_rel(p))
    assert not missing, f"docs/architecture.md does not name, in its room: {missing}"


# prints each collected test as "ITEM <uses the ppc_board fixture> <nodeid>", under argv's -m
COLLECT_UNDER_M = """
import sys, pytest
class Record:
    def pytest_collection_finish(self, session):
        for i in session.items:
            print("ITEM", "ppc_board" in i.fixturenames, i.nodeid)
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", sys.argv[1]], plugins=[Record()]))
"""


def collected_under(marks: str) -> list[tuple[bool, str]]:
    r = subprocess.run([sys.executable, "-c", COLLECT_UNDER_M, marks], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
    return [(uses == "True", nodeid) for _, uses, nodeid in
            (ln.split(" ", 2) for ln in r.stdout.splitlines() if ln.startswith("ITEM "))]


def test_the_ppc_board_marker_is_exactly_the_tests_on_that_board():
    """-m "not slow and not ppc_board" leaves out every test that needs the PowerPC
    board's images (a clean kernel build of their own on a host's first run) and no
    other: the marker follows the fixture, used directly or through another, and is set
    before -m deselects (tests/conftest.py)."""
    rest, on_ppc = collected_under("not slow and not ppc_board"), collected_under("not slow and ppc_board")
    assert len(rest) > 400 and not [nodeid for uses, nodeid in rest if uses]
    assert len(on_ppc) >= 13 and all(uses for uses, _ in on_ppc)


def test_the_kernels_directory_is_named_once():
    """kernels/ (configs, pins, stored baselines) is facts.board.KERNELS_DIR, imported
    wherever it is used (its baseline files are read by measure/baselines.py)."""
    spelled = [_rel(p) for p in CODE for line in p.read_text().splitlines()
               if re.search(r'KERNELS_DIR =|PROJECT_ROOT / "kernels"', line)]
    assert spelled == ["boardlab/facts/board.py"]


def test_matplotlib_is_set_up_in_one_place():
    """pages.plots.pyplot() sets matplotlib's backend; every plot is drawn with it."""
    setting = [_rel(p) for p in CODE if re.search(r"matplotlib\.use\(|rcParams|import matplotlib\.pyplot",
                                                    p.read_text())]
    assert setting == ["boardlab/pages/plots.py"]
