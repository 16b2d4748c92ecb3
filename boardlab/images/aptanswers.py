"""apt's answers, kept until apt's package lists change, so that an images step with
nothing to build asks apt nothing. Each apt-cache or apt-get call costs about a second of
CPU, and `apt-get source` of a package the archive does not serve waits on the network for
its 404: the PowerPC board's up-to-date images step made seven such calls, 12 s each time.

An answer is keyed by the question and by the state of apt's lists and sources (names,
sizes, modification times): `apt-get update` or a changed sources.list asks again. A
source package the archive refused is asked for again only then (docs/powerpc.md)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.files import atomic_write

APT_STATE = (Path("/var/lib/apt/lists"), Path("/etc/apt/sources.list"),
             Path("/etc/apt/sources.list.d"), Path("/etc/apt/preferences"),
             Path("/etc/apt/preferences.d"), Path("/var/lib/dpkg/arch"))
STORE = CACHE_DIR / "apt-answers.json"


def apt_state(paths=APT_STATE) -> str:
    """A digest of what apt answers from: every list and source file's name, size and
    modification time (no file is read)."""
    h = hashlib.sha256()
    for top in paths:
        files = sorted(p for p in top.iterdir() if p.is_file()) if top.is_dir() else [top]
        for p in files:
            try:
                st = p.stat()
            except OSError:
                continue
            h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:20]


def _load(store: Path, state: str) -> dict:
    try:
        saved = json.loads(store.read_text())
    except (OSError, ValueError):
        return {}
    return saved.get("answers", {}) if saved.get("apt_state") == state else {}


def answer(question: str, ask, keep=lambda value: True, store: Path = STORE,
           state: str | None = None):
    """ask() once per question and apt state; its answer (JSON: text, lists, dicts) is
    kept when keep(answer) says so. Two processes may ask at once: the later write wins,
    and both are right."""
    state = state or apt_state()
    answers = _load(store, state)
    if question in answers:
        return answers[question]
    value = ask()
    if not keep(value):
        return value
    answers = _load(store, state)   # what another process kept meanwhile
    answers[question] = value
    atomic_write(store, json.dumps({"apt_state": state, "answers": answers}, indent=1) + "\n")
    return value
