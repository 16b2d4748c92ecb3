"""The arbiter's rounds against a lab faked at the subprocess boundary (tests/fakelab.py:
labgrid-client and lavacli answering in their own formats): restarts, a killed arbiter's
state file, a coordinator restart, an admin's hand, overlaps, failed jobs, and a round of
fifty boards in three calls."""
import json
import subprocess

import pytest

from boardlab.lab import arbiterd
from boardlab.lab.arbiter import Arbiter
from boardlab.lab.rules import LAVA_OWNER
from fakelab import FakeLab

BOARDS = ["qemu-arm", "qemu-ppc"]


@pytest.fixture
def lab(monkeypatch):
    fake = FakeLab(BOARDS)
    monkeypatch.setattr(subprocess, "run", fake.run)
    monkeypatch.setattr("boardlab.lab.arbiter.device_transitions", fake.device_transitions)
    return fake


def arbiter(tmp_path, log, boards=BOARDS):
    return Arbiter("127.0.0.1:1", None, {b: {"board": b, "arch": "arm"} for b in boards},
                   tmp_path / "arbiter.json", echo=log.append)


def state(tmp_path):
    return json.loads((tmp_path / "arbiter.json").read_text())


def health_updates(lab):
    return [c[-1] for c in lab.calls if c[1:3] == ("devices", "update")]


def test_a_person_is_seen_so_the_board_comes_back_unknown(lab, tmp_path):
    log = []
    a = arbiter(tmp_path, log)
    assert a.round() == [("qemu-arm", "acquire"), ("qemu-ppc", "acquire")]
    assert log[0].startswith("arbiter: at start: holds 0 of 2;")
    lab.reserve("qemu-arm")
    assert a.round() == [("qemu-arm", "maintenance")]
    assert a.round() == [("qemu-arm", "release")]
    lab.reservations[0].update(state="allocated", allocations={"main": "qemu-arm"})
    lab.person_acquires("qemu-arm")
    assert a.round() == []
    lab.places["qemu-arm"]["acquired"], lab.reservations = None, []
    assert a.round() == [("qemu-arm", "acquire")]
    assert a.round() == [("qemu-arm", "restore")]
    assert lab.devices["qemu-arm"]["health"] == "Unknown"   # LAVA checks it before its next job
    assert state(tmp_path)["aside"] == {} and state(tmp_path)["round"]["boards"] == 2


def test_a_coordinator_restart_then_a_person_takes_a_running_boards_place(lab, tmp_path):
    """The overlap: reported (log, state file), ended (the LAVA job cancelled, the board
    in Maintenance while the person has it), then the board back as Unknown."""
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.start_job("qemu-arm", 7)
    a.round()
    lab.restart_coordinator()
    lab.person_acquires("qemu-arm", "vm/bob")
    assert ("qemu-arm", "cancel") in a.round()
    assert lab.jobs[7]["health"] == "Canceled" and lab.devices["qemu-arm"]["health"] == "Maintenance"
    assert lab.jobs[8]["state"] == "Submitted"   # not lost: submitted again, it waits for the board
    assert any("OVERLAP" in m and "vm/bob" in m and "job 7 cancelled, submitted again as job 8" in m for m in log)
    assert state(tmp_path)["overlaps"][0]["job"] == 7
    assert a.round() == [] and lab.places["qemu-ppc"]["acquired"] == LAVA_OWNER   # re-taken: nobody had it
    lab.places["qemu-arm"]["acquired"] = None
    a.round()
    a.round()
    assert lab.devices["qemu-arm"]["health"] == "Unknown"


def test_an_arbiter_that_starts_while_lava_runs_on_a_place_nobody_holds_retakes_it(lab, tmp_path):
    lab.start_job("qemu-arm", 3)
    lab.person_acquires("qemu-ppc")
    log = []
    assert arbiter(tmp_path, log).round() == [("qemu-arm", "acquire"), ("qemu-ppc", "maintenance")]
    assert "LAVA runs on qemu-arm (job 3); people hold qemu-ppc (vm/alice)" in log[0]
    assert lab.places["qemu-ppc"]["acquired"] == "vm/alice"


