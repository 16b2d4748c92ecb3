"""The one judge (boardlab.judge.decide): every outcome of the one verdict type, each rule
in its order."""
import pytest

from boardlab.facts.board import load_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue

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
    assert v.outcome == vd.REGRESSED and v.method == "exact"   # a build's bytes: exact by what they are


def test_one_value_a_side_without_a_clock_is_exact_only_where_its_source_says():
    """[3072] against [3100] with no clock either side (an old or hand-made results.json)
    was 'regressed', exactly (issue 'Answers without holes'); the study's numbers and a
    health check's band say they are compared as values."""
    hand = decide("memory.free_free_kb", Figures([3072.0]), Figures([3100.0]), load_board("tqm860l"))
    assert hand.outcome == vd.UNKNOWN and not hand.exact, hand
    timed = decide("boot_time.guest_login", Figures([7.0]), Figures([9.0]), load_board("tqm860l"))
    assert timed.outcome == vd.UNKNOWN and "neither side says its clock" in timed.why, timed
    study = decide("boot_time.guest_login", Figures([7.0], stated=True), Figures([9.0]), load_board("tqm860l"))
    assert study.outcome == vd.REGRESSED and study.exact


def test_a_host_bound_change_against_another_session_is_drift_until_interleaved():
    a = Figures([7.00, 7.02, 7.01, 6.99, 7.00], "host", HERE)
    b = Figures([8.00, 8.02, 8.01, 7.99, 8.00], "host", HERE)
    stored = decide("boot_time.login", a, b, ARM)
    assert stored.outcome == vd.UNKNOWN and "drifts between sessions" in stored.why
    assert decide("boot_time.login", a, b, ARM, interleaved=True).outcome == vd.REGRESSED
    # the board's own clock does not drift with the host
    guest = decide("boot_time.guest_login", Figures([20.72] * 3, "guest-deterministic", "vm-a"),
                   Figures([22.0], "guest-deterministic", "vm-b"), ARM)
    assert guest.outcome == vd.REGRESSED


def test_a_worst_case_the_host_reaches_takes_two_runs_far_out():
    """jitter.max_us of the noisy board, judged paired (as compare does): its wake-ups are
    the host's too, and a host stall (53 ms once in 20 A/A boots, 2026-12-02) lands in
    one run of either side: one run of B past twice A's worst is not yet a regression, two
    are. On a real board, whose clock is its own, one run is the answer."""
    noisy, real = load_board("qemu-arm-noisy"), load_board("tqm860l")
    a = [3480.0, 3510.0, 3495.0, 3530.0, 3470.0, 3505.0, 3490.0, 3520.0, 3500.0, 3515.0]
    one = a[:9] + [35300.0]
    two = a[:8] + [35300.0, 41000.0]

    def judged(b, board, clock):
        return decide("jitter.max_us", Figures(a, clock, HERE), Figures(b, clock, HERE), board, interleaved=True)
    assert judged(one, noisy, "guest-realtime").outcome != vd.REGRESSED
    v = judged(two, noisy, "guest-realtime")
    assert v.outcome == vd.REGRESSED and "2 such runs are the answer" in v.why
    assert judged(one, real, "guest-realtime").outcome == vd.REGRESSED
    assert judged(one, ARM, "guest-deterministic").outcome == vd.REGRESSED


def test_figures_measured_otherwise_are_not_judged_where_both_say_how():
    ten, sixty = Figures([2100.0], settings={"run_s": 10}), Figures([2500.0], settings={"run_s": 60})
    v = decide("jitter.max_us", ten, sixty, ARM)
    assert v.outcome == vd.OTHER_SETTINGS and "run_s 10" in v.why and "run_s 60" in v.why
    assert decide("jitter.max_us", Figures([2100.0]), sixty, ARM).outcome != vd.OTHER_SETTINGS   # unsaid: judged


def test_the_harness_floor_is_the_judges_to_apply():
    a, b = Figures([88544.0] * 3, "none"), Figures([88400.0], "none")     # -144 kB
    assert decide("memory.free_total_kb", a, b, ARM).outcome == vd.REGRESSED
    assert decide("memory.free_total_kb", a, b, ARM, harness="lava").outcome == vd.SAME


def test_every_outcome_is_one_type():
    assert set(vd.OUTCOMES) | set(vd.NOT_COMPARED) == {
        "same", "regressed", "improved", "unknown", "new", "missing", "info", "other-host", "other-clock",
        "other-kernel", "other-settings"}
    assert all(isinstance(v, vd.Verdict) for v in (
        decide("jitter.min_us", Figures([1.0]), Figures([1.0]), ARM),
        decide("memory.free_total_kb", Figures([1.0]), Figures([1.0]), ARM)))


