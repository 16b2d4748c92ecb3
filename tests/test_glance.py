"""The lab at a glance: the coordinator's own text read as a person reads it, and which
rows make the lab not ready (exit 1 for a scheduler that asks before submitting)."""
from pathlib import Path

from boardlab.facts.board import load_board
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


def lava(health="Good", job=None):
    return {"health": health, "state": "Running" if job else "Idle", "current_job": job,
            "last_check": "#3 Complete 2026-11-26T08:40", "last_job": "#9 Incomplete 2026-11-26T08:50"}


def test_who_holds_a_board_and_what_makes_it_not_ready(tmp_path):
    board = load_board("qemu-arm")
    r = glance.board_row(board, show("acquired"), lava(), tmp_path)
    assert r.up and r.detail["held by"] == "labgrid vm/alice" and r.detail["last check"].startswith("#3")
    r = glance.board_row(board, show("free"), lava(job=12), tmp_path)
    assert r.detail["held by"] == "LAVA job 12"
    r = glance.board_row(board, show("free"), lava("Bad"), tmp_path)
    assert not r.up and "LAVA health Bad" in r.problem and "#3" in r.problem
    gone = dict(show("free"), resources={"NetworkPowerPort": False, "NetworkSerialPort": True})
    assert "exporter" in glance.board_row(board, gone, None, tmp_path).problem
    assert glance.board_row(board, None, None, tmp_path).problem == "no place at the coordinator"
    text = glance.render([glance.Row("lab host", "vlab", True), r])
    assert "NOT READY" in text and "1 of 2 not ready" in text


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
