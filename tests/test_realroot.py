"""The NFS root a real board needs (`boardlab images root`): built from Debian's sources
and the project's, it runs on the board's CPU (QEMU's user mode with that CPU), and its
size is said against the board's RAM. A CPU without FPU (the TQM860L's MPC860T, whose
kernel has no FPU emulation) gets a root against a soft-float C library built here, and
not one floating-point instruction in any of its binaries."""
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


def test_the_tqm860l_root_holds_no_fp_instruction_runs_on_an_mpc860_and_fits_its_16_mb(tmp_path, capsys):
    assert boardlab_main(["images", "root", "--board", "tqm860l", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    root = tmp_path / "root-tqm860l"
    assert "tqm860l: root " in out and "% of its 16 MB of RAM" in out
    print(out.strip().splitlines()[-1])
    assert realroot.tree_bytes(root) < 4 * 1024 * 1024
    assert realroot.fp_binaries(root, "mpc8xx") == []
    elves = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF"]
    assert {"busybox", "mem_eat", ownprograms.BINARY} <= {p.name for p in elves}
    qemu = ownprograms.CPUS["mpc8xx"].qemu_user      # an FP instruction there is SIGILL
    r = subprocess.run([*qemu, str(root / "bin/busybox"), "sh", "-c", "echo $((6 * 7)); sleep 0.1; printf '%s\\n' ok"],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["42", "ok"], (r.returncode, r.stderr)
    r = subprocess.run([*qemu, str(root / "usr/bin/mem_eat"), "0"], capture_output=True, text=True, timeout=60)
    assert "usage: mem_eat" in r.stderr and r.returncode > 0, (r.returncode, r.stderr)   # stdio ran, no signal


def test_the_mpc860_under_qemu_traps_an_fp_instruction(tmp_path):
    """What makes the run above a proof: QEMU's MPC860 kills a program built for the
    hard-float ABI (Debian's cross gcc and C library) with SIGILL."""
    src = tmp_path / "fp.c"
    src.write_text('#include <stdio.h>\n#include <stdlib.h>\n'
                   'int main(int c, char **v) { printf("%f\\n", atof(v[1]) * 2.5); return 0; }\n')
    subprocess.run(["powerpc-linux-gnu-gcc", "-static", "-O2", "-o", str(tmp_path / "fp"), str(src)], check=True)
    qemu = ownprograms.CPUS["mpc8xx"].qemu_user
    assert subprocess.run(["qemu-ppc", "-cpu", "603e", str(tmp_path / "fp"), "2"], capture_output=True,
                          text=True, timeout=60).stdout.strip() == "5.000000"
    r = subprocess.run([*qemu, str(tmp_path / "fp"), "2"], capture_output=True, timeout=60)
    assert r.returncode == -4 or r.returncode == 128 + 4, r   # SIGILL


def test_a_virtual_board_is_refused_in_one_line(tmp_path, capsys):
    assert boardlab_main(["images", "root", "--board", "qemu-ppc", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "boardlab vlab build --board qemu-ppc" in err and len(err.splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_the_programs_alone_for_the_tqm860l_are_said_against_its_16_mb(tmp_path, capsys):
    """For a board that keeps its own era's root: the project's programs, and their size against its RAM."""
    assert boardlab_main(["images", "programs", "--board", "tqm860l", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "blmeasure-mpc8xx.tar.gz" in out and "% of its 16 MB of RAM" in out
    assert realroot.refuse_why(load_board("sandpoint")) is None


@pytest.mark.parametrize("board", ["sandpoint", "tqm860l"])
def test_the_real_boards_name_cpus_the_programs_build_for(board):
    assert ownprograms.cpu(load_board(board).isa, board)
