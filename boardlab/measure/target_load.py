"""The jitter suite's load on the board: jobs/testdefs/lib/load.sh, the file LAVA's
jitter test definition sources, written to the board for the pytest side too."""
import shlex

from boardlab.facts.board import PROJECT_ROOT

LOAD_SH = PROJECT_ROOT / "jobs" / "testdefs" / "lib" / "load.sh"
ON_BOARD = "/tmp/boardlab-load.sh"


def install_command() -> str:
    """One shell line that writes load.sh to the board (a heredoc does not survive
    labgrid's command markers; printf of quoted lines does)."""
    # without comments and indentation: busybox's line editor takes 1024 characters a line
    lines = [ln.strip() for ln in LOAD_SH.read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    return "printf '%s\\n' " + " ".join(shlex.quote(ln) for ln in lines) + f" > {ON_BOARD}"


def under_load(command: str) -> str:
    """command with the load running, started in the same line so the load's phase does
    not depend on when the host types; prints 'rc=N' (command's exit status) last."""
    return f". {ON_BOARD} && load_start; {command}; rc=$?; load_stop; echo rc=$rc"