def test_exactness_is_shown_by_the_stored_samples_not_declared():
    """An exact metric is compared pair by pair only on a deterministic clock and where
    the stored side shows it repeats (3 samples within a quarter of the floor): one
    stored run, or a realtime board, or a real one, gets no verdict from one run."""
    pipe = "lmbench.lat_pipe_us"    # exact in the catalogue, floor 3 %
    one, three = Figures([300.0], "guest-deterministic"), Figures([300.0, 300.1, 299.9], "guest-deterministic")
    slower = Figures([330.0], "guest-deterministic")
    shown = decide(pipe, three, slower, ARM)
    assert (shown.outcome, shown.method, shown.exact) == (vd.REGRESSED, "exact", True)
    single = decide(pipe, one, slower, ARM)
    assert single.outcome == vd.UNKNOWN and not single.exact
    assert "the stored side has 1 sample(s)" in single.why
    wide = decide(pipe, Figures([300.0, 303.0, 297.0], "guest-deterministic"), slower, ARM)
    assert wide.outcome == vd.UNKNOWN and "spread over more than a quarter of the floor" in wide.why
    realtime = decide(pipe, Figures([300.0] * 3, "guest-realtime", "vm-a"),
                      Figures([330.0], "guest-realtime", "vm-a"), load_board("tqm860l"))
    assert realtime.outcome == vd.UNKNOWN and "the guest-realtime clock" in realtime.why
    # memory has no clock of its own: the board's clock decides (a real board's varies)
    mem = "memory.mem_eat_kb"
    real = decide(mem, Figures([9024.0] * 3, "none"), Figures([8500.0], "none"), load_board("tqm860l"))
    assert real.outcome == vd.UNKNOWN and "a board without a deterministic clock" in real.why
    assert decide(mem, Figures([9024.0] * 3, "none"), Figures([8500.0], "none"), ARM).outcome == vd.REGRESSED


def test_no_single_run_verdict_where_exactness_is_not_shown():
    """Every exact metric of the catalogue, one run a side, on a board or stored side that
    does not show exactness: never a verdict (same, regressed or improved)."""
    tqm = load_board("tqm860l")
    for key, spec in catalogue.METRICS.items():
        if not spec.exact or spec.not_judged or (spec.suite == "build" and spec.timed_by == catalogue.NONE):
            continue
        clock = "guest-deterministic" if spec.timed_by == catalogue.GUEST else (
            "none" if spec.timed_by == catalogue.NONE else "host")
        for a, board in ((Figures([100.0], clock, HERE), ARM), (Figures([100.0] * 3, "guest-realtime", HERE), tqm)):
            b = Figures([150.0], a.clock, HERE)
            assert decide(key, a, b, board, interleaved=True).outcome == vd.UNKNOWN, (key, a, board.name)


def test_the_noisy_board_never_gets_a_one_run_verdict():
    """qemu-arm-noisy (qemu-arm on the realtime clock, the real board's stand-in): every
    judged metric on the clock its facts give it, against a stored side of five samples
    that agree to the unit, one run of B: no verdict (same, regressed or improved), with or
    without a change, paired or not. The gate samples until decided (bench/noisy_board.py)."""
    from boardlab.measure.clocks import metric_clock
    noisy = load_board("qemu-arm-noisy")
    for key, spec in catalogue.METRICS.items():
        if spec.not_judged or spec.suite == "build":
            continue
        clock = metric_clock(spec.suite, spec.name, spec.unit, noisy)
        assert clock in ("host", "guest-realtime", "none"), key
        for b in (100.0, 150.0):
            for interleaved in (False, True):
                v = decide(key, Figures([100.0] * 5, clock, HERE), Figures([b], clock, HERE), noisy,
                           interleaved=interleaved)
                assert v.outcome == vd.UNKNOWN and not v.exact, (key, b, interleaved, v.why)


def test_figures_of_two_sets_of_programs_are_never_judged_against_each_other():
    """Debian's lmbench against the project's programs (target/measure/): other methods,
    other figures; a figure that says no set was measured with Debian's."""
    from boardlab.judge.decide import Figures, decide
    own = {"tools": "own"}
    for a, b in ((None, own), (own, None), ({"run_s": 10}, {"run_s": 10, "tools": "own"})):
        v = decide("lmbench.lat_pipe_us", Figures([14.0] * 3, "guest-deterministic", settings=a),
                   Figures([14.0] * 3, "guest-deterministic", settings=b), None)
        assert v.outcome == "other-settings" and "other programs, not judged" in v.why, (a, b, v)
    v = decide("lmbench.lat_pipe_us", Figures([14.0] * 3, "guest-deterministic", settings=own),
               Figures([14.0] * 3, "guest-deterministic", settings=own), None)
    assert v.outcome == "same", v


@pytest.mark.parametrize("a, b, side", [([float("nan")] * 3, [14.0] * 3, "the stored side (A) holds nan"),
                                        ([14.0] * 3, [14.0, float("inf"), 14.0], "the new side (B) holds inf"),
                                        ([14.0] * 3, [float("nan")], "the new side (B) holds nan")])
def test_the_judge_refuses_what_is_no_figure_in_one_line(a, b, side):
    """A NaN compares as nothing: judged, it read as 'same' (issue: answers without holes)."""
    from boardlab.judge.decide import Figures, NotAFigure, decide
    with pytest.raises(NotAFigure) as e:
        decide("lmbench.lat_pipe_us", Figures(a, "guest-deterministic"), Figures(b, "guest-deterministic"), None)
    assert str(e.value) == f"lmbench.lat_pipe_us: {side}: no figure to judge"


def test_python_m_boardlab_runs_the_command():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "boardlab", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "usage: boardlab" in r.stdout, r.stderr
