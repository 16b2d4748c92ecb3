"""The lab at a glance: the coordinator's own text read as a person reads it, and which
rows make the lab not ready (exit 1 for a scheduler that asks before submitting)."""
from pathlib import Path

from boardlab.lab import glance

DATA = Path(__file__).parent / "data"


def show(name):
    return glance.parse_place_show((DATA / f"labgrid-place-show-{name}.txt").read_text())


def test_a_place_as_labgrid_client_shows_it():
    free, reserved, acquired = show("free"), show("reserved"), show("acquired")
    assert free == {"acquired": None, "reservation": None,
                    "resources": {"NetworkPowerPort": True, "NetworkSerialPort": True, "TFTPProvider": True}}
    assert reserved["reservation"] == "8W3AGFF5D8" and reserved["acquired"] is None
    assert acquired["acquired"] == "vm/alice" and all(acquired["resources"].values())
    assert len(acquired["resources"]) == 3


def lava(health="Good", job=None, worker_state="Online"):
    return {"health": health, "state": "Running" if job else "Idle", "current_job": job,
            "worker": "boardlab-vlab", "worker_state": worker_state,
            "last_check": "#3 Complete 2026-11-26T08:40", "last_job": "#9 Incomplete 2026-11-26T08:50"}


NOW = 1_800_000_000.0


def row(place, lava_, offered=True, now=NOW, limit_h=24):
    return glance.board_row("qemu-arm", "vlab", place, offered, lava_, None, now, limit_h)


def test_who_holds_a_board_and_what_makes_it_not_ready():
    r = row(show("acquired"), lava())
    assert r.up and r.detail["held by"] == "labgrid vm/alice" and r.detail["last check"].startswith("#3")
    r = row(show("free"), lava(job=12))
    assert r.up and r.detail["held by"] == "LAVA job 12"
    r = row(show("free"), lava("Bad"))
    assert not r.up and "LAVA health Bad" in r.problem and "#3" in r.problem
    assert "exporter" in row(show("free"), None, offered=False).problem
    assert row(None, None).problem == "no place at the coordinator"
    text = glance.render([glance.Row("lab host", "vlab", True), r])
    assert "NOT READY" in text and "1 of 2 not ready" in text


def test_each_condition_a_scheduler_must_know_of_is_a_problem():
    for health in ("Maintenance", "Unknown", "Looping", "Retired"):
        assert f"LAVA health {health}" in row(show("free"), lava(health)).problem
    overlap = row(show("acquired"), lava(job=12)).problem
    assert "OVERLAP: vm/alice holds it while LAVA job 12 runs" in overlap
    assert row(show("acquired"), lava(job=12)).detail["held by"] == "labgrid vm/alice and LAVA job 12"
    dead = row(dict(show("free"), acquired="lava-arbiter/lava"), lava(job=4, worker_state="Offline")).problem
    assert dead == "LAVA job 4 Running on worker boardlab-vlab, which is Offline"
    held = dict(show("acquired"), changed=NOW - 30 * 3600)
    assert row(held, lava()).problem == "held by vm/alice for 30 h (the lab's limit: 24 h)"
    assert row(held, lava(), limit_h=48).problem == ""
    assert row(dict(held, acquired="lava-arbiter/lava"), lava()).problem == ""   # LAVA's hold is meant to last


def test_the_arbiter_up_late_gone_or_missing(tmp_path):
    import json
    import os
    f = tmp_path / "arbiter.json"
    assert glance.arbiter_row(f, lava_up=False, now=NOW) is None          # a lab without LAVA
    assert "no arbiter" in glance.arbiter_row(f, lava_up=True, now=NOW).problem
    overlap = {"board": "qemu-arm", "job": 7, "holder": "vm/bob", "at": NOW - 60,
               "ended": "LAVA job 7 cancelled: vm/bob holds the place"}
    f.write_text(json.dumps({"aside": {"qemu-ppc": {}}, "overlaps": [overlap],
                             "round": {"at": NOW - 2, "pid": os.getpid(), "took_s": 0.1, "boards": 2}}))
    r = glance.arbiter_row(f, lava_up=True, now=NOW)
    assert r.up and not r.problem and "LAVA job 7 cancelled" in r.detail["overlaps ended"]
    assert r.detail["set aside"] == "qemu-ppc"
    assert "last round was 600 s ago" in glance.arbiter_row(f, True, NOW + 598).problem
    f.write_text(json.dumps({"round": {"at": NOW - 2, "pid": 99999999}}))     # SIGKILLed: its file stays
    assert glance.arbiter_row(f, lava_up=True, now=NOW).problem == "not running (pid 99999999 gone)"


def test_waiting_reservations_are_rows_of_their_own():
    from boardlab.lab.listings import parse_reservations
    text = ("Reservation 'QDZJOR11YX':\n  owner: vm/alice\n  token: QDZJOR11YX\n  state: waiting\n"
            "  filters:\n    main: board=qemu-ppc\n  created: 2026-11-26 08:57:46\n"
            "Reservation 'AAAA':\n  owner: vm/bob\n  token: AAAA\n  state: acquired\n")
    rows = glance.reservation_rows(parse_reservations(text))
    assert [(r.name, r.detail["owner"], r.detail["filters"]) for r in rows] == [("QDZJOR11YX", "vm/alice",
                                                                                  "board=qemu-ppc")]
    assert rows[0].problem


