"""LAVA's guarded power commands (boardlab.lab.powerguard): a LAVA job powers a board
only while the board's place is held by who runs the job, and its NFS root goes to that
board alone. The place and the dispatcher are read as they are on a worker: labgrid's
`show` text, lava-run's command line."""
import subprocess

import pytest

from boardlab.sharing.placehold import UNSHARED
from boardlab.facts.hostconfigs import LAVA_NFS_DIR
from boardlab.lab import powerguard
from boardlab.lab.rules import LAVA_OWNER

SHOW = """Place 'qemu-arm':
  tags: arch=arm, board=qemu-arm
  matches:
    vlab/qemu-arm/*
  acquired: {holder}
  acquired resources:
"""


@pytest.mark.parametrize("holder, owner, refused", [
    ("lava-arbiter/lava", LAVA_OWNER, False),
    ("dev/alice", LAVA_OWNER, True),        # a person's board: LAVA never powers it
    (None, LAVA_OWNER, True),               # free: the arbiter has not taken it back yet
    ("host/boardlab-lava-run.me", "host/boardlab-lava-run.me", False),
    ("dev/alice", UNSHARED, False),         # a board LAVA does not share: no place to check
])
def test_the_place_decides_who_may_power_the_board(holder, owner, refused):
    seen = powerguard.place_holder("c:1", "qemu-arm", show=lambda: SHOW.format(holder=holder or "None"))
    assert seen == holder
    why = powerguard.refusal("qemu-arm", owner, seen)
    assert (why is not None) == refused
    if refused:
        assert "qemu-arm" in why and owner in why and "no power request" in why


def test_a_coordinator_that_does_not_answer_is_waited_for_then_refused():
    calls = []

    def show():
        calls.append(1)
        raise subprocess.TimeoutExpired("labgrid-client", 15)
    with pytest.raises(powerguard.PowerRefused, match="did not answer within 0 s"):
        powerguard.place_holder("c:1", "qemu-arm", wait_s=0, show=show)
    assert calls


def test_a_refused_request_runs_no_power_command(monkeypatch):
    ran = []
    monkeypatch.setattr(powerguard, "place_holder", lambda *a, **k: "dev/alice")
    monkeypatch.setattr(powerguard.os, "execvp", lambda *a: ran.append(a))
    monkeypatch.setattr(powerguard.jobroots, "unexport", lambda *a: ran.append(a))
    with pytest.raises(powerguard.PowerRefused, match="held by dev/alice, not by lava-arbiter/lava"):
        powerguard.power("qemu-arm", "off", owner=LAVA_OWNER)
    assert ran == []


@pytest.mark.parametrize("argv, found", [
    (["lava-run [job: 559765]", "", ""], 559765),                    # retitled (setproctitle)
    (["/usr/bin/python3", "/usr/bin/lava-run", "--device=/w/12/device.yaml",
      "--output-dir=/w/12", "--job-id=12", "/w/12/job.yaml"], 12),    # as lava-worker starts it
    (["lava-run", "--job-id", "4343", "--output-dir", "o", "job.yaml"], 4343),  # boardlab lava run
    (["lava-run", "--job-id", "x"], None),
    (["bash"], None),                                                 # no job above it
])
def test_the_job_is_read_off_lava_runs_command_line(argv, found):
    """The guard's ancestors: the `nice` LAVA ran it with, then lava-run."""
    tree = {30: ["nice", "boardlab", "lab", "power", "qemu-arm", "on"], 20: argv}
    parents = {30: 20, 20: 1}
    assert powerguard.lava_run_of(30, read=tree.__getitem__, parent=parents.__getitem__) == found


def test_the_job_root_is_lavas_download_directory_and_the_jobs_id():
    assert str(powerguard.job_root(12)) == f"{LAVA_NFS_DIR}/12"


def test_boardlabs_dispatcher_configs_set_no_prefix_so_the_job_root_is_found():
    from boardlab.facts.labhosts import load_lab_host
    from boardlab.lava.run import dispatcher_config
    assert "prefix" not in dispatcher_config(load_lab_host("vlab"))


def test_an_allowed_request_becomes_the_boards_own_command(monkeypatch):
    """The board's command replaces the guard (exec): LAVA reads the console as it exits."""
    ran = []
    monkeypatch.setattr(powerguard, "place_holder", lambda *a, **k: LAVA_OWNER)
    monkeypatch.setattr(powerguard.jobroots, "unexport", lambda *a: None)
    monkeypatch.setattr(powerguard.os, "execvp", lambda *a: ran.append(a))
    powerguard.power("qemu-arm", "off", owner=LAVA_OWNER, echo=lambda line: None)
    assert ran == [("sh", ["sh", "-c", "curl -fsS -X PUT -d 0 http://10.231.0.11:8101/outlet/1/value"])]
