"""Boot time, as the study measured it: from the start of loading the kernel (the
U-Boot load command) to `Linux version`, `Freeing unused kernel memory`, the login
prompt and the shell. Each timed by the arrival of the line's first character;
repeated --boot-repeats times, the median gated, the spread kept."""
import statistics

import pytest

MILESTONES = ("linux_version", "freeing_init", "login", "shell")


def test_boot_milestones(board, gate, request):
    repeats = request.config.getoption("--boot-repeats")
    samples = {m: [] for m in MILESTONES}
    for _ in range(repeats):
        rec = board.reboot()
        for m in MILESTONES:
            if m not in rec.milestones:
                pytest.fail(f"milestone {m} not reached; console log {rec.log_path}")
            samples[m].append(rec.milestones[m])
    for m in MILESTONES:
        gate.record("boot_time", m, statistics.median(samples[m]), "s", "lower", samples[m])
    gate.check()
