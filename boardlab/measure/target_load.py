"""The jitter suite's shell functions on the board: jobs/testdefs/lib/load.sh (the load)
and cycles.sh (the reduction of cyclictest's per-cycle lines), the files LAVA's jitter test
definition sources, written to the board for the pytest side too: one definition each."""
import shlex

from boardlab.facts.board import PROJECT_ROOT
from boardlab.measure import workloads

LIB = PROJECT_ROOT / "jobs" / "testdefs" / "lib"
# each library file and where it is written on the board
ON_BOARD = {"load.sh": "/tmp/boardlab-load.sh", "cycles.sh": "/tmp/boardlab-cycles.sh"}


def install_command(name: str = "load.sh") -> str:
    """One shell line that writes the library file `name` to the board (a heredoc does not
    survive labgrid's command markers; printf of quoted lines does)."""
    # without comments and indentation: busybox's line editor takes 1024 characters a line
    lines = [ln.strip() for ln in (LIB / name).read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    return "printf '%s\\n' " + " ".join(shlex.quote(ln) for ln in lines) + f" > {ON_BOARD[name]}"


def under_load(command: str) -> str:
    """command with the load running, started in the same line so the load's phase does
    not depend on when the host types; prints 'rc=N' (command's exit status) last."""
    return f". {ON_BOARD['load.sh']} && load_start; {command}; rc=$?; load_stop; echo rc=$rc"


def stop_load() -> str:
    return f". {ON_BOARD['load.sh']} && load_stop"


def cycles_reduction(path: str, slice_cycles: int = 0, lib: str | None = None) -> str:
    """The board's command that reduces a run's per-cycle file with cycles.sh (installed:
    install_command("cycles.sh"); lib: another copy of it, e.g. the tree's own)."""
    return (f". {lib or ON_BOARD['cycles.sh']} && cycles_reduce {path} "
            f"{workloads.CYCLICTEST_HISTOGRAM_US} {slice_cycles}")
