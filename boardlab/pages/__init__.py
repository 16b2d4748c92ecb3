"""The pages: a run's report, plots, the compare page, the study table, where a run's time went."""
