"""lava-run on this host: a job run by LAVA's own dispatcher, without a server, after
the checks that turn LAVA's late timeouts into early, named errors."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from boardlab.sharing.placehold import POWER_OWNER_ENV, UNSHARED
from boardlab.facts import hostconfigs
from boardlab.facts.board import Board, load_board
from boardlab.facts.labhosts import LabHost, load_lab_host
from boardlab.lava.errors import LavaFault
from boardlab.lava.devices import render_device
from boardlab.lava.jobs import dump_job
from boardlab.lava.logs import _is_retry, read_log

def dispatcher_config(lab: LabHost) -> dict:
    """lava-run's dispatcher config: the lab host's address on the LAN is the TFTP server
    ({SERVER_IP} in the U-Boot commands). No prefix: a job's files are then under its id alone,
    where the power guard exports its root (boardlab.lab.powerguard.job_root)."""
    return {"dispatcher_ip": lab.server_ip}


def check_tftp_root(lab: LabHost):
    """LAVA stages its files under TFTP_DIRECTORY of /etc/default/tftpd-hpa; the lab's
    tftpd must serve that directory."""
    path = Path("/etc/default/tftpd-hpa")
    if not path.exists():
        raise LavaFault(f"{path} is missing: LAVA reads its TFTP directory from it (package tftpd-hpa)")
    m = re.search(r'^TFTP_DIRECTORY="?([^"\n]+)"?', path.read_text(), re.M)
    lava_dir = os.path.realpath(m.group(1)) if m else None
    if lava_dir != os.path.realpath(lab.tftp_root):
        raise LavaFault(f"LAVA stages TFTP files in {lava_dir} ({path}), but lab host "
                        f"{lab.name} serves {lab.tftp_root} (tftp_root in "
                        f"{lab.path}): make them the same directory")


def check_nfs_export(lab: LabHost, job: dict):
    """A job with an NFS root boots from LAVA's own directory: the lab host must export it."""
    nfs = any("nfsrootfs" in a.get("deploy", {}) for a in job.get("actions", []))
    if nfs and not lab.lava_worker:
        raise LavaFault(f"the job deploys an NFS root, which LAVA extracts under "
                        f"{hostconfigs.LAVA_NFS_DIR}, but lab host {lab.name} does not export it "
                        f"(lava_worker: false in {lab.path})")


def check_board_reachable(board: Board, timeout: float = 2.0):
    """Before lava-run powers anything: the board's console port answers (ser2net on its
    lab host). A clear error here beats LAVA's connection timeout minutes later."""
    host = board.serial_host
    port = board.console.ser2net_port
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        hint = " (the virtual lab: boardlab vlab up)" if board.virtual else ""
        raise LavaFault(f"board {board.name}: its console {host}:{port} (console.ser2net_port "
                        f"in {board.path}) does not answer: {e}{hint}") from None


def prepare_run(board: Board, job: dict, work: Path, lab: LabHost) -> dict[str, Path]:
    work.mkdir(parents=True, exist_ok=True)
    files = {"job": work / "job.yaml", "device": work / "device.yaml",
             "dispatcher": work / "dispatcher.yaml"}
    files["job"].write_text(dump_job(job))
    files["device"].write_text(render_device(board))
    files["dispatcher"].write_text(yaml.safe_dump(dispatcher_config(lab)))
    return files


def _summary(entry) -> str | None:
    """A line for the terminal: actions starting, board output, results, errors."""
    lvl, msg = entry.get("lvl"), entry.get("msg")
    if lvl == "results" and isinstance(msg, dict):
        m = f" {msg.get('measurement')} {msg.get('units', '')}" if msg.get("measurement") not in (None, "") else ""
        return f"  result {msg.get('definition')}/{msg.get('case')}: {msg.get('result')}{m}"
    if lvl in ("error", "exception"):
        return f"  ERROR {msg}"
    if _is_retry(entry):
        return f"  WARNING {msg}"
    if lvl == "info" and isinstance(msg, str) and re.match(r"^[a-z0-9-]+ (?:timed out|duration)", msg):
        return f"  {msg}"
    if lvl == "info" and isinstance(msg, str) and msg.startswith("start: "):
        return f"  {msg}" if msg.count(".") <= 1 else None
    return None


def guard_env(owner: str) -> dict:
    """lava-run's environment: its power commands (`boardlab lab power`) find boardlab and
    check the board's place is held by owner (placehold.UNSHARED: no place to check)."""
    bin_dir = os.path.dirname(sys.executable)
    return {**os.environ, POWER_OWNER_ENV: owner,
            "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "/usr/bin:/bin")])}


def lava_run(files: dict[str, Path], work: Path, job_id: int, echo=print,
             owner: str = UNSHARED) -> tuple[int, Path]:
    """Run a job with lava-run; its log (YAML lines, stderr) goes to work/job.log while a
    summary goes to the terminal. owner: who holds the board's place for the run."""
    log = work / "job.log"
    cmd = ["lava-run", "--job-id", str(job_id), "--output-dir", str(work / "output"),
           "--device", str(files["device"]), "--dispatcher", str(files["dispatcher"]),
           str(files["job"])]
    echo(f"lava-run job {job_id}: {files['job']} (log: {log})")
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env=guard_env(owner))
        try:
            for line in proc.stderr:
                out.write(line)
                out.flush()
                for e in read_log(line):
                    s = _summary(e)
                    if s:
                        echo(s)
            rc = proc.wait()
        except BaseException:
            proc.terminate()   # our lava-run, by PID: it powers the board off on SIGTERM
            proc.wait(timeout=60)
            raise
    return rc, log



def board_of_job(job: dict) -> tuple[dict, str]:
    meta = job.get("metadata") or {}
    name = meta.get("boardlab.board")
    if not name:
        dtype = str(job.get("device_type", ""))
        name = dtype[len("boardlab-"):] if dtype.startswith("boardlab-") else None
    if not name:
        raise LavaFault("the job names no boardlab board (metadata boardlab.board, device_type boardlab-*)")
    board = load_board(name)
    return board, meta.get("boardlab.kernel") or board.images.default_kernel


def lab_of(board: Board) -> LabHost:
    return load_lab_host(board.lab_host)
