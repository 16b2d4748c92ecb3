"""A virtual lab host's NFS exports as nfs-ganesha serves them: each board's root, and
each running LAVA job's root to its own board (boardlab.lab.jobroots keeps which, in
the lab host's run directory). Written at `vlab up` and whenever a job's root comes or
goes; SIGHUP makes ganesha re-read its exports (adding, updating and removing, at once:
a removed export's mounts go stale on their next request)."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from boardlab.errors import LAB, LabFault
from boardlab.facts import hostconfigs
from boardlab.facts.board import load_board
from boardlab.facts.labhosts import LabHost

STATE = "lava-job-roots.json"


class JobRootError(LabFault):
    """A job root could not be exported to its board, or unexported."""
    party, part = LAB, "nfs"


def run_dir(lab: LabHost) -> Path:
    return Path(lab.run_dir or f"/run/boardlab/{lab.name}")


def exported(lab: LabHost) -> dict:
    """{board: the LAVA job root exported to it now}."""
    try:
        return json.loads((run_dir(lab) / STATE).read_text() or "{}")
    except (OSError, ValueError):
        return {}


def ganesha_exports(lab: LabHost, roots: dict | None = None) -> list:
    boards = [load_board(b) for b in lab.boards]
    roots = exported(lab) if roots is None else roots
    roots = {b: p for b, p in roots.items() if Path(p).is_dir()}   # a finished job's is gone
    return hostconfigs.nfs_export_clients(lab, boards) + hostconfigs.lava_job_exports(boards, roots)


def write_ganesha_conf(lab: LabHost, roots: dict | None = None) -> Path:
    conf = run_dir(lab) / "ganesha.conf"
    exports = ganesha_exports(lab, roots)
    for e in exports:   # ganesha refuses an export whose directory is missing
        Path(e.path).mkdir(parents=True, exist_ok=True)
    # whole, then renamed: ganesha re-reading a half-written file drops every export
    tmp = conf.with_suffix(".conf.new")
    tmp.write_text(hostconfigs.ganesha_conf(exports, lab.server_ip,
                                            recovery=str(run_dir(lab) / "ganesha-recovery")))
    os.replace(tmp, conf)
    return conf


def reload_ganesha(lab: LabHost, roots: dict) -> None:
    write_ganesha_conf(lab, roots)
    try:
        pid = int((run_dir(lab) / "ganesha.pid").read_text().split()[0])
        os.kill(pid, signal.SIGHUP)
    except (OSError, ValueError, IndexError) as e:
        raise JobRootError(f"lab host {lab.name}: its NFS server (ganesha, "
                           f"{run_dir(lab) / 'ganesha.pid'}) could not be told to re-read "
                           f"its exports: {e}") from None
