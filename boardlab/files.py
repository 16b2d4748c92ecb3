"""Files that readers see whole: written beside their place under a temporary name and
renamed over it, so a reader (or a crash) sees the old file or the new one, never half."""
from __future__ import annotations

import contextlib
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
