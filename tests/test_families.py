"""A measurement family is one module (boardlab/measure/families/<name>.py): its metrics,
clock, packages, measurement, reader, board-side script, LAVA test definition and order
are read from there; the package lists them once, and no code lists the families apart
from it or tests a family's name outside its own module."""
import ast
import re

import pytest
import yaml


from boardlab import lava
from boardlab.facts.board import ISAS, load_board
from boardlab.measure import catalogue, clocks, families, sample
from paths import ROOT

NAMES = set(families.NAMES)
# where code lists families; bench/ is left out: its benches pick families of their own
FAMILIES_DIR = ROOT / "boardlab" / "measure" / "families"
CODE = [p for d in ("boardlab", "testsuites", "scripts") for p in (ROOT / d).rglob("*.py")
        if p.parent != FAMILIES_DIR]
MODULES = sorted(FAMILIES_DIR.glob("*.py"))


def _owner(path) -> str:
    """The family a module of the package is (lmbench_output is lmbench's reader)."""
    return path.stem.removesuffix("_output")


def _family(node) -> str | None:
    """The family a string constant names ('jitter', 'test_jitter', 'test_jitter.py')."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value.removeprefix("test_").removesuffix(".py")
        return name if name in NAMES else None
    return None


def _listings(tree) -> list[tuple[int, set]]:
    """(line, families) of every literal that names two families or more: a tuple, list or
    set of them, a dict keyed by them, a string of them ('a,b'), a function that compares
    a value with two of them (an if/elif over families)."""
    out = []
    for node in ast.walk(tree):
        named = set()
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = {f for f in map(_family, node.elts) if f}
        elif isinstance(node, ast.Dict):
            named = {f for f in map(_family, node.keys) if f}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = set(re.split(r"[,\s]+", node.value)) & NAMES if re.fullmatch(r"[\w,\s]+", node.value) else set()
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            named = {f for c in ast.walk(node) if isinstance(c, ast.Compare)
                     for f in map(_family, [c.left, *c.comparators]) if f}
        if len(named) >= 2:
            out.append((node.lineno, named))
    return out


def test_no_family_is_listed_apart_from_its_record():
    found = [f"{p.relative_to(ROOT)}:{line}: {', '.join(sorted(named))}"
             for p in CODE for line, named in _listings(ast.parse(p.read_text()))]
    assert found == [], "families listed apart from boardlab/measure/families/:\n" + "\n".join(found)


# single-family checks still outside the record (issue "The house", item 1: a family as
# one module); each new one fails the test below
LEFT = {("boardlab/bisect/run.py", "boot_time"),      # a boot-time bisect's hint: where the boot slowed
        ("boardlab/kernel/sweep.py", "boot_time"),    # a sweep's boot table
        ("boardlab/pytestplugin.py", "build"), ("boardlab/pages/timing.py", "build"),   # the build suite beside
        ("boardlab/cli.py", "build"), ("boardlab/kernel/cli.py", "build")}   # a command's action, no family


def _single_checks(tree) -> set:
    """The families a comparison tests by name ('x == "jitter"', 'suite != "build"', '"boot_time" in f')."""
    return {f for node in ast.walk(tree) if isinstance(node, ast.Compare)
            for f in map(_family, [node.left, *node.comparators]) if f}


def test_no_family_is_tested_by_its_name_outside_its_record():
    """A family's own behaviour (host work, its one root, its run's settings, how a
    bisect narrows its run) is its record's field, not a check of its name elsewhere."""
    found = {(str(p.relative_to(ROOT)), f) for p in CODE for f in _single_checks(ast.parse(p.read_text()))}
    assert found <= LEFT, sorted(found - LEFT)
    assert LEFT <= found, f"gone, so off the list: {sorted(LEFT - found)}"


def test_a_family_module_names_no_other_family():
    """Each family's module knows itself only: a literal naming another family there (a
    check, a list, a metric key) would be that family's behaviour living in the wrong
    module. The package's __init__ and record name none."""
    found = []
    for p in MODULES:
        own = _owner(p)
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words = set(re.findall(r"\b(\w+)\.\w+", node.value)) | {node.value.removeprefix("test_")}
                others = {w for w in words & NAMES if w != own}
                if others:
                    found.append(f"{p.name}:{node.lineno}: {', '.join(sorted(others))}")
    assert found == [], found


