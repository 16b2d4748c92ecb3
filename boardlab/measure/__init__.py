"""Measure: what a figure is (the metric catalogue, its clock), what runs on the board
to get it (workloads, the jitter load), and the pure parsers from console text to
figures (boot milestones, cyclictest, free, mem_eat; each family's own in its module)."""
