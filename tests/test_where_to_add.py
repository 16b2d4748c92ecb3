"""docs/where-to-add.md names only what exists: each path (placeholders like <board>
matched by a glob) and each `module.symbol` of boardlab. A page a newcomer acts on that
names a symbol gone since is worse than none."""
import importlib
import re

from paths import ROOT

PAGE = ROOT / "docs" / "where-to-add.md"


def _named():
    return re.findall(r"`([^`\s]+)`", PAGE.read_text())


def test_every_path_it_names_exists():
    missing = []
    for name in _named():
        if "/" not in name or name.startswith(("http", "-")):
            continue
        pattern = re.sub(r"<[^>]+>", "*", name.rstrip("/"))
        if not list(ROOT.glob(pattern)):
            missing.append(name)
    assert missing == []


def test_every_symbol_it_names_exists():
    missing, checked = [], 0
    for name in _named():
        parts = name.split(".")
        if "/" in name or len(parts) < 2 or not all(p.isidentifier() for p in parts):
            continue
        for split in range(len(parts), 0, -1):   # the longest module prefix that imports
            try:
                obj = importlib.import_module("boardlab." + ".".join(parts[:split]))
            except ImportError:
                continue
            for attr in parts[split:]:
                obj = getattr(obj, attr, None)
            checked += 1
            if obj is None:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert missing == [] and checked >= 15, (missing, checked)
