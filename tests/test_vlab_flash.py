"""A virtual board's own U-Boot flash: written from the package on first use, erased as a
NOR reads erased, flashed again; QEMU starts from the board's copy, never the package's."""
import dataclasses

from boardlab.facts.board import load_board
from boardlab.facts.labhosts import load_lab_host
from boardlab.vlab import flash
from boardlab.vlab.power import qemu_command


def test_a_board_boots_its_own_flash_which_can_be_erased_and_written_again(tmp_path):
    board = load_board("qemu-arm")
    lab = dataclasses.replace(load_lab_host(board.lab_host), run_dir=str(tmp_path))
    package = open(board.qemu.bios, "rb").read()
    cmd = qemu_command(board, lab, uart_fd=3)
    own = cmd[cmd.index("-bios") + 1]
    assert own == str(tmp_path / "flash" / "qemu-arm.bin") and open(own, "rb").read() == package
    flash.erase(board, lab)
    assert flash.is_erased(board, lab) and len(open(own, "rb").read()) == len(package)
    assert open(board.qemu.bios, "rb").read() == package   # the package's file untouched
    qemu_command(board, lab, uart_fd=3)                     # a power-on does not mend it
    assert flash.is_erased(board, lab)
    flash.write(board, lab)
    assert not flash.is_erased(board, lab) and open(own, "rb").read() == package
