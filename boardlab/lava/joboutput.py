"""LAVA's job logs on disk (job-output/<year>/<month>/<day>/<job id>/output.yaml) outlive
its database. When the database is made anew (PostgreSQL's cluster recreated, LAVA
purged and installed again), job ids start at 1 again, and a new job whose directory
already exists has its log appended to the earlier job's: `lava results` then reads a
boot of another board (seen 2026-11-29: job 8 of qemu-ppc read as qemu-arm's). The local
server sets such directories aside before it runs a job."""
from __future__ import annotations

import time
from pathlib import Path

from boardlab.lava.files import JOB_OUTPUT


def of_an_earlier_database(highest_id: int, root: Path = JOB_OUTPUT) -> list[Path]:
    """The job directories whose id the database has not reached: an earlier database's."""
    return sorted(d for d in root.glob("*/*/*/*") if d.is_dir() and d.name.isdigit()
                  and int(d.name) > highest_id)


def set_aside(highest_id: int, root: Path = JOB_OUTPUT, echo=print) -> Path | None:
    """Moves them to job-output-earlier-<time>/ beside job-output (kept, not deleted)."""
    stale = of_an_earlier_database(highest_id, root)
    if not stale:
        return None
    aside = root.parent / f"{root.name}-earlier-{time.strftime('%Y%m%d-%H%M%S')}"
    for d in stale:
        (aside / d.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        d.rename(aside / d.relative_to(root))
    echo(f"lava server: the logs of {len(stale)} job(s) of an earlier database (ids above "
         f"{highest_id}, the highest this one has) set aside in {aside}")
    return aside
