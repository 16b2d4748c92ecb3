"""A board's performance health (boardlab.judge.boardhealth): its checks against its own
level, by the one judge. Figures as qemu-arm's checks give them: its own clock's boot
to the login prompt (guest-deterministic: repeats to a few microseconds) and free's
total memory; a slow board's boot is the steady one's times 1.10."""
import random

import pytest

from boardlab.facts.board import load_board
from boardlab.judge import boardhealth as bh

BOARD = load_board("qemu-arm")
LOGIN = 20.759535   # s, qemu-arm's boot to its login prompt on its own clock (LAVA's job log, 2026-12-06)


def check(i: int, slower: float = 1.0, jitter: float = 0.0) -> dict:
    return {"at": f"2026-12-06T{i // 60:02d}:{i % 60:02d}:00", "kernel": "armmp",
            "figures": {"boot_time.guest_login": round(LOGIN * slower + jitter, 6),
                        "memory.free_total_kb": 112196.0},
            "clocks": {"boot_time.guest_login": "guest-deterministic"}}


def steady(n: int, rng=None) -> list:
    rng = rng or random.Random(1)
    return [check(i, jitter=rng.uniform(-2e-4, 2e-4)) for i in range(n)]


def test_a_board_is_learning_until_it_has_a_level():
    h = bh.judge(steady(bh.REFERENCE_MIN + bh.RECENT - 1), BOARD)
    assert h.state == bh.LEARNING and "learning its level" in h.line()


def test_a_board_ten_percent_slower_is_drifting_at_its_first_slow_check():
    """Its own clock's boot is exact: one check decides."""
    history = steady(10)
    history.append(check(10, slower=1.10))
    h = bh.judge(history, BOARD)
    assert h.state == bh.DRIFTING, h
    [d] = h.drifts
    assert d.key == "boot_time.guest_login" and 9.9 < d.delta_pct < 10.1 and d.since == history[-1]["at"]
    assert h.line() == f"drifting since {history[-1]['at']}: boot_time.guest_login +10.0 %"


def test_a_steady_board_is_never_drifting_over_a_hundred_checks():
    history = steady(100, random.Random(7))
    states = [bh.judge(history[:n], BOARD).state for n in range(bh.REFERENCE_MIN + bh.RECENT, 101)]
    assert set(states) == {bh.STEADY}


@pytest.mark.parametrize("faster", [0.9])
def test_a_board_that_got_faster_changed_too(faster):
    h = bh.judge(steady(10) + [check(10, faster), check(11, faster)], BOARD)
    assert h.state == bh.DRIFTING and h.drifts[0].delta_pct < 0


def test_an_accepted_level_starts_the_reference_again():
    history = steady(10) + [check(10, 1.1), check(11, 1.1), {"at": "2026-12-06T01:00:00",
                                                            "accepted": "fan replaced"}]
    assert bh.judge(history, BOARD).state == bh.LEARNING
    history += [check(20 + i, 1.1) for i in range(bh.REFERENCE_MIN + bh.RECENT)]
    assert bh.judge(history, BOARD).state == bh.STEADY


def test_a_drift_stays_however_many_sick_checks_follow_until_a_level_is_accepted(tmp_path):
    """Kept checks found drifting are no part of the level: the sick board does not become
    its own new normal (a live run did: steady again from the third sick check)."""
    for c in steady(10):
        bh.record(BOARD, "armmp", c["figures"], directory=tmp_path, at=c["at"])
    states = [bh.record(BOARD, "armmp", check(10 + i, 1.10)["figures"], directory=tmp_path, at=f"t{i}").state
              for i in range(25)]
    assert set(states) == {bh.DRIFTING}
    assert [e.get("drifting") for e in bh.load("qemu-arm", tmp_path)[-3:]] == [True] * 3
    # drifting since the first sick check, however many followed (a live nightly showed the latest)
    assert bh.judge(bh.load("qemu-arm", tmp_path)).drifts[0].since == "t0"
    bh.accept("qemu-arm", "fan replaced", tmp_path)
    for i in range(bh.REFERENCE_MIN + bh.RECENT):
        h = bh.record(BOARD, "armmp", check(50 + i, 1.10)["figures"], directory=tmp_path, at=f"u{i}")
    assert h.state == bh.STEADY