def test_a_killed_arbiters_state_file_carries_on(lab, tmp_path):
    """SIGKILLed while a person holds the board: the next arbiter keeps the Maintenance
    (theirs still), and gives the board back Unknown after the release."""
    a = arbiter(tmp_path, [])
    a.round()
    lab.reserve("qemu-ppc")
    a.round()
    a.round()
    lab.reservations = []
    lab.person_acquires("qemu-ppc")
    del a   # killed: nothing given back, the state file stays
    b = arbiter(tmp_path, [])
    assert b.round() == [] and lab.devices["qemu-ppc"]["health"] == "Maintenance"
    lab.places["qemu-ppc"]["acquired"] = None
    b.round()
    b.round()
    assert lab.devices["qemu-ppc"]["health"] == "Unknown" and not state(tmp_path)["aside"]


def test_a_crash_between_the_state_file_and_lava_is_forgotten(lab, tmp_path):
    """Killed after writing its entry, before LAVA set Maintenance: the health is not the
    arbiter's Maintenance, so it is not 'restored' over whatever it is."""
    (tmp_path / "arbiter.json").write_text(json.dumps({"aside": {"qemu-arm": {"before": "Good", "touched": True}}}))
    lab.devices["qemu-arm"]["health"] = "Bad"
    a = arbiter(tmp_path, [])
    assert ("qemu-arm", "forget") in a.round()
    a.round()
    assert lab.devices["qemu-arm"]["health"] == "Bad" and health_updates(lab) == []


def test_an_admins_maintenance_and_retired_are_never_changed(lab, tmp_path):
    lab.devices["qemu-arm"]["health"] = "Maintenance"
    a = arbiter(tmp_path, [])
    a.round()
    lab.reserve("qemu-arm")
    a.round()
    lab.reservations = []
    lab.person_acquires("qemu-arm")
    a.round()
    lab.places["qemu-arm"]["acquired"] = None
    a.round()
    a.round()
    assert health_updates(lab) == [] and lab.devices["qemu-arm"]["health"] == "Maintenance"
    # the arbiter's own Maintenance, then an admin retires the board during the hold
    lab.reserve("qemu-ppc")
    a.round()
    a.round()
    lab.reservations = []
    lab.person_acquires("qemu-ppc")
    lab.devices["qemu-ppc"]["health"] = "Retired"
    assert ("qemu-ppc", "forget") in a.round()
    lab.places["qemu-ppc"]["acquired"] = None
    a.round()
    assert lab.devices["qemu-ppc"]["health"] == "Retired" and lab.places["qemu-ppc"]["acquired"] is None


def test_no_maintenance_while_a_health_check_runs(lab, tmp_path):
    a = arbiter(tmp_path, [])
    a.round()
    lab.devices["qemu-arm"]["health"] = "Unknown"
    lab.start_job("qemu-arm", 11, health_check=True)
    lab.reserve("qemu-arm")
    assert a.round() == [] and a.round() == []
    lab.end_job(11)
    lab.devices["qemu-arm"]["health"] = "Good"
    assert a.round() == [("qemu-arm", "maintenance")]


def test_a_failed_job_sets_its_board_unknown(lab, tmp_path):
    a = arbiter(tmp_path, [])
    a.round()
    lab.start_job("qemu-arm", 5)
    lab.start_job("qemu-ppc", 6)
    a.round()
    lab.end_job(5, "Incomplete")
    lab.end_job(6, "Complete")
    a = arbiter(tmp_path, [])     # a restart in between: the running jobs were in the state file
    a.round()
    assert lab.devices["qemu-arm"]["health"] == "Unknown" and lab.devices["qemu-ppc"]["health"] == "Good"


