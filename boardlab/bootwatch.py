"""When a silent console means a hung board, as pure code.

A boot is allowed its whole boot_s before the login prompt (an old board's init
scripts take 50 s), but a board that has gone quiet long after its next milestone was
due has hung: the kernel baseline says when each milestone comes (the study's 1.9 s for
2.4.25's `Linux version` on the TQM860L), so the strategy gives up then, not at the
timeout, and says which milestone was due when."""
from __future__ import annotations

from dataclasses import dataclass

from . import baselines
from . import console as con

SILENCE_S = 5.0        # a console quiet this long, past the due time, is a hang
DUE_FACTOR = 3.0       # the next milestone is overdue at 3 x its baseline time ...
DUE_MARGIN_S = 5.0     # ... plus this: host load and slower kernels stay well inside


@dataclass(frozen=True)
class Hang:
    milestone: str          # the milestone that did not come
    expected_s: float       # when the baseline has it
    silent_s: float         # how long the console had been quiet
    last_line: str          # what it printed last

    def reason(self, kernel: str) -> str:
        label = con.MILESTONE_LABELS.get(self.milestone, self.milestone)
        return (f"hang: the console has been silent for {self.silent_s:.1f} s after "
                f"{self.last_line!r}; {label!r} was due at {self.expected_s:.2f} s by the "
                f"baseline of kernel {kernel}")


def expected_times(board: str, kernel: str) -> dict:
    """Milestone -> seconds from the load command, from the kernel's stored baselines
    (host-arrival boot_time.* figures); empty when the kernel has none."""
    try:
        stored = baselines.load(kernel, board)
    except baselines.BaselineError:
        return {}
    names = [name for name, _ in con.KERNEL_MILESTONES] + ["login", "shell"]
    return {n: stored[f"boot_time.{n}"].value for n in names if f"boot_time.{n}" in stored}


def overdue(expected: dict, reached: dict, patterns, now_s: float, last_rx_s: float | None,
            last_line: str) -> Hang | None:
    """A Hang when the console has been quiet for SILENCE_S and the next milestone not
    reached is overdue; times in seconds from the load command."""
    silent = now_s - (last_rx_s if last_rx_s is not None else 0.0)
    if silent < SILENCE_S:
        return None
    order = [name for name, _ in patterns]
    last = con.last_milestone(reached, patterns)
    pending = order[order.index(last) + 1:] if last else order
    for name in pending:
        if name in expected:
            if now_s > DUE_FACTOR * expected[name] + DUE_MARGIN_S:
                return Hang(name, expected[name], silent, last_line)
            return None
    return None
