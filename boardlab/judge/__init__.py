"""Judge: figures against stored baselines. Baselines, verdicts from samples, the gate a
suite reports through, a run's results, comparisons of two kernels, reports and plots."""