def test_stopping_gives_back_only_what_no_person_holds(lab, tmp_path):
    a = arbiter(tmp_path, [])
    a.round()
    lab.reserve("qemu-arm")
    a.round()
    a.round()
    lab.reservations = []
    lab.person_acquires("qemu-arm")
    a.round()
    arbiterd.give_back(a)
    assert lab.places["qemu-ppc"]["acquired"] is None and lab.places["qemu-arm"]["acquired"] == "vm/alice"
    assert lab.devices["qemu-arm"]["health"] == "Maintenance" and "qemu-arm" in state(tmp_path)["aside"]


def test_fifty_boards_are_read_in_three_calls(monkeypatch, tmp_path):
    boards = [f"board{i:02d}" for i in range(50)]
    lab = FakeLab(boards)
    monkeypatch.setattr(subprocess, "run", lab.run)
    monkeypatch.setattr("boardlab.lab.arbiter.device_transitions", lab.device_transitions)
    a = arbiter(tmp_path, [], boards)
    a.round()
    lab.calls.clear()
    assert a.round() == []
    assert [c[:3] for c in lab.calls] == [("labgrid-client", "-v", "places"), ("labgrid-client", "reservations"),
                                          ("lavacli", "devices", "list")]


def test_a_reservation_by_place_name_is_a_persons(lab, tmp_path):
    """boardlab's own hold of a shared board (sharing.placehold) reserves name=PLACE: the
    coordinator matches a place's name as a tag, so the arbiter does too, and the holder
    is a person to it."""
    a = arbiter(tmp_path, [])
    a.round()
    lab.labgrid(["reserve", "--shell", "name=qemu-arm"], "vm/boardlab-nightly.alice")
    assert a.round() == [("qemu-arm", "maintenance")]
    assert a.round() == [("qemu-arm", "release")]
    assert lab.labgrid(["-p", f"+{lab.reservations[0]['token']}", "acquire"], "vm/boardlab-nightly.alice")[1] == 0
    assert a.round() == [] and lab.devices["qemu-arm"]["health"] == "Maintenance"
    assert lab.places["qemu-ppc"]["acquired"] == LAVA_OWNER   # the other board stays LAVA's


def test_the_arbiter_s_log_lines_carry_their_date_and_time(capsys):
    import re
    from boardlab.lab.arbiterd import stamped
    stamped("qemu-arm: LAVA's again (Unknown)")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d qemu-arm: LAVA's again \(Unknown\)\n", capsys.readouterr().out)


def test_a_health_check_ended_by_an_overlap_is_not_submitted_again(lab, tmp_path):
    """LAVA runs a new check itself: the board comes back Unknown."""
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.start_job("qemu-arm", 7, health_check=True)
    a.round()
    lab.restart_coordinator()
    lab.person_acquires("qemu-arm", "vm/bob")
    assert ("qemu-arm", "cancel") in a.round()
    assert set(lab.jobs) == {7} and ("jobs", "resubmit") not in {c[1:3] for c in lab.calls}


def test_an_admins_maintenance_over_the_arbiters_is_kept_when_the_person_leaves(lab, tmp_path):
    """Issue 'The shared lab, round two': an admin set Maintenance while the arbiter's own
    held the board for a person; when the reservation ended the arbiter restored "LAVA's
    again (Unknown)" and LAVA checked the board the admin took out. The health reads the
    same; LAVA's own device log says who changed it last: theirs stands."""
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.reserve("qemu-arm")
    assert a.round() == [("qemu-arm", "maintenance")]
    lab.set_health("qemu-arm", "Maintenance", "admin")          # the admin's word, same health
    assert a.round() == [("qemu-arm", "release")]
    lab.reservations[0].update(state="allocated", allocations={"main": "qemu-arm"})
    lab.person_acquires("qemu-arm")
    a.round()
    lab.places["qemu-arm"]["acquired"], lab.reservations = None, []
    assert a.round() == [("qemu-arm", "acquire")]
    assert a.round() == [("qemu-arm", "restore")]
    assert lab.devices["qemu-arm"]["health"] == "Maintenance" and health_updates(lab) == ["MAINTENANCE"]
    assert any("admin changed its health while set aside (Maintenance → Maintenance (xmlrpc api)): "
               "theirs stands" in m for m in log), log
    assert state(tmp_path)["aside"] == {} and a.round() == []     # forgotten: nothing more done


