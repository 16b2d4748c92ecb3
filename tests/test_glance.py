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
