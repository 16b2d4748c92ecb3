"""Files that readers see whole: written beside their place under a temporary name and
renamed over it, so a reader (or a crash) sees the old file or the new one, never half;
those several processes change, changed in turn under an flock."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def replaced(path: Path, mode: int = 0o644, prefix: str | None = None):
    """-> a temporary path beside `path`: write it in the block; it replaces `path` (with
    `mode`) when the block ends, and is removed if the block fails."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix or f".{path.name}.")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write(path: Path, text: str, mode: int = 0o644):
    """Write text to path whole (its directory made if missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replaced(path, mode) as tmp:
        tmp.write_text(text)


@contextlib.contextmanager
def locked(path: Path):
    """An flock on <path>.lock for the block (gone with its process, also on a crash):
    those who read, change and write `path` take turns."""
    lock = Path(f"{path}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def update_json(path: Path, change) -> dict:
    """path's JSON object ({} if none) changed by change(doc) and written whole, under
    locked(path): read afresh there, so a change another writer made meanwhile is kept.
    Returns the object as written."""
    with locked(path):
        doc = json.loads(Path(path).read_text()) if Path(path).exists() else {}
        change(doc)
        atomic_write(path, json.dumps(doc, indent=1) + "\n")
    return doc