def test_the_last_result_is_the_newest_run_of_that_board(tmp_path):
    for name, board in (("old", "qemu-arm"), ("new", "qemu-ppc")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(f'{{"board": "{board}"}}')
    assert glance.last_result("qemu-arm", tmp_path) == "old"
    assert glance.last_result("sandpoint", tmp_path) is None


def test_every_place_as_labgrid_client_v_places_lists_them():
    """tests/data/labgrid-places-v.txt: printed by labgrid 26.0.1's own code (print_places
    with -v: "Place 'NAME':", then Place.show at level 1), for four places: LAVA's, a
    person's with its reservation, one allocated to a reservation, a free one with an
    alias and a comment."""
    from datetime import datetime
    from boardlab.lab.listings import parse_places
    places = parse_places((DATA / "labgrid-places-v.txt").read_text())
    assert list(places) == ["qemu-arm", "qemu-ppc", "sandpoint", "tqm860l"]
    assert places["qemu-arm"]["acquired"] == "lava-arbiter/lava" and places["qemu-arm"]["reservation"] is None
    ppc = places["qemu-ppc"]
    assert ppc["acquired"] == "vm/alice" and ppc["reservation"] == "QDZJOR11YX"
    assert ppc["tags"] == {"arch": "ppc", "board": "qemu-ppc", "cpu": "e500mc", "ram": "128mb"}
    assert ppc["matches"] == ["vlab2/qemu-ppc/*"]
    assert ppc["changed"] == datetime.fromisoformat("2026-11-29 17:02:05.120001").timestamp()
    assert places["sandpoint"]["comment"] == "MPC8245 eval board" and places["sandpoint"]["acquired"] is None
    assert places["sandpoint"]["changed"] == datetime.fromisoformat("2026-12-01 09:00:00").timestamp()
    assert places["tqm860l"] == {"acquired": None, "reservation": None, "tags": {"arch": "ppc", "board": "tqm860l"},
                                 "matches": ["labhost1/tqm860l/*"], "comment": "",
                                 "changed": datetime.fromisoformat("2026-12-01 09:00:00").timestamp()}


def test_the_installed_labgrids_own_printing_reads_the_same():
    """The places printed live by the installed labgrid's Place.show (tests/fakelab.py)."""
    from boardlab.lab.listings import offered, parse_devices, parse_places, parse_reservations
    from fakelab import FakeLab
    lab = FakeLab(["a", "b"])
    lab.person_acquires("b", "vm/bob")
    lab.reserve("a", state="allocated", token="T0KEN")
    places = parse_places(lab.places_text())
    assert places["b"]["acquired"] == "vm/bob" and abs(places["b"]["changed"] - lab.places["b"]["changed"]) < 1e-3
    assert places["a"]["reservation"] == "T0KEN" and places["a"]["tags"] == {"arch": "arm", "board": "a"}
    assert parse_reservations(lab.reservations_text())[0]["allocations"] == {"main": "a"}
    resources = lab.labgrid(["resources"], "x")[0]
    assert offered(resources, places["a"]["matches"]) and not offered(resources, ["labhost1/a/*"])
    assert parse_devices(lab.lavacli(["devices", "list", "--all", "--json"])[0])["b"]["health"] == "Good"


def test_the_whole_lab_in_three_labgrid_calls_and_four_lava_requests(monkeypatch, tmp_path):
    import subprocess
    from types import SimpleNamespace
    from fakelab import FakeLab
    boards = [f"board{i:02d}" for i in range(50)]
    lab = FakeLab(boards)
    monkeypatch.setattr(subprocess, "run", lab.run)
    monkeypatch.setattr("boardlab.lab.arbiter.device_transitions", lab.device_transitions)
    monkeypatch.setattr(glance, "_lava_get", lab.rest)
    lab.person_acquires("board03", "vm/bob")
    lab.start_job("board03", 41)
    lab.places["board07"]["acquired"] = "lava-arbiter/lava"
    lab.start_job("board07", 42)
    lab.worker_state = "Offline"
    host = SimpleNamespace(name="vlab", kind="real", exporter_name=None, boards=tuple(boards))
    rows = glance.lab_rows([host], "127.0.0.1:1", "http://lava/", tmp_path, tmp_path / "none.json", 24, NOW)
    assert [c[:3] for c in lab.calls if c[0] == "labgrid-client"] == [
        ("labgrid-client", "-v", "places"), ("labgrid-client", "resources"), ("labgrid-client", "reservations")]
    assert len([c for c in lab.calls if c[0] == "GET"]) == 4
    bad = {r.name: r.problem for r in rows if r.problem}
    assert "OVERLAP: vm/bob holds it while LAVA job 41" in bad["board03"]
    assert "which is Offline" in bad["board07"]
    assert "no arbiter" in bad["-"] and len(bad) == 3 and len(rows) == 53


def test_the_labs_hold_limit_is_a_fact(tmp_path):
    import pytest
    from boardlab.facts.labfacts import load_lab
    from boardlab.facts.typedyaml import FactsError
    assert load_lab().hold_limit_h == 24
    text = (load_lab().path and open(load_lab().path).read())
    (tmp_path / "lab.yaml").write_text(text.replace("hold_limit_h: 24", "hold_limit_h: 0"))
    with pytest.raises(FactsError, match="hold_limit_h"):
        load_lab(tmp_path / "lab.yaml")
    (tmp_path / "lab.yaml").write_text(text.replace("hold_limit_h: 24\n", ""))
    assert load_lab(tmp_path / "lab.yaml").hold_limit_h == 24      # the default
