"""A board LAVA shares, held at the coordinator for a session the way a person holds it
(boardlab.sharing.placehold), against a lab faked at the subprocess boundary
(tests/fakelab.py: labgrid-client answering in its own words): reserved by name,
acquired, released also on an error or Ctrl-C; waiting while someone else holds it;
never bypassed when the coordinator is down; nothing taken when LAVA does not share the
board; and LAVA's arbiter giving the board to the hold as to a person."""
import contextlib
import json
import os
import subprocess
from types import SimpleNamespace

import pytest

from boardlab.boot import session
from boardlab.sharing import placehold
from boardlab.sharing.placehold import PlaceBusy, PlaceHoldError, place_held, shared_with_lava
from boardlab.errors import LAB, fault_of
from boardlab.facts.board import load_board
from boardlab.lab.arbiter import Arbiter
from boardlab.lab.rules import LAVA_OWNER
from fakelab import FakeLab

BOARD = "qemu-arm"


@pytest.fixture
def lab(monkeypatch, tmp_path):
    """The fake lab, the board shared with LAVA (this host's arbiter state names it, its
    PID alive: this process's)."""
    fake = FakeLab([BOARD, "qemu-ppc"])
    monkeypatch.setattr(subprocess, "run", fake.run)
    monkeypatch.setattr("boardlab.lab.arbiter.device_transitions", fake.device_transitions)
    monkeypatch.setattr(placehold, "tcp_open", lambda *a, **k: fake.up)
    state = tmp_path / "arbiter.json"
    state.write_text(json.dumps({"round": {"pid": os.getpid(), "places": [BOARD, "qemu-ppc"]}}))
    monkeypatch.setattr(placehold, "LOCAL_ARBITER_STATE", state)
    monkeypatch.setenv("BOARDLAB_PLACE_WAIT_S", "5")   # the fake's waits take no time: a test never hangs
    return fake


def verbs(lab):
    return [c[1:] for c in lab.calls if c[0] == "labgrid-client"]


def test_a_free_shared_board_is_reserved_by_name_acquired_and_released(lab):
    said = []
    with place_held(load_board(BOARD), "nightly", echo=said.append) as hold:
        assert lab.places[BOARD]["acquired"] == hold.holder
        assert hold.holder.endswith("/boardlab-nightly." + __import__("getpass").getuser())
        assert lab.reservations[0]["filters"] == {"main": {"name": BOARD}}
        assert lab.reservations[0]["state"] == "acquired"
    assert lab.places[BOARD]["acquired"] is None and lab.reservations == []
    assert [v[0] if v[0] != "-p" else v[2] for v in verbs(lab)] == [
        "reserve", "wait", "acquire", "release", "cancel-reservation"]
    assert ("-p", f"+{hold.token}", "acquire") in verbs(lab)
    assert not any(m.startswith("waiting") for m in said)   # a free place: no waiting said


def test_it_waits_while_a_person_holds_the_board_and_says_who(lab):
    lab.person_acquires(BOARD, "vm/alice")
    waits = []

    def alice_done():
        waits.append(1)
        if len(waits) == 3:
            lab.places[BOARD]["acquired"] = None
    lab.while_waiting.append(alice_done)
    said = []
    with place_held(load_board(BOARD), "compare", echo=said.append) as hold:
        assert lab.places[BOARD]["acquired"] == hold.holder
    assert said.count(f"waiting for {BOARD}: held by vm/alice") == 1   # said once, not every poll
    assert len(waits) == 3 and lab.places[BOARD]["acquired"] is None


def test_a_hold_not_had_in_time_is_one_line_naming_the_holder(lab, monkeypatch):
    lab.person_acquires(BOARD, "vm/alice")
    monkeypatch.setenv("BOARDLAB_PLACE_WAIT_S", "0")
    with pytest.raises(PlaceBusy) as e:
        with place_held(load_board(BOARD), "nightly", echo=lambda m: None):
            raise AssertionError("the block must not run")
    assert "held by vm/alice" in str(e.value) and "\n" not in str(e.value)
    assert fault_of(e.value).party == LAB
    assert lab.reservations == [] and lab.places[BOARD]["acquired"] == "vm/alice"   # hers, untouched


@pytest.mark.parametrize("error", [RuntimeError("the session failed"), KeyboardInterrupt()])
def test_the_place_is_given_back_on_an_error_or_ctrl_c(lab, error):
    with pytest.raises(type(error)):
        with place_held(load_board(BOARD), "bisect", echo=lambda m: None):
            raise error
    assert lab.places[BOARD]["acquired"] is None and lab.reservations == []


