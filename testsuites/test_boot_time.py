"""Boot time, as the study measured it: from the start of loading the kernel (the
U-Boot load command) to `Linux version`, `Freeing unused kernel memory`, the login
prompt and the shell. Each timed by the arrival of the line's first character on the
host (clock: host); --boot-repeats boots at least, more (up to --max-repeats) while a
verdict is unknown; every boot's figure kept as a sample.

Where the kernel stamps its log (printk times), the same milestones are also taken in
the board's own time, `guest_*`: on a virtual board with the deterministic clock those
count instructions and do not depend on the host (boardlab.measure.clocks).

--phases: then one more boot with the kernel's phase log, its spans written beside the
results (boot-phases.md, boot-phases.json): where the boot time went."""
import pytest

from boardlab.measure.boardrun import MeasureError
from boardlab.measure.families import boot_time


def test_boot_milestones(board_strategy, gate, request, run_dir):
    def one_boot():
        try:
            return boot_time.milestones(board_strategy.reboot())
        except MeasureError as e:
            pytest.fail(str(e))
    gate.sample("boot_time", one_boot, at_least=request.config.getoption("--boot-repeats"))
    if request.config.getoption("--phases"):   # after the milestone boots, which stay without it
        from boardlab.judge.bootspans import write_boot
        from boardlab.measure.clocks import guest_clock
        board_strategy.select(phase_log=True)
        try:
            rec = board_strategy.reboot()
            write_boot(rec, run_dir, guest_clock(board_strategy.board, rec.qemu_clock))
        finally:
            board_strategy.select(phase_log=False)   # the next suite boots as the study did
    gate.check()
