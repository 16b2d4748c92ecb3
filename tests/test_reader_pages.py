"""The pages a reader acts on say what holds now; the runs behind them are kept in
docs/notes/, dated, as they were measured. A page that piles up every run buries the rule
a reader needs under tables of old figures, so these hold no run: no table with a commit
or a round per row, no output pasted "as printed", no "at <commit>"."""
import re

import pytest

from paths import ROOT

READER_PAGES = ("setup.md", "measurement.md")
RUN_TABLE_HEAD = re.compile(r"^\|.*\|\s*(commit|round|at)\s*\|", re.I | re.M)
AT_COMMIT = re.compile(r"\bat [0-9a-f]{7,12}\b")
PASTED = re.compile(r"as printed[^\n]*:\s*\n\s*```", re.I)


@pytest.mark.parametrize("page", READER_PAGES)
def test_a_reader_page_holds_no_run(page):
    text = (ROOT / "docs" / page).read_text()
    found = [m.group(0) for rx in (RUN_TABLE_HEAD, AT_COMMIT, PASTED) for m in rx.finditer(text)]
    assert found == [], f"docs/{page}: runs belong in docs/notes/: {found}"


@pytest.mark.parametrize("page", READER_PAGES)
def test_its_links_into_the_notes_land(page):
    text = (ROOT / "docs" / page).read_text()
    for target, anchor in re.findall(r"\]\((notes/[^)#]+)(?:#([^)]+))?\)", text):
        note = ROOT / "docs" / target
        assert note.exists(), f"docs/{page}: {target} does not exist"
        if anchor:
            anchors = {_anchor(h) for h in re.findall(r"^#+ (.+)$", note.read_text(), re.M)}
            assert anchor in anchors, f"docs/{page}: no heading {anchor!r} in {target}"


def _anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