def test_the_arbiters_own_transition_last_is_restored(lab, tmp_path):
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.reserve("qemu-arm")
    a.round()
    lab.reservations = []
    assert a.round() == [("qemu-arm", "restore")] and lab.devices["qemu-arm"]["health"] == "Good"


def test_lavas_holds_survive_a_coordinator_restart_before_anyone_is_served(lab, tmp_path):
    """Issue 'The shared lab, round two': a person acquired a LAVA board 1.6 s after a
    coordinator restart, before the arbiter's next round, while its job ran. The arbiter
    keeps the places it holds in its state file (round.held); labgrid's own Coordinator,
    started through boardlab.lab.coordinator, loads its places and marks those acquired by
    LAVA's owner before it serves anyone. A place the arbiter gave back is not held."""
    from labgrid.remote.common import Place
    from labgrid.remote import coordinator as lg
    from boardlab.lab import coordinator
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.reserve("qemu-ppc")
    a.round()
    a.round()                                               # qemu-ppc released to the person
    assert state(tmp_path)["round"]["held"] == ["qemu-arm"]
    assert coordinator.lava_held(tmp_path / "arbiter.json") == ["qemu-arm"]

    class Loaded:                                           # labgrid's Coordinator.load, its places
        def load(self):
            self.places = {b: Place(name=b) for b in BOARDS}
    coordinator.keep_lava_holds(Loaded, tmp_path / "arbiter.json")
    c = Loaded()
    c.load()
    assert c.places["qemu-arm"].acquired == LAVA_OWNER and c.places["qemu-ppc"].acquired is None
    assert lg.Coordinator.load is not Loaded.load           # labgrid's own class untouched here
    arbiterd.give_back(a)
    assert coordinator.lava_held(tmp_path / "arbiter.json") == []   # a stop gives LAVA nothing back
    assert coordinator.lava_held(tmp_path / "none.json") == []


def test_a_stop_of_the_arbiter_alone_keeps_the_place_of_a_running_job_until_it_ends(lab, tmp_path):
    """Issue 'The shared lab, round two': SIGTERM released every place, and qemu-arm-noisy's
    was free for 3 s during its health check. Now a place whose job runs stays LAVA's, the
    log says who frees it, and this stop releases it as the job ends; the others at once."""
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.start_job("qemu-arm", 9, health_check=True)
    a.round()
    slept = []

    def sleep(s):                 # the job ends while the stop waits
        slept.append(s)
        assert lab.places["qemu-arm"]["acquired"] == LAVA_OWNER and lab.places["qemu-ppc"]["acquired"] is None
        if len(slept) == 2:
            lab.end_job(9)
    kept = arbiterd.give_back(a, wait_s=600, now=lambda: False, poll=5, sleep=sleep)
    assert kept == {} and len(slept) == 2 and lab.places["qemu-arm"]["acquired"] is None
    assert any("qemu-arm: kept for LAVA job 9" in m and "this stop releases it when the job ends" in m for m in log)
    assert any(m == "qemu-arm: released: LAVA job 9 ended; LAVA's arbiter stops" for m in log), log
    assert state(tmp_path)["round"]["held"] == []
    # LAVA powers only boards it holds (lab.powerguard): both free boards set aside, so its
    # jobs wait for the next arbiter instead of failing on a board a person may take
    assert {b: d["health"] for b, d in lab.devices.items()} == {"qemu-arm": "Maintenance",
                                                                 "qemu-ppc": "Maintenance"}
    a = arbiter(tmp_path, log)                                     # the next arbiter gives them back
    a.round()
    a.round()
    assert lab.places["qemu-arm"]["acquired"] == LAVA_OWNER == lab.places["qemu-ppc"]["acquired"]
    assert {d["health"] for d in lab.devices.values()} <= {"Good", "Unknown"}, lab.devices


