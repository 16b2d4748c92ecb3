"""The A/B runner: two kernels booted in turn on one board until every metric is decided (`boardlab compare`); the floor of the bisect and the sweep."""
