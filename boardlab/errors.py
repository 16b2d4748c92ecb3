"""The one base of boardlab's errors: a caller (the CLI, a test, a script of yours) can
catch every error that names its cause in boardlab's terms with one except clause.

And who is at fault, in four words, so that a lab that broke never reads as a kernel
that broke (a test's error, not its failure; a bisect that stops, not a bad revision):
each error class says its party, and the lab's its part; fault_of reads them."""
from dataclasses import dataclass

LAB = "lab"         # power, console, TFTP, NFS, the lab host, LAVA's infrastructure
KERNEL = "kernel"   # the kernel under test: a panic, a hang once it started, a regression
INPUT = "input"     # the user's input: exit 2, one line
BUG = "bug"         # boardlab itself: anything not said otherwise


# each party's words, what a person reads first (a report, a test's message)
WORDS = {LAB: "the lab broke", KERNEL: "your kernel broke", INPUT: "bad input", BUG: "a boardlab bug"}


@dataclass(frozen=True)
class Fault:
    party: str      # LAB, KERNEL, INPUT or BUG
    part: str       # the lab's part that broke (power, console, tftp, nfs, ...); "" if not the lab's
    line: str       # what happened, one line

    def words(self) -> str:
        """Who broke it, as a person reads it first: 'the lab broke: power', 'your kernel broke'."""
        if self.party == LAB:
            return f"{WORDS[LAB]}: {self.part or 'unknown part'}"
        return WORDS.get(self.party, WORDS[BUG])


class BoardlabError(Exception):
    """An error boardlab explains: its message names the file, field, board or service."""
    party = BUG     # a subclass that does not say is taken for boardlab's own
    part = ""


class InputError(BoardlabError):
    """Bad input or usage: a file, field, name or argument a command cannot take. The
    command line says it in one line and exits 2, before anything is written or any
    board is powered."""
    party = INPUT


def fault_of(exc: BaseException) -> Fault:
    """Who is at fault for an error: its class's party and part (BootError's from
    kernel_fault); any other exception is boardlab's bug."""
    party = getattr(exc, "party", BUG) if isinstance(exc, BoardlabError) else BUG
    part = getattr(exc, "part", "") if party == LAB else ""
    return Fault(party, part, one_line(exc))


def one_line(e: Exception) -> str:
    """An error of a library as one line: a YAML error's problem and where it is (PyYAML's
    own text takes four lines and shows the line it quotes), else its first line."""
    mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
    if mark is not None and problem:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
