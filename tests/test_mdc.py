"""What a board can see: the smallest change each figure decides in a budget of boots
(judge.mdc), from the board's own stored spread."""
import random
import re

import pytest

from boardlab.cli import main as boardlab_main
from boardlab.facts.board import load_board
from boardlab.judge import mdc
from boardlab.judge.decide import Figures
from boardlab.measure import catalogue, clocks

PIPE = catalogue.spec("lmbench.lat_pipe_us")          # floor 3 %, exact where shown
CTX = catalogue.spec("lmbench.lat_ctx_0k_2p_us")      # the catalogue keeps it noisy


def _noisy(cv: float, n: int = 20, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [100 * (1 + rng.gauss(0, cv)) for _ in range(n)]


def test_an_exact_figure_decides_any_change_beyond_its_floor_in_one_boot():
    d = mdc.detectable(PIPE, Figures([132.79] * 5, clocks.GUEST_DETERMINISTIC), 5, load_board("qemu-arm"))
    assert (d.mdc_pct, d.budget) == (pytest.approx(3.0), 1) and d.how.startswith("exact")


def test_an_exact_figure_that_moves_a_little_sees_its_floor_and_its_range():
    """The exact rule wants every pair of samples beyond the floor: a figure whose samples
    spread over 0.02 % decides a change of the floor and that range, not the floor alone."""
    d = mdc.detectable(PIPE, Figures([132.79, 132.80, 132.8166], clocks.GUEST_DETERMINISTIC), 5, load_board("qemu-arm"))
    assert d.mdc_pct == pytest.approx(3.0 + 100 * 0.0266 / 132.80, rel=1e-3) and "range" in d.how


def test_a_noisier_board_sees_only_larger_changes_and_never_below_the_floor():
    quiet, loud = (mdc.detectable(CTX, Figures(_noisy(cv), clocks.GUEST_DETERMINISTIC), 10, load_board("qemu-arm"))
                   for cv in (0.005, 0.05))
    # a change of the floor itself is called in about half the draws (its interval must lie
    # wholly beyond the floor): a quiet board's next trial, 1.5 floors, is its MDC
    assert quiet.mdc_pct == pytest.approx(4.5)
    assert loud.mdc_pct is not None and loud.mdc_pct > 2 * quiet.mdc_pct
    assert "found in" in loud.how


def test_a_host_bound_figure_is_never_decided_against_a_stored_side():
    """The one judge's rule: a realtime or host-clock figure drifts between sessions, so no
    change is called against stored samples (compare, boots interleaved, can)."""
    d = mdc.detectable(CTX, Figures(_noisy(0.005), clocks.GUEST_REALTIME), 10, load_board("qemu-arm-noisy"))
    assert d.mdc_pct is None and d.how.startswith("bound to its host (guest-realtime clock)")


def test_too_few_stored_samples_are_said_not_hidden_behind_a_large_number():
    d = mdc.detectable(CTX, Figures(_noisy(0.01, n=3), clocks.GUEST_DETERMINISTIC), 5, load_board("qemu-arm"))
    assert d.mdc_pct is None and "the baseline needs more runs" in d.how
    assert "3 stored samples against 5 boots" in d.words()


def test_lab_status_for_a_board_prints_what_it_can_see(capsys):
    assert boardlab_main(["lab", "status", "--board", "qemu-arm", "--budget", "5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\| lmbench.lat_pipe_us \| 3 % \| 3\.\d+ % \| 1 \| exact", out), out


@pytest.mark.parametrize("argv, says", [
    (["lab", "status", "--board", "no-such-board"], "no-such-board.yaml: no such board"),
    (["lab", "status", "--board", "qemu-arm", "--budget", "0"], "--budget 0: boots, 1 or more")])
def test_bad_input_to_what_a_board_can_see_is_one_line(argv, says, capsys):
    assert boardlab_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_booted_in_turn_a_host_bound_figure_can_be_decided_and_compare_says_so_first():
    """compare boots both sides in turn: the host's drift hits both, so the judge decides
    a host-bound figure there; its line before the first boot says what the rounds can see."""
    quiet = Figures(_noisy(0.005), clocks.GUEST_REALTIME)
    assert mdc.detectable(CTX, quiet, 10, load_board("qemu-arm-noisy")).mdc_pct is None        # against stored
    assert mdc.detectable(CTX, quiet, 10, load_board("qemu-arm-noisy"), both=True).mdc_pct == pytest.approx(4.5)
    line = mdc.before_sampling(load_board("qemu-arm"), ["lmbench"], 5, both=True)
    assert line.startswith("on qemu-arm, 5 boots a side decide (the stored spread of armmp): ")
    assert re.search(r"lmbench.lat_pipe_us 3(\.\d+)? %", line) and "boot_time" not in line


def test_a_compare_narrowed_to_some_figures_states_only_theirs():
    """compare --families lmbench:lat_udp_us: the line before the first boot names the
    figures the rounds measure, not the whole family."""
    from boardlab.measure import sample
    line = mdc.before_sampling(load_board("qemu-arm"), sample.narrowed(["lmbench:lat_udp_us", "memory"]), 6,
                               both=True)
    named = re.findall(r"(\w+\.\w+) ", line.split(": ", 1)[1])
    assert "lmbench.lat_udp_us" in named and not [k for k in named if k.startswith("lmbench.") and k != "lmbench.lat_udp_us"]
    assert any(k.startswith("memory.") for k in named)
