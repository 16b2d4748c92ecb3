"""Two users of one virtual lab (vlab.leases): the one that brought it up leaves it up
while the other still holds it, and the last one out takes it down. The lab here is a
stand-in that counts ups and downs; the leases, their lock and the processes are real."""
import subprocess

import pytest

from boardlab.vlab import lab as vlab_lab
from boardlab.vlab import leases


class FakeLabs:
    state = {"up": False, "downs": 0}

    def __init__(self):
        self.hosts = {"vlab": self}

    def is_up(self):
        return self.state["up"]

    def up(self, boards=()):
        self.state["up"] = True

    def prepare(self, board):
        pass

    def down(self, force=False):
        self.state.update(up=False, downs=self.state["downs"] + 1)


@pytest.fixture
def fake_lab(tmp_path, monkeypatch):
    monkeypatch.setattr(leases, "LEASES", tmp_path / "leases")
    monkeypatch.setattr(vlab_lab, "VirtualLab", FakeLabs)
    FakeLabs.state = {"up": False, "downs": 0}
    return FakeLabs.state


def _other_user(tmp_path):
    """Another process holding a lease on the lab (a sweep that started later)."""
    return subprocess.Popen(["python3", "-c", "import sys, time; sys.path.insert(0, '.');"
                             "from boardlab.vlab import leases; leases.LEASES = __import__('pathlib').Path("
                             f"'{tmp_path / 'leases'}'); leases.take('sweep'); print('held', flush=True); "
                             "time.sleep(60)"], stdout=subprocess.PIPE, text=True)


def test_the_first_user_leaves_the_lab_to_the_last(fake_lab, tmp_path):
    other = _other_user(tmp_path)
    try:
        with vlab_lab.kept_up("vlab"):
            assert fake_lab["up"]
            assert other.stdout.readline().strip() == "held"
            assert "sweep" in [h["what"] for h in leases.holders()]    # and this process's own
        assert fake_lab == {"up": True, "downs": 0} and leases.down_due()   # still in use
    finally:
        other.kill()
        other.wait()
    assert [h["what"] for h in leases.holders()] == []        # the dead one's lease is dropped
    with vlab_lab.kept_up("vlab"):      # a later user that found it up takes it down at its end
        pass
    assert fake_lab == {"up": False, "downs": 1} and not leases.down_due()


def test_down_by_hand_is_refused_while_another_process_uses_the_lab(tmp_path, monkeypatch):
    monkeypatch.setattr(leases, "LEASES", tmp_path / "leases")
    other = _other_user(tmp_path)
    try:
        assert other.stdout.readline().strip() == "held"
        labs = vlab_lab.VirtualLab.__new__(vlab_lab.VirtualLab)
        labs.hosts = {}
        with pytest.raises(vlab_lab.LabError, match=rf"in use by pid {other.pid} \(sweep\): it goes down "
                                                    r"when the last of them is done.*--force"):
            labs.down()
        assert leases.down_due()     # asked for: the last user takes it down
    finally:
        other.kill()
        other.wait()


def test_two_users_starting_at_once_bring_the_lab_up_once(fake_lab, monkeypatch):
    """Two test sessions (scripts/test.sh) or a bench and a sweep entering together: the
    second waits on the leases' lock while the first brings the lab up, then finds it up.
    (Threads here: each takes the lock on a file description of its own, as processes do.)"""
    import threading
    import time
    ups, inside = [], threading.Barrier(2, timeout=10)

    def slow_up(self, boards=()):
        ups.append(boards)
        time.sleep(0.3)            # the bring-up takes a while; the other user arrives meanwhile
        self.state["up"] = True
    monkeypatch.setattr(FakeLabs, "up", slow_up)

    def user():
        with vlab_lab.kept_up("vlab", leave_up=True):
            inside.wait()          # both inside at once
    users = [threading.Thread(target=user) for _ in range(2)]
    for u in users:
        u.start()
    for u in users:
        u.join(10)
    assert len(ups) == 1 and fake_lab["up"]
