"""What LAVA measures: the suites and their test definitions, and whose baselines judge it."""
from __future__ import annotations

# a suite is one family of metrics, by the catalogue's name (boardlab.measure.catalogue.
# FAMILIES), as testsuites/test_<family>.py is on the pytest side: suite -> its test
# definition (what the board runs); boot_time has none: it is timed from the log, on the host
SUITES = {
    "boot_time": None,
    "memory": "memory/memory.yaml",
    "lmbench": "lmbench/lmbench.yaml",
    "jitter": "jitter/jitter.yaml",
}
DEFAULT_SUITES = ("boot_time", "memory", "lmbench", "jitter")
# LAVA's own baselines where its figures differ (memory: its overlay is in the ramdisk)
HARNESS = "lava"