def test_a_reference_kernel_rebuilt_with_another_config_begins_a_new_level(tmp_path):
    """The reference kernel rebuilt (another config: 6.1 crediting the boot loader's seed
    booted qemu-ppc 11 % faster) is the kernel's change, not the board's: its figures begin
    a new level, and the history says why."""
    built = {"release": "6.1.192", "source_version": "linux-source-6.1 6.1.192-2", "config_sha256": "23b6",
             "compiler": "gcc 12.2.0"}
    for c in steady(10):
        bh.record(BOARD, "armmp", c["figures"], directory=tmp_path, at=c["at"], identity=built)
    rebuilt = {**built, "config_sha256": "f906"}
    h = bh.record(BOARD, "armmp", check(10, 0.89)["figures"], directory=tmp_path, at="t0", identity=rebuilt)
    assert h.state == bh.LEARNING, h.line()
    said = [e["accepted"] for e in bh.load("qemu-arm", tmp_path) if "accepted" in e]
    assert said == ["the reference kernel armmp changed: 6.1.192 from linux-source-6.1 6.1.192-2, config 23b6 -> "
                    "6.1.192 from linux-source-6.1 6.1.192-2, config f906"]
    # the same kernel again, or a check that knows no identity: the level goes on
    bh.record(BOARD, "armmp", check(11, 0.89)["figures"], directory=tmp_path, at="t1", identity=rebuilt)
    bh.record(BOARD, "armmp", check(12, 0.89)["figures"], directory=tmp_path, at="t2")
    assert len([e for e in bh.load("qemu-arm", tmp_path) if "accepted" in e]) == 1
    assert bh.judge(bh.load("qemu-arm", tmp_path)).checks == 3


# ---- the board's history, its quarantine, its accepted level (boardlab.lab.healthlog) ----

def test_checks_are_kept_per_board_and_a_drift_quarantines_it_until_accepted(tmp_path, monkeypatch):
    from boardlab.judge import boardhealth as bh_store
    from boardlab.lab import cli, glance, healthlog
    told = []
    monkeypatch.setattr(bh_store, "HEALTH_DIR", tmp_path)
    monkeypatch.setattr(healthlog, "tell_lab", lambda board, description, health, identity, coordinator, echo=print, lava=True:
                        told.append((board, health, description)))
    monkeypatch.setattr("boardlab.sharing.placehold.shared_with_lava", lambda board: "LAVA's")
    for c in steady(8):
        h = bh_store.record(BOARD, "armmp", c["figures"], at=c["at"])
    assert h.state == bh.STEADY and len(bh_store.load("qemu-arm")) == 8
    assert bh_store.load("qemu-arm")[0]["clocks"] == {"boot_time.guest_login": "guest-deterministic",
                                                       "memory.free_total_kb": "none"}

    class Check:
        kernel, measured = "armmp", check(9, slower=1.10)["figures"]
    assert cli._performance(BOARD, Check()) == 1                          # quarantined: exit 1
    assert told[-1][:2] == ("qemu-arm", "MAINTENANCE") and "drifting since" in told[-1][2]
    row = glance.board_row("qemu-arm", "vlab", None, True, None, None, 0, 8, bh_store.health_of("qemu-arm"))
    assert "drifting since" in row.problem and "boot_time.guest_login +10.0 %" in row.detail["performance"]
    with pytest.raises(Exception, match="--reason"):
        bh_store.accept("qemu-arm", " ")
    bh_store.accept("qemu-arm", "fan replaced")
    assert bh_store.health_of("qemu-arm").state == bh.LEARNING
    assert bh_store.load("qemu-arm")[-1]["accepted"] == "fan replaced"


def test_lab_accept_hands_the_board_back_to_lava(tmp_path, monkeypatch, capsys):
    from boardlab import cli
    from boardlab.judge import boardhealth as bh_store
    from boardlab.lab import healthlog
    told = []
    monkeypatch.setattr(bh_store, "HEALTH_DIR", tmp_path)
    monkeypatch.setattr(healthlog, "tell_lab", lambda board, description, health, identity, coordinator, echo=print, lava=True:
                        told.append((board, health, description)))
    assert cli.main(["lab", "accept", "qemu-arm", "--reason", "re-baselined after the NFS server move"]) == 0
    assert told == [("qemu-arm", "UNKNOWN", "")]
    assert cli.main(["lab", "accept", "no-such-board", "--reason", "x"]) == 2


def test_a_lava_health_checks_figures_are_read_off_its_log():
    """A real job's log (LAVA job 135, qemu-arm, 2026-12-06): the board's own answers."""
    from boardlab.lava.health import figures_of_log
    from paths import DATA
    text = (DATA / "lava" / "health-check-qemu-arm.output.yaml").read_text()
    assert figures_of_log(text) == {"boot_time.guest_login": 20.729278, "memory.free_total_kb": 112196.0}