def test_a_stop_past_its_wait_leaves_the_place_to_the_next_arbiter_and_says_so(lab, tmp_path):
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.start_job("qemu-arm", 9)
    a.round()
    t = [0.0]
    kept = arbiterd.give_back(a, wait_s=10, now=lambda: False, poll=5, clock=lambda: t[0],
                              sleep=lambda s: t.__setitem__(0, t[0] + s))
    assert kept == {"qemu-arm": 9} and lab.places["qemu-arm"]["acquired"] == LAVA_OWNER
    # set aside at the stop, its job running on: LAVA starts nothing new on it when the job
    # ends (a chaos round: the scheduler started a queued job between the end and the release)
    assert lab.devices["qemu-arm"]["health"] == "Maintenance"
    assert state(tmp_path)["round"]["held"] == ["qemu-arm"]      # a coordinator restart keeps it LAVA's
    assert "qemu-arm: still LAVA's after 10 s: job 9 runs; the next arbiter releases it" in log
    a = arbiter(tmp_path, log)                                     # the next arbiter: kept while the job runs
    assert ("qemu-arm", "acquire") not in a.round() and lab.places["qemu-arm"]["acquired"] == LAVA_OWNER


def test_the_lava_server_going_down_releases_every_place_at_once(lab, tmp_path):
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.start_job("qemu-arm", 9)
    a.round()
    assert arbiterd.give_back(a, wait_s=600, now=lambda: True, sleep=lambda s: pytest.fail("waited")) == {}
    assert lab.places["qemu-arm"]["acquired"] is None and lab.places["qemu-ppc"]["acquired"] is None


def reserve_by_tags(lab, token="BROAD", **tags):
    lab.reservations.append({"token": token, "owner": "vm/alice", "state": "waiting",
                             "filters": {"main": dict(tags)}, "allocations": {}})


def test_a_reservation_by_tags_takes_the_first_board_that_frees_not_all(lab, tmp_path):
    """Issue 'The shared lab, round two': a reservation matching both LAVA boards set both
    in Maintenance (and a walked-away one cost both a health check). Now one board: none
    while both run jobs, then the first that frees; the other stays LAVA's throughout."""
    a = arbiter(tmp_path, [])
    a.round()
    lab.start_job("qemu-arm", 1)
    lab.start_job("qemu-ppc", 2)
    a.round()
    reserve_by_tags(lab, arch="arm")
    assert a.round() == [] and health_updates(lab) == []          # both busy: nobody set aside
    lab.end_job(2)
    assert a.round() == [("qemu-ppc", "maintenance")]
    assert a.round() == [("qemu-ppc", "release")]
    lab.end_job(1)
    lab.schedule()
    assert lab.reservations[0]["allocations"] == {"main": "qemu-ppc"}
    a.round()
    assert lab.devices["qemu-arm"]["health"] == "Good" and lab.places["qemu-arm"]["acquired"] == LAVA_OWNER


def test_a_bad_board_is_not_handed_to_a_reservation_by_tags_but_to_one_naming_it(lab, tmp_path):
    a = arbiter(tmp_path, [])
    a.round()
    lab.devices["qemu-arm"]["health"] = "Bad"
    lab.start_job("qemu-ppc", 3)
    a.round()
    assert lab.places["qemu-arm"]["acquired"] == LAVA_OWNER       # kept from broad reservations
    reserve_by_tags(lab, arch="arm")
    assert a.round() == [] and lab.places["qemu-arm"]["acquired"] == LAVA_OWNER
    lab.reservations = []
    lab.reserve("qemu-arm", token="MEND")                           # by name: to mend it
    lab.reservations[0]["filters"] = {"main": {"name": "qemu-arm"}}
    assert a.round() == [("qemu-arm", "release")] and lab.devices["qemu-arm"]["health"] == "Bad"


