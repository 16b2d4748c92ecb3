"""A service's stop: the whole process group it started, and no wait for init to reap."""
import os
import subprocess
import time

from boardlab.procs import group_alive, group_members, running
from boardlab.services.daemons import Daemons


def test_a_zombie_is_not_a_live_member_of_its_group():
    child = subprocess.Popen(["true"], start_new_session=True)
    while running(child.pid):        # exited; not reaped yet, so a zombie of its group
        time.sleep(0.01)
    assert os.path.exists(f"/proc/{child.pid}")
    assert not group_alive(child.pid)
    child.wait()


def test_stop_ends_the_leader_and_its_children(tmp_path):
    daemons = Daemons(tmp_path, tmp_path)
    pid = daemons.start("pair", ["sh", "-c", "sleep 60 & sleep 60"])
    deadline = time.monotonic() + 5
    while len(group_members(pid)) < 2:   # the leader and a child of its own
        assert time.monotonic() < deadline, "the pair never started"
        time.sleep(0.01)
    assert group_alive(pid)
    assert daemons.stop("pair")
    assert not group_alive(pid) and not (tmp_path / "pair.pid").exists()

