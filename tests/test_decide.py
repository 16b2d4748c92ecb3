"""The one judge (boardlab.judge.decide): every outcome of the one verdict type, each rule
in its order."""
import pytest

from boardlab.facts.board import load_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide

ARM = load_board("qemu-arm")
HERE = "vm-0123456789abcdef"
KERNEL = {"release": "6.1.0-50-armmp", "proc_version": "Linux version 6.1.0-50-armmp #1 SMP Debian 6.1.192-2"}


def test_information_only_figures_are_never_compared():
    v = decide("jitter.min_us", Figures([66.0]), Figures([40.0]), ARM)
    assert v.outcome == vd.INFO and not v.compared and "0.1th percentile" in v.why


@pytest.mark.parametrize("a, b, outcome", [(None, Figures([1.0]), vd.NEW), (Figures([1.0]), None, vd.MISSING),
                                           (Figures([]), Figures([1.0]), vd.NEW)])
def test_a_side_without_figures_is_new_or_missing(a, b, outcome):
    assert decide("memory.free_total_kb", a, b, ARM).outcome == outcome


def test_the_rules_come_in_order_kernel_clock_host():
    other = dict(KERNEL, proc_version="Linux version 6.1.0-50-armmp #1 SMP Debian 6.1.176-1")
    v = decide("boot_time.login", Figures([7.0], "guest-realtime", "vm-a", KERNEL),
               Figures([7.0], "host", "vm-b", other), ARM)
    assert v.outcome == vd.OTHER_KERNEL
    v = decide("boot_time.login", Figures([7.0], "guest-realtime", "vm-a"), Figures([7.0], "host", "vm-b"), ARM)
    assert v.outcome == vd.OTHER_CLOCK
    v = decide("boot_time.login", Figures([7.0], "host", "vm-a"), Figures([7.0], "host", "vm-b"), ARM)
    assert v.outcome == vd.OTHER_HOST and v.to_dict() == {"outcome": vd.OTHER_HOST, "why": v.why}


def test_a_size_of_the_study_has_no_clock_and_no_host():
    v = decide("build.uimage_data_bytes", Figures([507688.0]), Figures([723718.0]), load_board("tqm860l"))
    assert v.outcome == vd.REGRESSED and v.method == "exact"


def test_a_host_bound_change_against_another_session_is_drift_until_interleaved():
    a = Figures([7.00, 7.02, 7.01, 6.99, 7.00], "host", HERE)
    b = Figures([8.00, 8.02, 8.01, 7.99, 8.00], "host", HERE)
    stored = decide("boot_time.login", a, b, ARM)
    assert stored.outcome == vd.UNKNOWN and "drifts between sessions" in stored.why
    assert decide("boot_time.login", a, b, ARM, interleaved=True).outcome == vd.REGRESSED
    # the board's own clock does not drift with the host
    guest = decide("boot_time.guest_login", Figures([20.72], "guest-deterministic", "vm-a"),
                   Figures([22.0], "guest-deterministic", "vm-b"), ARM)
    assert guest.outcome == vd.REGRESSED


def test_figures_measured_otherwise_are_not_judged_where_both_say_how():
    ten, sixty = Figures([2100.0], settings={"run_s": 10}), Figures([2500.0], settings={"run_s": 60})
    v = decide("jitter.max_us", ten, sixty, ARM)
    assert v.outcome == vd.OTHER_SETTINGS and "run_s 10" in v.why and "run_s 60" in v.why
    assert decide("jitter.max_us", Figures([2100.0]), sixty, ARM).outcome != vd.OTHER_SETTINGS   # unsaid: judged


def test_the_harness_floor_is_the_judges_to_apply():
    a, b = Figures([88544.0], "none"), Figures([88400.0], "none")     # -144 kB
    assert decide("memory.free_total_kb", a, b, ARM).outcome == vd.REGRESSED
    assert decide("memory.free_total_kb", a, b, ARM, harness="lava").outcome == vd.SAME


def test_every_outcome_is_one_type():
    assert set(vd.OUTCOMES) | set(vd.NOT_COMPARED) == {
        "same", "regressed", "improved", "unknown", "new", "missing", "info", "other-host", "other-clock",
        "other-kernel", "other-settings"}
    assert all(isinstance(v, vd.Verdict) for v in (
        decide("jitter.min_us", Figures([1.0]), Figures([1.0]), ARM),
        decide("memory.free_total_kb", Figures([1.0]), Figures([1.0]), ARM)))
