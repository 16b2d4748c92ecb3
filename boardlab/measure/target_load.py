"""The board-side shell files the pytest side shares with LAVA's test definitions, written
to the board over the console: jobs/testdefs/lib/load.sh (the load under which jitter is
measured), cycles.sh (the reduction of cyclictest's per-cycle lines), and a family's own
(its record's board_files: the runs of its groups). One definition each, for both
harnesses."""
import shlex

from boardlab.facts.board import PROJECT_ROOT
from boardlab.measure import workloads
from boardlab.measure.families.record import OWN, OWN_BIN

TESTDEFS = PROJECT_ROOT / "jobs" / "testdefs"
LIB = TESTDEFS / "lib"
# each shared file (under jobs/testdefs/lib, or jobs/testdefs/<path>) and where it is written
# on the board (another family's file: /tmp/boardlab-<its path>, on_board)
ON_BOARD = {"load.sh": "/tmp/boardlab-load.sh", "cycles.sh": "/tmp/boardlab-cycles.sh"}


def on_board(name: str) -> str:
    """Where the shared file `name` (as families.Family.board_files or ON_BOARD name it) is
    written on the board."""
    name = name.removeprefix("lib/")
    return ON_BOARD.get(name) or "/tmp/boardlab-" + name.replace("/", "-")
LINE_MAX = 800   # busybox's line editor takes 1024 characters a line, labgrid's markers with it


def install_commands(name: str = "load.sh") -> list[str]:
    """Shell lines that write the shared file `name` to the board, each short enough for the
    console (a heredoc does not survive labgrid's command markers; printf of quoted lines
    does): the first writes, the others append."""
    name = name.removeprefix("lib/")
    src, dest = (TESTDEFS / name if "/" in name else LIB / name), on_board(name)
    # without comments and indentation
    lines = [shlex.quote(ln.strip()) for ln in src.read_text().splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    out, chunk = [], []
    for ln in lines:
        if chunk and len(" ".join(chunk + [ln])) + 40 + len(dest) > LINE_MAX:
            out.append(chunk)
            chunk = []
        chunk.append(ln)
    out.append(chunk)
    return [f"printf '%s\\n' {' '.join(c)} {'>' if i == 0 else '>>'} {dest}"
            for i, c in enumerate(out)]


def install_command(name: str = "load.sh") -> str:
    """One shell line that writes the library file `name` to the board (those of the jitter
    suite fit in one)."""
    cmds = install_commands(name)
    if len(cmds) != 1:
        raise ValueError(f"{name} takes {len(cmds)} lines to write: install_commands")
    return cmds[0]


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


def set_statement(tools: str | None) -> str:
    """The statement that makes a subshell call the set's programs (families.run_prefix)."""
    return f"PATH={OWN_BIN}:$PATH; " if tools == OWN else ""


def sourced(files, command: str, tools: str | None = None) -> str:
    """command with the shared files (installed: install_commands) sourced first, in a
    subshell of its own, its errors with its output, with the programs of `tools`."""
    return f"({set_statement(tools)}" + "".join(f". {on_board(f)} && " for f in files) + f"{command}) 2>&1"


def with_tools(command: str, tools: str | None) -> str:
    """command run with the programs of `tools`, in a subshell where it needs one."""
    return f"({set_statement(tools)}{command})" if set_statement(tools) else command
