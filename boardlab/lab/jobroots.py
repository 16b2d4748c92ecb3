"""Each LAVA job's NFS root exported to its own board alone, for as long as the job has
the board powered (boardlab.lab.powerguard calls export at power on, unexport at power
off). lava-dispatcher extracts a job's root under LAVA_NFS_DIR/<prefix><job id>, a name
known only when the job runs; exporting that whole directory to every board of the lab
host would let a kernel under test rewrite another board's job (and its test results).

The lab host's NFS server: a virtual one's nfs-ganesha (its config rewritten, then
SIGHUP: ganesha re-reads its exports, adding and removing), a real one's
nfs-kernel-server (`exportfs -o ... ADDRESS:PATH`, `exportfs -u`). What is exported now
is kept in the lab host's run directory (boardlab.vlab.jobexports.STATE), under a lock:
two boards' jobs power on at once."""
from __future__ import annotations

import contextlib
import fcntl
import json
import subprocess

from boardlab.facts.board import Board
from boardlab.facts.labhosts import LabHost
from boardlab.vlab.jobexports import STATE, JobRootError, exported, reload_ganesha, run_dir

__all__ = ["JobRootError", "exported", "export", "unexport"]


@contextlib.contextmanager
def _locked(lab: LabHost):
    d = run_dir(lab)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / (STATE + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield d / STATE


def export(lab: LabHost, board: Board, root) -> None:
    with _locked(lab) as state:
        roots = exported(lab)
        old = roots.get(board.name)
        roots[board.name] = str(root)
        _apply(lab, board, roots, old if old != str(root) else None, str(root))
        state.write_text(json.dumps(roots, indent=1) + "\n")


def unexport(lab: LabHost, board: Board) -> None:
    with _locked(lab) as state:
        roots = exported(lab)
        old = roots.pop(board.name, None)
        if old is None:
            return
        _apply(lab, board, roots, old, None)
        state.write_text(json.dumps(roots, indent=1) + "\n")


def _apply(lab: LabHost, board: Board, roots: dict, removed: str | None, added: str | None):
    if lab.kind == "virtual":
        reload_ganesha(lab, roots)
        return
    opts = "rw,no_root_squash,subtree_check,sync"
    for args in ([["-u", f"{board.network.ip}:{removed}"]] if removed else []) + \
                ([["-o", opts, f"{board.network.ip}:{added}"]] if added else []):
        r = subprocess.run(["exportfs", *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise JobRootError(f"board {board.name}: exportfs {' '.join(args)}: "
                               f"{(r.stderr or r.stdout).strip() or 'exit ' + str(r.returncode)}")