def test_sigterm_gives_the_place_back_too(lab):
    """A timer's run stopped by systemd: SIGTERM ends the process as an exit, the place
    released (an acquisition outlives its process at the coordinator), SIGTERM's own
    handling put back."""
    import signal
    with pytest.raises(SystemExit) as e:
        with place_held(load_board(BOARD), "nightly", echo=lambda m: None):
            os.kill(os.getpid(), signal.SIGTERM)
    assert e.value.code == 128 + signal.SIGTERM
    assert lab.places[BOARD]["acquired"] is None and lab.reservations == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_coordinator_that_is_down_is_one_line_never_a_bypass(lab, monkeypatch):
    lab.up = False
    ran = []
    with pytest.raises(PlaceHoldError) as e:
        with place_held(load_board(BOARD), "lab-check", echo=lambda m: None):
            ran.append(1)
    assert not ran and "not reachable" in str(e.value) and "not bypassed" in str(e.value)
    assert "\n" not in str(e.value)
    assert fault_of(e.value).party == LAB and fault_of(e.value).part == "coordinator"
    # it answers TCP but labgrid-client cannot talk to it: the same
    lab.calls.clear()
    monkeypatch.setattr(placehold, "tcp_open", lambda *a, **k: True)
    with pytest.raises(PlaceHoldError, match="not reachable"):
        with place_held(load_board(BOARD), "lab-check", echo=lambda m: None):
            ran.append(1)
    assert not ran and verbs(lab) == [("reserve", "--shell", f"name={BOARD}")]


def test_a_board_lava_does_not_share_needs_no_coordinator(lab, tmp_path):
    lab.up = False
    (tmp_path / "arbiter.json").write_text(json.dumps({"round": {"pid": os.getpid(), "places": ["qemu-ppc"]}}))
    with place_held(load_board(BOARD), "compare") as hold:
        assert hold is None
    (tmp_path / "arbiter.json").unlink()   # no LAVA server on this host
    with place_held(load_board(BOARD), "compare") as hold:
        assert hold is None
    assert lab.calls == []


def test_shared_with_lava_by_the_facts_or_by_a_running_arbiter(tmp_path):
    assert "LAVA worker" in shared_with_lava(load_board("tqm860l"), tmp_path / "none.json")   # a real lab host's
    state = tmp_path / "arbiter.json"
    assert shared_with_lava(load_board(BOARD), state) is None
    state.write_text(json.dumps({"round": {"pid": 2 ** 22 + 1, "places": [BOARD]}}))   # a gone arbiter
    assert shared_with_lava(load_board(BOARD), state) is None
    (tmp_path / "arbiter.pid").write_text(f"{os.getpid()}\n")   # its supervisor lives: it comes back
    assert shared_with_lava(load_board(BOARD), state)


def test_lavas_arbiter_gives_the_board_to_the_hold_as_to_a_person(lab, tmp_path):
    log = []
    arbiter = Arbiter("127.0.0.1:1", None, {b: {"board": b, "arch": "arm"} for b in (BOARD, "qemu-ppc")},
                      tmp_path / "arbiter-state.json", echo=log.append)
    arbiter.round()
    assert lab.places[BOARD]["acquired"] == LAVA_OWNER
    lab.start_job(BOARD, 9)
    rounds = []

    def time_passes():   # an arbiter round per poll; LAVA's job ends meanwhile
        rounds.append(arbiter.round())
        if len(rounds) == 2:
            lab.end_job(9)
    lab.while_waiting.append(time_passes)
    said = []
    with place_held(load_board(BOARD), "nightly", echo=said.append) as hold:
        assert rounds[0] == [(BOARD, "maintenance")]   # LAVA starts nothing new; its job goes on
        assert lab.devices[BOARD]["health"] == "Maintenance"
        assert lab.places[BOARD]["acquired"] == hold.holder
        assert arbiter.round() == []                     # held like a person's: left alone
    assert f"waiting for {BOARD}: held by {LAVA_OWNER}" in said
    assert arbiter.round() == [(BOARD, "acquire")]
    assert arbiter.round() == [(BOARD, "restore")]
    assert lab.devices[BOARD]["health"] == "Unknown"   # LAVA checks the board before its next job
    assert not any("OVERLAP" in m for m in log)


def fake_env(events):
    strategy = SimpleNamespace(board=load_board(BOARD), release_board=lambda: events.append("unlocked"),
                               lock=SimpleNamespace(held=True), status=SimpleNamespace(name="shell"),
                               transition=lambda status: events.append(f"power {status}"))
    target = SimpleNamespace(resources=[], get_driver=lambda name: strategy)
    return SimpleNamespace(get_target=lambda name: target, cleanup=lambda: events.append("cleanup"))


