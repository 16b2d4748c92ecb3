"""When a silent console means a hung board, as pure code.

A boot is allowed its whole boot_s before the login prompt (an old board's init
scripts take 50 s), but a board that has gone quiet long after its next milestone was
due has hung. The strategy knows when each milestone is due (an Expected) from the
kernel's stored baseline on its own (boot.milestonesdue: the study's 1.9 s for 2.4.25's
`Linux version` on the TQM860L), so it gives up then, not at the timeout, and says which
milestone was due when. Without a baseline a hang is found at the boot timeout.

Each boot is held to its own pace: a loaded host runs an emulated board's whole boot
slower (seen on a CI host's first run: TFTP at 2 MiB/s, 6.5 s from `Starting kernel` to
`Linux version`, which came at 3.6 x its baseline's time, then 5 s of host-time silence
while the kernel unpacked its ramdisk). So the next milestone is due counted from the
last one reached, and the silence and the due time stretch by how much slower than its
baseline the boot has run so far. A real board keeps its baseline's pace."""
from __future__ import annotations

from dataclasses import dataclass, field
from boardlab.measure import console as con

SILENCE_S = 5.0        # a console quiet this long, past the due time, is a hang
DUE_FACTOR = 3.0       # the next milestone is overdue at 3 x the baseline's time from the last ...
DUE_MARGIN_S = 5.0     # ... plus this: host load and slower kernels stay well inside
PACE_FROM_S = 1.0      # a milestone the baseline has this early says little about pace


@dataclass(frozen=True)
class Hang:
    milestone: str          # the milestone that did not come
    expected_s: float       # when the baseline has it
    silent_s: float         # how long the console had been quiet
    last_line: str          # what it printed last
    basis: str = ""         # whose baseline said so
    pace: float = 1.0       # how much slower than the baseline the boot ran until then

    def reason(self, kernel: str) -> str:
        label = con.MILESTONE_LABELS.get(self.milestone, self.milestone)
        basis = self.basis or f"the baseline of kernel {kernel}"
        slower = f" (this boot ran {self.pace:.1f} x slower than it until then)" if self.pace > 1 else ""
        return (f"hang: the console has been silent for {self.silent_s:.1f} s after "
                f"{self.last_line!r}; {label!r} was due at {self.expected_s:.2f} s by {basis}{slower}")


@dataclass(frozen=True)
class Expected:
    """When each milestone comes (s from the load command) and by whose baseline."""
    times: dict = field(default_factory=dict)
    basis: str = ""

    def __bool__(self):
        return bool(self.times)

    def narrowed(self, other: "Expected") -> "Expected":
        """Each milestone at the earlier of the two times: a caller may narrow what the
        baselines say, never widen it."""
        if not other:
            return self
        if not self:
            return other
        times = dict(self.times)
        for name, t in other.times.items():
            times[name] = min(t, times.get(name, t))
        return Expected(times, f"{self.basis}, narrowed by {other.basis or 'the caller'}")


MILESTONES = [name for name, _ in con.KERNEL_MILESTONES] + ["login", "shell"]


def pace(expected: dict, reached: dict) -> float:
    """How much slower than its baseline a boot has run so far: the latest milestone
    reached that the baseline has at PACE_FROM_S or later, its time over the baseline's;
    at least 1 (a boot faster than its baseline is held to the baseline)."""
    timed = [(t, expected[name]) for name, t in reached.items() if expected.get(name, 0.0) >= PACE_FROM_S]
    if not timed:
        return 1.0
    t, base = max(timed)
    return max(1.0, t / base)


def overdue(expected, reached: dict, patterns, now_s: float, last_rx_s: float | None,
            last_line: str) -> Hang | None:
    """A Hang when the console has been quiet for SILENCE_S and the next milestone not
    reached is overdue: DUE_FACTOR x the baseline's time from the last milestone reached
    (from the load command when the baseline does not time that one) + DUE_MARGIN_S after
    it came, both stretched by the boot's pace; times in seconds from the load command.
    Counted from the last milestone, a slow load (TFTP under host load) is not held
    against the kernel. expected: an Expected, or a plain milestone -> seconds mapping."""
    basis = getattr(expected, "basis", "")
    expected = getattr(expected, "times", expected)
    slower = pace(expected, reached)
    silent = now_s - (last_rx_s if last_rx_s is not None else 0.0)
    if silent < SILENCE_S * slower:
        return None
    order = [name for name, _ in patterns]
    last = con.last_milestone(reached, patterns)
    pending = order[order.index(last) + 1:] if last else order
    since = reached[last] if last else 0.0
    for name in pending:
        if name in expected:
            gap = max(0.0, expected[name] - expected[last]) if last in expected else expected[name]
            if now_s > since + slower * (DUE_FACTOR * gap + DUE_MARGIN_S):
                return Hang(name, expected[name], silent, last_line, basis, slower)
            return None
    return None
