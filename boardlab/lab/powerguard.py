"""LAVA's power commands, guarded (`boardlab lab power BOARD on|off`, what each device
dictionary names; LAVA runs it on the board's worker):

- a LAVA job powers a board only while the board's place at the labgrid coordinator is
  held by the one who runs the job: the arbiter (`lava-arbiter/lava`) for the server's
  jobs, the person's own hold for `boardlab lava run` (BOARDLAB_POWER_OWNER; "-": a
  board LAVA does not share, nothing to check). Anyone else's place is refused, in one
  line the job's log keeps; a coordinator that does not answer is waited for (a restart
  takes seconds), then refused: never bypassed. The arbiter's rules make this the
  normal case; the guard is what holds when they are late (a coordinator restarted, an
  acquire loop faster than the arbiter's round).
- the job's NFS root (LAVA extracts it under its download directory, named by the job's
  id, known only now) is exported to this board's address alone while it is on, and no
  more once it is off (boardlab.lab.jobroots): one board cannot mount another board's
  job root, nor its own earlier ones.
Then the board's own power command replaces the guard's process (facts.pdu: pdudaemon
or the PDU); its exit status is LAVA's."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from boardlab.sharing.placehold import POWER_OWNER_ENV as OWNER_ENV
from boardlab.sharing.placehold import UNSHARED
from boardlab.errors import LabFault
from boardlab.facts.board import load_board
from boardlab.facts.hostconfigs import LAVA_NFS_DIR
from boardlab.facts.labfacts import load_lab
from boardlab.facts.labhosts import lab_host_of
from boardlab.facts.pdu import lava_power_commands
from boardlab.facts.places import PlacesError, client
from boardlab.lab.listings import parse_place_show
from boardlab.lab.rules import LAVA_OWNER
from boardlab.lab import jobroots

COORDINATOR_WAIT_S = 30     # a restarted coordinator answers within seconds


class PowerRefused(LabFault):
    """LAVA asked to power a board whose place is not its own."""
    part = "board"


def place_holder(coordinator: str, place: str, wait_s: float = COORDINATOR_WAIT_S,
                 show=None) -> str | None:
    """Who holds the place now ('host/user', None: nobody); PowerRefused when the
    coordinator does not answer within wait_s."""
    show = show or (lambda: client(coordinator, "show", place=place, timeout=15).stdout)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return parse_place_show(show())["acquired"]
        except (PlacesError, subprocess.TimeoutExpired, OSError) as e:
            if time.monotonic() > deadline:
                raise PowerRefused(f"board {place}: the labgrid coordinator {coordinator} did not "
                                   f"answer within {wait_s:g} s ({e}): no power request without "
                                   f"knowing the place is LAVA's") from None
            time.sleep(1)


def refusal(board: str, owner: str, holder: str | None) -> str | None:
    """Why the power request is refused (None: it is the owner's)."""
    if owner == UNSHARED or holder == owner:
        return None
    return (f"board {board}: its place is {'free' if holder is None else 'held by ' + holder}, "
            f"not by {owner}, who runs this job: no power request (the arbiter takes the "
            f"place back at its next round)")


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def lava_run_of(pid: int, read=_cmdline, parent=_parent) -> int | None:
    """The id of the LAVA job whose lava-run this process runs under, from its ancestors'
    command lines; None outside a job. lava-run retitles itself `lava-run [job: N]`
    (setproctitle); before that, its arguments say `--job-id N`."""
    for _ in range(32):
        if pid <= 1:
            return None
        try:
            argv = read(pid)
        except OSError:
            return None
        title = re.match(r"lava-run \[job: (\d+)\]", " ".join(argv).strip())
        if title:
            return int(title.group(1))
        if any(os.path.basename(a) == "lava-run" for a in argv[:2]):
            return _job_id(argv)
        try:
            pid = parent(pid)
        except (OSError, IndexError, ValueError):
            return None
    return None


def _job_id(argv: list[str]) -> int | None:
    for i, a in enumerate(argv):
        value = argv[i + 1] if a == "--job-id" and i + 1 < len(argv) else \
            a.split("=", 1)[1] if a.startswith("--job-id=") else None
        if value is not None:
            return int(value) if value.isdigit() else None
    return None


def job_root(job_id: int) -> Path:
    """Where lava-dispatcher puts the job's files (Job.tmp_dir): its id under its download
    directory (the dispatcher configs boardlab writes set no prefix: lava.run.dispatcher_config)."""
    return Path(LAVA_NFS_DIR) / str(job_id)


def power(board_name: str, action: str, owner: str | None = None, echo=None) -> None:
    """The guarded power request (action: on or off)."""
    echo = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    board = load_board(board_name)
    owner = owner or os.environ.get(OWNER_ENV) or LAVA_OWNER
    if owner != UNSHARED:
        why = refusal(board.name, owner, place_holder(load_lab().coordinator, board.name))
        if why:
            raise PowerRefused(why)
    lab = lab_host_of(board)
    job = lava_run_of(os.getppid())
    if action == "off" and lab is not None:
        jobroots.unexport(lab, board)
    if action == "on" and lab is not None and job is not None and job_root(job).is_dir():
        jobroots.export(lab, board, job_root(job))   # before the board boots and mounts it
        echo(f"boardlab: job {job}'s root {job_root(job)} exported to {board.name} "
             f"({board.network.ip}) alone")
    command = lava_power_commands(board, lab)["power_on_command" if action == "on" else "power_off_command"]
    echo(f"boardlab: {board.name} powered {action} for {owner}: {command}")
    # the board's own command replaces this process: LAVA reads the console the moment it
    # exits, as with the bare command (a deterministic board's U-Boot counts its autoboot
    # delay down in a fraction of a second of host time; an interpreter's exit after the
    # power-on made LAVA miss it)
    sys.stdout.flush()
    os.execvp("sh", ["sh", "-c", command])
