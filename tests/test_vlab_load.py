"""A board's load on the virtual board (boardlab vlab load): set at the power switch, met
by the strategy's boot as a real board's ageing is met, slower by its stated size where a
figure times a run of work whole, and gone at the next power-on after `none`."""
import pytest

from boardlab.facts.board import load_board
from boardlab.vlab.boardload import at_switch

pytestmark = pytest.mark.vlab

BOARD = load_board("qemu-arm")
# a run of work timed whole on the board's own clock (guest-deterministic): 20000 rounds
# of a shell loop, its start and end read from /proc/uptime (10 ms steps), and the board's
# forks meanwhile (/proc/stat's processes): builtins only, so every fork is the load's
FORKS = "while read -r k v _; do [ $k = processes ] && echo $v; done < /proc/stat"
TIMED = (f"f=$({FORKS}); read -r a _ < /proc/uptime; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; "
         f"read -r b _ < /proc/uptime; echo ${{a%.*}}${{a#*.}} ${{b%.*}}${{b#*.}} $f $({FORKS})")


def _timed_cs(sh) -> tuple[int, int]:
    """The loop's centiseconds, and the forks the board made meanwhile."""
    a, b, f0, f1 = map(int, sh.run_check(TIMED, timeout=120)[0].split())
    return b - a, f1 - f0 - 1   # less the second count's own subshell


def _boot(qemu):
    qemu.transition("off")
    qemu.transition("shell")
    return qemu.target.get_driver("ShellDriver")


def test_a_steady_load_slows_the_board_by_its_size(vlab, qemu):
    """One boot of its own: the well figure is read on whatever boot the board is at (the
    loop is the same work on any), the sick one after a power-on with the load. That none
    leaves QEMU's command line as it was is tests/test_board_load.py's."""
    qemu.transition("shell")
    sh = qemu.target.get_driver("ShellDriver")
    assert sh.run("ls /sys/firmware/devicetree/base/chosen/ | grep -c module")[0] == ["0"]
    well, _ = _timed_cs(sh)
    try:
        assert at_switch(BOARD, "steady:10") == "steady:10"
        sh = _boot(qemu)
        assert at_switch(BOARD) == "steady:10"   # what the running board has
        assert any("boardlab: load steady:10 seed" in ln for ln in sh.run_check("dmesg")), "the load did not start"
        sick, forks = _timed_cs(sh)
        # a fork costs the board milliseconds: the load makes none once it runs
        assert forks == 0, f"{forks} forks in {sick / 100:.1f} s of the load"
        # 10 ms of every 100 the load's: the loop takes 100/90 as long, and CFS shares the
        # CPU while both run (so a little less): between 5 and 20 % slower
        assert 1.05 * well <= sick <= 1.20 * well, (well, sick)
    finally:
        at_switch(BOARD, "none")
        qemu.transition("off")   # the next power-on is well again
    assert at_switch(BOARD) == "none"
