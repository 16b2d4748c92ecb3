"""A test leaves the package as it found it: after each test (its fixtures torn down), every
`boardlab` module is the one in sys.modules before it, each of its names holds the object
it held, and no module holds a function, class or mock of the tests' own. A test that
leaves one is an error at its own teardown, naming the module and the name; the package is
then put back, so the tests after it run on the real package (the leak is named at its
source, not where it happens to bite).

How a patch outlives monkeypatch: a module imported for the first time while a name it
imports with `from M import name` is patched captures the patch, and monkeypatch, which
records the value it finds when it patches that module too, restores the captured patch.
A module replaced in sys.modules, or a name set without monkeypatch, does it as well."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

PACKAGE = "boardlab"
TESTS = Path(__file__).resolve().parent
_MISSING = object()
SNAPSHOT_KEY = pytest.StashKey()

# Names a module sets for itself on first use, not a test's doing (a lazy import, a cache
# filled once): module -> names.
SETS_ITSELF: dict[str, frozenset[str]] = {}


def _package_modules() -> dict:
    return {name: m for name, m in list(sys.modules.items())
            if m is not None and (name == PACKAGE or name.startswith(PACKAGE + "."))}


def snapshot() -> dict:
    """{module name: (module, {name: value})} of every loaded boardlab module."""
    return {name: (m, dict(vars(m))) for name, m in _package_modules().items()}


def _in_the_tests(path) -> bool:
    path = Path(path)
    return path.name.startswith("test_") or path.name == "conftest.py" or path.resolve().is_relative_to(TESTS)


def _is_the_tests(value) -> bool:
    """A function or class defined in tests/ or a test file (a fixture's stand-in), or a mock."""
    if type(value).__module__ == "unittest.mock":
        return True
    code = getattr(value, "__code__", None)
    if code is not None:
        return _in_the_tests(code.co_filename)
    if isinstance(value, type):
        path = getattr(sys.modules.get(value.__module__), "__file__", None)
        return bool(path) and _in_the_tests(path)
    return False


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 90 else text[:87] + "..."


def changes(before: dict) -> list[tuple[str, str, object]]:
    """What differs from `before`: (where, what, how to put it back) each; `how` is
    None for a module that came in during the test and only needs to go."""
    found = []
    now = _package_modules()
    for name, (module, names) in before.items():
        if now.get(name) is not module:
            found.append((name, f"module replaced in sys.modules by {_shown(now.get(name))}", ("module", name, module)))
            continue
        current = vars(module)
        allowed = SETS_ITSELF.get(name, frozenset())
        for attr, value in names.items():
            if attr.startswith("__") or attr in allowed:
                continue
            if current.get(attr, _MISSING) is not value:
                found.append((f"{name}.{attr}", f"is {_shown(current.get(attr, '<deleted>'))}, was {_shown(value)}",
                              ("attr", module, attr, value)))
        for attr in current.keys() - names.keys():
            if _is_the_tests(current[attr]):
                found.append((f"{name}.{attr}", f"added: {_shown(current[attr])}", ("added", module, attr)))
    for name in now.keys() - before.keys():     # imported during the test: did it capture a patch?
        for attr, value in list(vars(now[name]).items()):
            if _is_the_tests(value):
                found.append((f"{name}.{attr}", f"imported while patched, holds {_shown(value)}", ("new", name)))
    return found


def put_back(found) -> None:
    for _, _, how in found:
        kind = how[0]
        if kind == "module":
            sys.modules[how[1]] = how[2]
        elif kind == "attr":
            _, module, attr, value = how
            setattr(module, attr, value)
        elif kind == "added":
            _, module, attr = how
            delattr(module, attr)
        elif kind == "new":    # imported again, cleanly, by whoever needs it next
            name = how[1]
            sys.modules.pop(name, None)
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], child, None) is not None:
                delattr(sys.modules[parent], child)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[SNAPSHOT_KEY] = snapshot()
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield     # the test's own fixtures are torn down by now
    before = item.stash.get(SNAPSHOT_KEY, None)
    if before is None:
        return result
    found = changes(before)
    if found:
        put_back(found)
        lines = "\n".join(f"  {where}: {what}" for where, what, _ in found)
        raise pytest.fail(f"{item.nodeid} left the package changed after it ended (put back now):\n{lines}",
                          pytrace=False)
    return result
