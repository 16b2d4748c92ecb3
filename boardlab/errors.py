"""The one base of boardlab's errors: a caller (the CLI, a test, a script of yours) can
catch every error that names its cause in boardlab's terms with one except clause.

And who is at fault, so that a lab that broke never reads as a kernel that broke (a
test's error, not its failure; a bisect that stops, not a bad revision): every error
class derives from exactly one of five bases, LabFault (with the lab's part), KernelFault,
TestFault, InputError and Bug; fault_of asks which (isinstance)."""
from dataclasses import dataclass

LAB = "lab"         # power, console, TFTP, NFS, the lab host, LAVA's infrastructure
KERNEL = "kernel"   # the kernel under test: a panic, a hang once it started, a regression
TEST = "test"       # the test itself: its harness, or its program on the board printed no figure
INPUT = "input"     # the user's input: exit 2, one line
BUG = "bug"         # boardlab itself: anything not said otherwise


# each party's words, what a person reads first (a report, a test's message)
WORDS = {LAB: "the lab broke", KERNEL: "your kernel broke", TEST: "the test broke", INPUT: "bad input",
         BUG: "a boardlab bug"}


@dataclass(frozen=True)
class Fault:
    party: str      # LAB, KERNEL, TEST, INPUT or BUG
    part: str       # the lab's part that broke (power, console, tftp, nfs, ...); "" if not the lab's
    line: str       # what happened, one line

    def words(self) -> str:
        """Who broke it, as a person reads it first: 'the lab broke: power', 'your kernel broke'."""
        if self.party == LAB:
            return f"{WORDS[LAB]}: {self.part or 'unknown part'}"
        return WORDS.get(self.party, WORDS[BUG])


class BoardlabError(Exception):
    """An error boardlab explains: its message names the file, field, board or service.
    Raise one of the five below (a class that derives from none is taken for a bug)."""
    party = BUG
    part = ""


class LabFault(BoardlabError):
    """The lab broke: power, console, U-Boot before the load, TFTP, NFS, the lab host, a
    service, LAVA's infrastructure. `part` names which; no kernel is judged by it."""
    party = LAB


class KernelFault(BoardlabError):
    """The kernel under test: a panic, a hang once it started, a build that failed, a
    program that failed on it."""
    party = KERNEL


class TestFault(BoardlabError):
    """The test itself: its harness or its own program gave no figure. It judges no
    kernel: a bisect stops on it with its cause."""
    party = TEST


class InputError(BoardlabError):
    """Bad input or usage: a file, field, name or argument a command cannot take. The
    command line says it in one line and exits 2, before anything is written or any
    board is powered."""
    party = INPUT


class Bug(BoardlabError):
    """boardlab's own fault: a record or state that should not be."""
    party = BUG


KINDS = (LabFault, KernelFault, TestFault, InputError, Bug)   # exactly one of them per error class


def fault_of(exc: BaseException) -> Fault:
    """Who is at fault for an error: which of KINDS it is (the lab's with its part); any
    other exception is boardlab's bug."""
    kind = next((k for k in KINDS if isinstance(exc, k)), Bug)
    part = getattr(exc, "part", "") if kind is LabFault else ""
    return Fault(kind.party, part, one_line(exc))


def one_line(e: Exception) -> str:
    """An error of a library as one line: a YAML error's problem and where it is (PyYAML's
    own text takes four lines and shows the line it quotes), else its first line."""
    mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