def test_an_allocated_reservation_nobody_acquired_shows_in_lab_status_with_its_timeout():
    from boardlab.lab.glance import reservation_rows
    from boardlab.lab.listings import parse_reservations
    lab = FakeLab(BOARDS)
    lab.reserve("qemu-arm", state="allocated", token="WALKED")
    lab.reserve("qemu-ppc", token="WAITS")
    rows = {r.name: r for r in reservation_rows(parse_reservations(lab.reservations_text()))}
    assert set(rows) == {"WALKED", "WAITS"}
    assert rows["WALKED"].problem.startswith("allocated qemu-arm, not acquired: the coordinator drops it at ")
    assert rows["WAITS"].problem == "waiting: no free place matches it yet"


def test_a_stop_that_cannot_read_lavas_device_log_undoes_nothing(lab, tmp_path, monkeypatch):
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    lab.reserve("qemu-arm")
    a.round()
    lab.reservations = []

    def unreadable(identity, device):
        raise OSError("connection refused")
    monkeypatch.setattr("boardlab.lab.arbiter.device_transitions", unreadable)
    arbiterd.give_back(a)
    assert lab.devices["qemu-arm"]["health"] == "Maintenance" and "qemu-arm" in state(tmp_path)["aside"]
    assert any("LAVA's device log not read (connection refused)" in m for m in log), log
    assert lab.places["qemu-arm"]["acquired"] is None and lab.places["qemu-ppc"]["acquired"] is None


def test_each_passed_health_check_is_kept_and_a_drifting_board_quarantined(lab, tmp_path, monkeypatch):
    """LAVA's health checks feed the board's history (its figures read off the job's log,
    a real captured one with the login figure changed): seven checks learn its level, the
    eighth, 10 % slower on its own clock, quarantines it; no round gives it back."""
    import re
    from boardlab.judge import boardhealth as bh_store
    from boardlab.lab import healthlog
    from paths import DATA
    monkeypatch.setattr(bh_store, "HEALTH_DIR", tmp_path / "health")
    # the reference kernel's identity, not this host's image of it: a session beside may be
    # making that image again meanwhile (a test of the history's levels: test_boardhealth.py)
    monkeypatch.setattr(healthlog, "reference_identity", lambda board, kernel: {"release": "6.1.0-50-armmp"})
    captured = (DATA / "lava" / "health-check-qemu-arm.output.yaml").read_text()
    log = []
    a = arbiter(tmp_path, log)
    a.round()
    for n, login in enumerate([20.729278] * 7 + [20.729278 * 1.10], start=100):
        lab.logs[n] = re.sub(r"boot_time\.guest_login=[0-9.]+", f"boot_time.guest_login={login:.6f}", captured)
        lab.start_job("qemu-arm", n, health_check=True)
        a.round()
        lab.end_job(n)
        a.round()
    assert [e["figures"]["memory.free_total_kb"] for e in bh_store.load("qemu-arm")] == [112196.0] * 8
    assert lab.devices["qemu-arm"]["health"] == "Maintenance"
    assert lab.descriptions["qemu-arm"].startswith("boardlab: drifting since ")
    assert "boot_time.guest_login +10.0 %" in lab.descriptions["qemu-arm"]
    assert any("qemu-arm quarantined" in m for m in log), log
    assert lab.places["qemu-arm"]["comment"] == lab.descriptions["qemu-arm"]      # the place says it too
    assert not any("not kept" in m for m in log), log
    a.round()
    a.round()
    assert lab.devices["qemu-arm"]["health"] == "Maintenance"    # not the arbiter's to give back
