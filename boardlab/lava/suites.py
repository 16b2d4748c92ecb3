"""What LAVA measures: the suites and their test definitions, and whose baselines judge it."""
from __future__ import annotations

from boardlab.measure import families

# a suite is one family of metrics (boardlab.measure.families), as testsuites/test_<family>.py
# is on the pytest side: suite -> its test definition (what the board runs); boot_time has
# none: it is timed from the log, on the host
SUITES = {f.name: f.testdef for f in families.FAMILIES if f.lava}
DEFAULT_SUITES = tuple(f.name for f in families.FAMILIES if f.lava and f.default)
# LAVA's own baselines where its figures differ (memory: its overlay is in the ramdisk)
HARNESS = "lava"