def test_board_session_holds_the_place_around_the_board_and_gives_it_back_after_power_off(lab, monkeypatch,
                                                                                          tmp_path):
    events = []
    monkeypatch.setattr(session, "open_env", lambda path: fake_env(events))
    real = placehold.PlaceHold.end
    monkeypatch.setattr(placehold.PlaceHold, "end", lambda self: (events.append("place released"), real(self)))
    with contextlib.suppress(RuntimeError):
        with session.board_session("lab/qemu-arm.yaml", tmp_path, command="lab-check") as (strategy, _):
            events.append(f"session: {lab.places[BOARD]['acquired'].split('/')[1].split('.')[0]}")
            raise RuntimeError("a boot failed")
    assert events == ["session: boardlab-lab-check", "power off", "unlocked", "place released", "cleanup"]
    assert lab.places[BOARD]["acquired"] is None and lab.reservations == []


def test_lab_check_says_the_coordinator_not_that_the_board_is_bad(monkeypatch, tmp_path):
    from boardlab.judge.health import check_board

    @contextlib.contextmanager
    def not_had(env, log_dir, **_):
        raise PlaceHoldError("board qemu-arm is shared with LAVA (...): the coordinator is not reachable")
        yield
    monkeypatch.setattr(session, "board_session", not_had)
    with pytest.raises(PlaceHoldError, match="not reachable"):
        check_board("lab/qemu-arm.yaml", tmp_path)


def test_a_nightly_whose_board_is_not_had_lands_a_lab_error_and_fails(monkeypatch, tmp_path):
    from boardlab.bisect import nightly
    from boardlab.judge.results import load_run
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e",
                                                             "commit", "-q", "-m", "c0"]):
        (repo / "f").write_text("0")
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    monkeypatch.setattr(nightly, "_build", lambda *a: True)

    def measure(*a):
        raise PlaceBusy("board qemu-arm is shared with LAVA (...): held by vm/alice")
    monkeypatch.setattr(nightly, "_measure", measure)
    landed = []
    monkeypatch.setattr(nightly, "land", lambda run_dir, lab, progress: landed.append(run_dir))
    with pytest.raises(PlaceBusy):
        nightly.nightly(repo, "main", "qemu-arm", config=repo / "f", out=tmp_path / "run")
    said = next(iter(load_run(landed[0])["meta"]["outcomes"].values()))
    assert said["kernel/boot"] == "error" and "held by vm/alice" in said["why"]["kernel/boot"]


def test_a_sweep_whose_board_is_not_had_stops_there_to_be_resumed(monkeypatch, tmp_path):
    """Not every kernel after it waiting its turn in vain: the sweep stops, sweep.json
    keeps what was done, a second call goes on."""
    from boardlab.kernel import sweep
    monkeypatch.setattr(sweep, "study_boards", lambda: [])
    monkeypatch.setattr(sweep, "_build_quietly", lambda board, e, fragment: (SimpleNamespace(), None))
    measured = []
    monkeypatch.setattr(sweep, "_measure", lambda board, e, out, built: measured.append(e.version))

    @contextlib.contextmanager
    def not_had(board, command):
        assert command == "kernel-sweep"
        raise PlaceHoldError(f"board {board.name} is shared with LAVA (...): the coordinator is not reachable")
        yield
    monkeypatch.setattr(sweep, "place_held", not_had)
    with pytest.raises(PlaceHoldError):
        sweep.sweep(load_board(BOARD), ["6.1.1-1", "6.1.2-1"], tmp_path / "out", tmp_path / "virt-nfs" / "f", None,
                    budget=0)
    assert measured == []


def test_a_child_of_a_hold_holds_nothing_more_and_the_suites_take_the_place(lab):
    """The sweep's suites are a pytest of their own: the place the sweep holds is theirs
    (the environment says so), not waited for again. A suites session of its own holds
    the place as any command does (the chaos bench saw its power requests inside a LAVA
    job while it took none)."""
    with place_held(load_board(BOARD), "kernel-sweep"):
        assert os.environ[placehold.HELD_ENV] == BOARD
        calls = len(lab.calls)
        with place_held(load_board(BOARD), "pytest") as inner:
            assert inner is None and len(lab.calls) == calls
    assert placehold.HELD_ENV not in os.environ
    import inspect
    from boardlab import pytestplugin
    assert 'place_held(strategy.board, "pytest")' in inspect.getsource(pytestplugin.board_strategy)
