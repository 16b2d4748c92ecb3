"""A night samples through the lab's one loop (judge.verdict.sample_until_decided): its
figures judged against the nights before it, as few boots as decide, at most its budget."""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest

from boardlab.bisect import nightly
from boardlab.facts.board import load_board
from boardlab.judge.results import RunResults
from boardlab.measure import clocks

LOGIN = "boot_time.guest_login"


def _night(tmp_path, monkeypatch, figures, against, budget=5, board="qemu-arm", qemu_clock="deterministic"):
    """nightly._measure with its boots answered by `figures` (one dict a boot, in turn):
    (boots taken, the run's results)."""
    from boardlab.boot import session
    from boardlab.vlab import host
    taken = []
    strategy = SimpleNamespace(select=lambda **kw: None, last_boot=SimpleNamespace(qemu_clock=qemu_clock))

    @contextlib.contextmanager
    def board_session(env, console, **_):
        yield strategy, None

    def one_sample(*a):
        taken.append(1)
        return dict(figures[len(taken) - 1]), {}
    monkeypatch.setattr(session, "board_session", board_session)
    monkeypatch.setattr(host, "virtual_host_of", lambda b: None)
    monkeypatch.setattr(nightly.sample, "one_sample", one_sample)
    res = RunResults(tmp_path)
    res.meta["nightly"] = {}
    nightly._measure(res, load_board(board), "abc", tmp_path / "u", ("boot_time",), budget, "", against)
    return len(taken), res


def _level(values, clock=clocks.GUEST_DETERMINISTIC):
    """The nights before, measured on this host."""
    return nightly.Figures(values, clock, clocks.this_host()["id"])


def test_a_night_at_a_level_the_nights_before_showed_exact_takes_one_boot(tmp_path, monkeypatch):
    boots, res = _night(tmp_path, monkeypatch, [{LOGIN: 20.7262}] * 5, {LOGIN: _level([20.7262] * 3)})
    assert boots == 1
    assert res.meta["nightly"]["against_last_night"][LOGIN]["outcome"] == "same"


def test_a_night_one_floor_slower_is_decided_in_one_boot(tmp_path, monkeypatch):
    boots, res = _night(tmp_path, monkeypatch, [{LOGIN: 22.0}] * 5, {LOGIN: _level([20.7262] * 3)})
    assert boots == 1
    assert res.meta["nightly"]["against_last_night"][LOGIN]["outcome"] == "regressed"


def test_a_first_night_shows_its_own_exactness_in_three_boots(tmp_path, monkeypatch):
    boots, res = _night(tmp_path, monkeypatch, [{LOGIN: 20.7262}] * 5, {})
    assert boots == 3 and res.metrics[0].samples == [20.7262] * 3
    assert res.meta["nightly"]["against_last_night"] == {}


def test_a_noisy_night_stops_where_its_budget_cannot_decide(tmp_path, monkeypatch):
    """On the host-bound clock the night before is another session: no number of boots
    decides against it (the judge's drift rule), so the night takes its 3 and no more."""
    noisy = [{LOGIN: v} for v in (30.1, 33.0, 29.4, 35.2, 31.0)]
    boots, _ = _night(tmp_path, monkeypatch, noisy, {LOGIN: _level([30.0, 31.0, 32.5], clocks.GUEST_REALTIME)},
                      board="qemu-arm-noisy", qemu_clock="realtime")
    assert boots == 3


def test_the_budget_bounds_a_night(tmp_path, monkeypatch):
    boots, _ = _night(tmp_path, monkeypatch, [{LOGIN: 20.7262}] * 5, {}, budget=2)
    assert boots == 2


@pytest.mark.parametrize("entries, pooled", [
    ([("k3", [20.0], "qemu-arm.guest-deterministic"), ("k2", [20.0], "qemu-arm.guest-deterministic"),
      ("k1", [20.0, 20.0], "qemu-arm.guest-deterministic")], [20.0, 20.0, 20.0, 20.0]),
    # a night of one boot after a change: the older level is not pooled with it
    ([("k3", [22.0], "qemu-arm.guest-deterministic"), ("k2", [20.0] * 3, "qemu-arm.guest-deterministic")],
     [22.0]),
    # another series of the board (its flavour) is passed over
    ([("k3", [20.0], "qemu-arm.guest-deterministic"), ("k2", [20.0] * 3, "qemu-arm.rt.guest-deterministic"),
      ("k1", [20.0] * 2, "qemu-arm.guest-deterministic")], [20.0] * 3),
])
def test_a_night_is_judged_against_its_series_pooled_while_it_agrees(entries, pooled):
    from boardlab.measure import catalogue
    ref = nightly.night_reference(catalogue.spec(LOGIN), entries)
    assert list(ref.samples) == pooled and ref.clock == clocks.GUEST_DETERMINISTIC


def test_an_unknown_night_says_the_smallest_change_its_board_decides(tmp_path, monkeypatch):
    noisy = [{LOGIN: v} for v in (30.1, 33.0, 29.4)]
    _, res = _night(tmp_path, monkeypatch, noisy, {LOGIN: _level([30.0, 31.0, 32.5], clocks.GUEST_REALTIME)},
                    board="qemu-arm-noisy", qemu_clock="realtime")
    said = res.meta["nightly"]["against_last_night"][LOGIN]
    assert said["outcome"] == "unknown" and said["boots"] == 3
    assert "the smallest change this board decides in 5 boots: boot_time.guest_login: " in said["why"]
