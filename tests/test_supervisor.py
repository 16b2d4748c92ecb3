"""The supervisor: a command that exits is started again, with a growing delay; stop()
ends it, and no child is left behind (checked by PID). `lava server up` starts its
arbiter under it, and its scheduler only after the arbiter's first round."""
import json
import sys
import threading
import time

import pytest
from test_secrets import FakeLava, faked_up

from boardlab.procs import group_alive, running
from boardlab.services.daemons import Daemons
from boardlab.services.supervisor import Supervisor, supervised

EXITS_AT_ONCE = [sys.executable, "-c", "import sys; sys.exit(3)"]
RUNS_LONG = [sys.executable, "-c", "import time; time.sleep(60)"]
IGNORES_SIGTERM = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   "print('ready', flush=True); time.sleep(60)"]


def _until(ok, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


def _running(sup: Supervisor) -> threading.Thread:
    t = threading.Thread(target=sup.run, daemon=True)
    t.start()
    return t


def test_a_command_that_exits_is_started_again_with_a_growing_delay():
    lines = []
    sup = Supervisor("quick", EXITS_AT_ONCE, echo=lines.append, first_delay=0.05, max_delay=0.2)
    t = _running(sup)
    _until(lambda: sup.starts >= 5)
    sup.stop()
    t.join(5)
    assert not t.is_alive()
    delays = [ln.rsplit("in ", 1)[1] for ln in lines if "exited with status 3" in ln]
    assert delays[:4] == ["0.05 s", "0.1 s", "0.2 s", "0.2 s"]
    assert not running(sup.child.pid)


def test_stop_ends_the_running_command_and_starts_nothing_more():
    sup = Supervisor("long", RUNS_LONG, echo=lambda m: None)
    t = _running(sup)
    _until(lambda: sup.child is not None and running(sup.child.pid))
    pid = sup.child.pid
    sup.stop()
    t.join(5)
    assert not t.is_alive() and not running(pid) and sup.starts == 1


def test_a_command_deaf_to_sigterm_is_killed_after_the_grace():
    lines = []
    sup = Supervisor("deaf", IGNORES_SIGTERM, echo=lines.append, grace=0.3)
    t = _running(sup)
    _until(lambda: sup.child is not None and running(sup.child.pid))
    time.sleep(0.3)   # its SIGTERM handler set
    pid = sup.child.pid
    sup.stop()
    t.join(5)
    assert not t.is_alive() and not running(pid)
    assert any("killed" in ln for ln in lines)


def test_as_a_daemon_stopped_by_its_pid_it_leaves_no_child(tmp_path):
    """Started and stopped as the virtual lab starts and stops its daemons: the command's
    PID changes with each restart, and stop() leaves neither it nor the supervisor."""
    daemons = Daemons(tmp_path, tmp_path)
    cmd = [sys.executable, "-c", "import os, time; print('pid', os.getpid(), flush=True); time.sleep(0.3)"]
    pid = daemons.start("flaky", supervised("flaky", cmd))
    log = tmp_path / "flaky.log"

    def children():
        return [int(ln.split()[1]) for ln in log.read_text().splitlines() if ln.startswith("pid ")]
    _until(lambda: len(children()) >= 2)   # exited after 0.3 s, and started again
    assert len(set(children())) == len(children())
    assert daemons.stop("flaky")
    assert not running(pid) and not group_alive(pid)
    assert not any(running(c) for c in children())


def test_the_scheduler_starts_after_the_arbiters_first_round(tmp_path, monkeypatch):
    """A job left queued must not start on a board a person holds: LAVA's places are held
    first (lava.arbiterstart)."""
    _, fake, _ = faked_up(tmp_path, monkeypatch, FakeLava())
    first = {what: next(i for i, cmd in enumerate(fake.argv) if what in cmd)
             for what in ("boardlab.lab.arbiterd", "lava-scheduler", "lava-worker")}
    assert first["boardlab.lab.arbiterd"] < first["lava-scheduler"] < first["lava-worker"]
    arbiter = fake.argv[first["boardlab.lab.arbiterd"]]
    assert arbiter[1:3] == ["-m", "boardlab.services.supervisor"]   # it comes back if it exits


def test_an_arbiter_without_a_round_stops_up_before_the_scheduler(tmp_path, monkeypatch):
    from boardlab.lava import arbiterstart, localserver
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "arbiter.json").write_text(json.dumps({"round": {"at": time.time() - 60}}))  # an earlier run's
    monkeypatch.setattr(arbiterstart, "FIRST_ROUND_S", 0.5)
    fake = FakeLava(arbiter_rounds=False)
    with pytest.raises(localserver.ServerError, match="first round .*coordinator up"):
        faked_up(tmp_path, monkeypatch, fake)
    assert not any("lava-scheduler" in cmd for cmd in fake.argv)
    assert arbiterstart.last_round_at(tmp_path / "nowhere.json") == 0.0


def test_what_the_arbiter_set_aside_lasts_as_long_as_lava_s_database(tmp_path):
    """A Maintenance the arbiter set must be found by the next arbiter, whichever run
    directory the next `lava server up` (or bench) uses: LAVA's database outlives them all."""
    from boardlab.facts.labfacts import ARBITER_STATE
    from boardlab.lava.localserver import LocalLavaServer
    one = LocalLavaServer(tmp_path / "one", labs=["vlab"], echo=lambda *_: None)
    two = LocalLavaServer(tmp_path / "two", labs=["vlab"], echo=lambda *_: None)
    assert one.arbiter_state == two.arbiter_state == ARBITER_STATE
    assert not ARBITER_STATE.is_relative_to("/run") and not ARBITER_STATE.is_relative_to("/tmp")


def test_down_stops_the_lava_run_a_worker_leaves_going(tmp_path, monkeypatch):
    """lava-run runs in a process group of its own: stopping its worker left it running
    (a chaos run's job 97 for two hours). `down` stops what the worker's database lists."""
    import sqlite3
    import subprocess
    from boardlab.lava import localserver
    monkeypatch.setattr(localserver.postgres, "down", lambda *a, **k: None)
    srv = localserver.LocalLavaServer(tmp_path / "server", labs=["vlab"], echo=lambda *_: None,
                                      arbiter_state=tmp_path / "arbiter.json")
    run = subprocess.Popen(RUNS_LONG[:2] + ["import time; time.sleep(60)"], start_new_session=True)
    (tmp_path / "server" / "worker-vlab").mkdir(parents=True)
    db = sqlite3.connect(tmp_path / "server" / "worker-vlab" / "db.sqlite3")
    db.execute("CREATE TABLE jobs (id INTEGER, pid INTEGER, status INTEGER)")
    db.execute("INSERT INTO jobs VALUES (97, ?, 0)", (run.pid,))
    db.commit()
    srv.down()
    assert run.wait(timeout=10) == -15