def test_the_listing_check_finds_each_kind_of_list():
    code = '''
A = ("boot_time", "memory")
B = {"lmbench": 1, "jitter": 2}
C = "boot_time,memory,lmbench"
D = ["test_memory", "test_jitter.py"]
def f(name):
    if name == "memory":
        return 1
    elif name == "lmbench":
        return 2
E = ("boot_time",)
'''
    assert sorted(line for line, _ in _listings(ast.parse(code))) == [2, 3, 4, 5, 6]


def test_every_metric_is_of_a_family_and_every_family_has_metrics():
    assert {m.suite for m in catalogue.METRICS.values()} == NAMES
    for f in families.FAMILIES:
        assert f.metrics and all(m.suite == f.name for m in f.metrics), f.name


def test_a_family_without_a_clock_is_refused_by_name():
    with pytest.raises(families.FamilyError, match="family 'toaster' has no clock"):
        families.Family("toaster", clock="", order=99)


def test_an_unknown_family_has_no_clock_rather_than_the_hosts():
    with pytest.raises(families.UnknownFamily, match="no family 'toaster'"):
        clocks.metric_clock("toaster", "slices", "s", load_board("qemu-arm"))
    assert clocks.metric_clock("build", "real_s", "s", load_board("qemu-arm")) == clocks.HOST
    assert clocks.metric_clock("memory", "free_free_kb", "kB", load_board("qemu-arm")) == clocks.NO_CLOCK


def test_what_each_record_names_exists():
    for f in families.FAMILIES:
        assert (ROOT / "testsuites" / f"test_{f.name}.py").exists(), f.name
        for path in filter(None, (f.script, f.testdef, *f.board_files)):
            assert (ROOT / families.TESTDEFS / path).exists(), f"{f.name}: {path}"
        assert {n for n, _ in f.figures} <= {m.name for m in f.metrics}, f.name
        if f.testdef:
            spec = yaml.safe_load((ROOT / families.TESTDEFS / f.testdef).read_text())
            assert spec["metadata"]["name"] == f.name
            tools = {"TOOLS", "OWN_ISA"} if f.tools is not None else set()   # whose programs: jobs.py says
            assert set(f.params(families.Options())) | tools == set(spec.get("params") or {}), f.name
        if f.tools is not None:
            assert set(f.tools) == set(ISAS) and set(f.tools.values()) <= set(families.TOOL_SETS), f.name
        if f.on_boot:
            assert callable(f.measure) or (f.run and (f.figures or f.reads)), f.name
    assert list(lava.SUITES) == [f.name for f in families.FAMILIES if f.lava]


def test_a_family_of_a_script_and_its_figures_is_measured_from_its_record(tmp_path, monkeypatch):
    """A family with no measurement of its own (its record's `measure`): its board-side files written to
    the board, its run, its figures read by their patterns; a figure lacking is the
    board's MeasureError."""
    from boardlab.measure import target_load
    from testdefs import LocalShell, stub_commands
    toy = families.Family("toy", clock=families.GUEST, order=99, board_files=("lib/cycles.sh",),
                          run="type cycles_reduce >/dev/null && echo 'Time: 1.5'",
                          figures=(("time_s", r"^Time:\s*([\d.]+)"),))
    monkeypatch.setitem(families.BY_NAME, "toy", toy)
    monkeypatch.setitem(target_load.ON_BOARD, "cycles.sh", str(tmp_path / "cycles.sh"))
    shell = LocalShell(stub_commands(tmp_path))
    assert sample.family("toy", shell, None) == {"toy.time_s": 1.5}
    monkeypatch.setitem(families.BY_NAME, "toy", families.Family(
        "toy", clock=families.GUEST, order=99, board_files=toy.board_files, run="echo nothing", figures=toy.figures))
    with pytest.raises(sample.MeasureError, match="toy: no time_s"):
        sample.family("toy", shell, None)


def test_lmbench_is_named_in_its_own_modules_only():
    """The house's goal: a family's knowledge in its module. lmbench, the family whose
    name no other word shares, is named in no other file under boardlab/ (at most 3)."""
    named = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "boardlab").rglob("*.py")
                   if re.search(r"\blmbench\b", p.read_text()))
    assert named == ["boardlab/measure/families/lmbench.py", "boardlab/measure/families/lmbench_output.py"], named
