"""What became of each change point, kept whole on disk: <data>/notes.json, beside the
watch's watched.json, {change point key: {"change": its line, "state": ..., "note": what
its bisect found, or why it was not bisected or given up; "report": a culprit's
report.txt, if one was written}}. The history page shows them.
SQUAD's annotation of a build is only a pointer here: its one field a build holds 1024
characters, and five change points' notes at one build did not fit (the culprit's was
cut)."""
from __future__ import annotations

import json
from pathlib import Path

from boardlab.files import update_json

NOTES = "notes.json"
POINTER = "change point(s) from this build: each, with what its bisect found, on `boardlab history page`"


def key(c) -> str:
    """A change point's name: its metric, environment and first build (a ChangePoint)."""
    return f"{c.metric}@{c.environment}@{c.build}"


def keep(data: Path, name: str, record: dict) -> None:
    """One change point's record, whole, under the file's lock (others' records kept)."""
    update_json(Path(data) / NOTES, lambda doc: doc.__setitem__(name, record))


def read(data: Path) -> dict:
    path = Path(data) / NOTES
    return json.loads(path.read_text()) if path.exists() else {}
