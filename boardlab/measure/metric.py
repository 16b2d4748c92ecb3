"""A metric as the lab knows it: its suite and name, unit, which way is better, what it
is timed by, whether the deterministic clock makes it exact, and the smallest change worth
reporting (its floor). Each family's module declares its own (boardlab.measure.families);
the catalogue is their union."""
from __future__ import annotations

from dataclasses import dataclass

HOST, GUEST, NONE = "host", "guest", "none"   # timed by: boardlab.measure.clocks resolves 'guest'


@dataclass(frozen=True)
class MetricSpec:
    key: str                  # suite.name, as results.json and the baselines name it
    unit: str
    direction: str            # lower or higher is better
    timed_by: str             # host, guest (the board's clock), none (a size or amount)
    floor_rel: float          # the smallest change worth reporting, relative ...
    floor_abs: float = 0.0    # ... or absolute (in unit), whichever is larger
    exact: bool = True        # may repeat to well under the floor (on a deterministic clock);
    #                           whether a pair of figures is judged so, the samples must show
    #                           (boardlab.judge.decide.exactness)
    tail: bool = False        # a worst case: one run far beyond the baseline's worst is the answer
    lava: bool = True         # LAVA's test definitions (or its log) report it too
    what: str = ""
    not_judged: str = ""      # why the figure is information only (recorded, never judged)

    @property
    def suite(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    def floor(self, value: float) -> float:
        return max(self.floor_abs, self.floor_rel * abs(value))
