"""The NFS root a real board needs (`boardlab images root`): built from Debian's sources
and the project's, it runs on the board's CPU (QEMU's user mode with that CPU), and its
size is said against the board's RAM; a board whose CPU cannot run it is refused in one line."""
import subprocess

import pytest

from boardlab.cli import main as boardlab_main
from boardlab.facts.board import load_board
from boardlab.images import ownprograms, realroot
from boardlab.measure import ownoutput


def test_the_sandpoint_root_runs_on_a_603e_and_says_its_size_against_its_ram(tmp_path, capsys):
    assert boardlab_main(["images", "root", "--board", "sandpoint", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    root = tmp_path / "root-sandpoint"
    assert (tmp_path / "root-sandpoint.tar.gz").is_file()
    assert "sandpoint: root " in out and "% of its 64 MB of RAM" in out
    size = realroot.tree_bytes(root)
    assert size < 8 * 1024 * 1024, size
    qemu = ownprograms.CPUS["603e"].qemu_user
    r = subprocess.run([*qemu, str(root / "bin/busybox"), "echo", "603e"], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "603e", r.stderr
    r = subprocess.run([*qemu, str(root / ownprograms.ON_BOARD_DIR / "lat_syscall"), "null"], capture_output=True,
                       text=True, timeout=120, env={"BL_ENOUGH_US": "2000", "BL_TRIES": "3"})
    assert ownoutput.figures("lat_syscall_null_us", r.stdout), r.stdout
    assert (root / "usr/bin/mem_eat").is_file() and (root / "etc/inittab").is_file()
    assert (root / realroot.ON_BOARD_TESTDEFS / "lib/load.sh").is_file()
    assert (root / "dev/console").is_char_device()


def test_a_board_without_an_fpu_or_a_virtual_one_is_refused_in_one_line(tmp_path, capsys):
    for board, says in (("tqm860l", "Debian has no soft-float 32-bit PowerPC C library"),
                        ("qemu-ppc", "boardlab vlab build --board qemu-ppc")):
        assert boardlab_main(["images", "root", "--board", board, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_what_the_tqm860l_can_have_is_said_against_its_16_mb(tmp_path, capsys):
    """Its root is its own era's; the project's programs for it, and their size against its RAM."""
    assert boardlab_main(["images", "programs", "--board", "tqm860l", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "blmeasure-mpc8xx.tar.gz" in out and "% of its 16 MB of RAM" in out
    assert realroot.refuse_why(load_board("sandpoint")) is None


@pytest.mark.parametrize("board", ["sandpoint", "tqm860l"])
def test_the_real_boards_name_cpus_the_programs_build_for(board):
    assert ownprograms.cpu(load_board(board).isa, board)
