"""bench/ci_time.py reads the kernel's process accounting of a CI run (`sa -a`, captured
from the fresh-host run of 2026-12-07 17:21) into what did the work, and the run's log
into its sessions."""
import sys

from paths import DATA, ROOT

sys.path.insert(0, str(ROOT / "bench"))
import ci_time  # noqa: E402


def test_a_fresh_hosts_run_is_its_compile_its_boards_its_python_and_apt():
    kinds, commands, total = ci_time.by_kind((DATA / "sa-ci-fresh-host.txt").read_text())
    assert round(total) == 1574                               # 26.23 CPU-minutes
    assert round(sum(kinds.values())) == round(sum(commands.values()))
    assert abs(sum(kinds.values()) - total) < 0.02 * total    # each line is rounded to 0.01 min
    assert round(kinds["compiling"]) == 467 and round(commands["cc1"]) == 449
    assert round(kinds["the boards' QEMUs"]) == 492           # qemu-system-arm 341, -ppc 151
    assert round(kinds["apt and dpkg"]) == 130
    assert kinds["the tests' Python"] > kinds["LAVA and labgrid"] > kinds["QEMU's user mode (programs for a board's CPU)"]


def test_a_command_is_counted_by_what_it_is():
    assert ci_time.kind_of("powerpc-linux-g") == "compiling"
    assert ci_time.kind_of("qemu-system-ppc") == "the boards' QEMUs"
    assert ci_time.kind_of("qemu-ppc*") == "QEMU's user mode (programs for a board's CPU)"
    assert ci_time.kind_of("dpkg-deb*") == "apt and dpkg"
    assert ci_time.kind_of("labgrid-client") == "LAVA and labgrid"
    assert ci_time.kind_of("chromium*") == "the rest"


def test_the_runs_log_gives_its_set_up_and_sessions():
    log = ("setup: [  12s] host ready\n"
           "set-up done 214 s after the start (17:24:50); the tests begin\n"
           "=============== 30 passed, 1086 deselected in 731.04s (0:12:11) ================\n"
           "=============== 1029 passed, 87 deselected in 546.79s (0:09:06) ===========\n")
    assert ci_time.sessions(log) == ["set-up done 214 s after the start (17:24:50); the tests begin",
                                     "30 passed, 1086 deselected: 731 s", "1029 passed, 87 deselected: 547 s"]
