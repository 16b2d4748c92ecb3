"""The study's boot milestones: the console's arrival at each on the host (from the load
command) and, where the kernel stamps its log, the board's own time from the kernel's
start. Floor 1 %: a sixth of the study's smallest boot difference; the guest-time
milestones vary by 0.006 % from boot to boot, host-arrival ones by ~8 % (those are
decided by a rank test, and only against the same host)."""
from __future__ import annotations

from boardlab.measure.boardrun import MeasureError
from boardlab.measure.console import MILESTONE_LABELS
from boardlab.measure.families.record import Family
from boardlab.measure.metric import GUEST, HOST, MetricSpec

NAME = "boot_time"
MILESTONES = ("linux_version", "freeing_init", "login", "shell")   # the study's, host arrival
GUEST_MILESTONES = ("freeing_init", "login")   # the kernel's printk time

METRICS = tuple(
    [MetricSpec(f"{NAME}.{n}", "s", "lower", HOST, 0.01, exact=False,
                what=f"{MILESTONE_LABELS[n]}, s from the load command (host arrival)") for n in MILESTONES]
    + [MetricSpec(f"{NAME}.guest_{n}", "s", "lower", GUEST, 0.01, lava=False,
                  what=f"{MILESTONE_LABELS[n]}, s from the kernel's start (the board's clock)")
       for n in GUEST_MILESTONES])


def milestones(rec) -> dict:
    """The boot's milestones: host arrival and the board's own time (where the kernel
    stamps its log: in every boot's log, or in none, as Linux 2.4 stamps nothing).
    Raises MeasureError naming the console log when a milestone was not reached."""
    missing = [m for m in MILESTONES if m not in rec.milestones]
    if missing:
        raise MeasureError(f"milestone {missing[0]} not reached; console log {rec.log_path}")
    out = {f"{NAME}.{m}": rec.milestones[m] for m in MILESTONES}
    out.update({f"{NAME}.guest_{k}": v for k, v in rec.guest_milestones.items()})
    return out


def measure(shell, rec, **_) -> dict:
    return milestones(rec)


FAMILY = Family(NAME, METRICS, HOST, order=10, listed=10, what="the study's boot milestones", one_boot=True,
                measure=measure, shown=f"{NAME}.guest_login")
