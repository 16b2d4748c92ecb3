"""Where a run's time went: the main job's steps and pytest's junit.xml, per suite."""
import subprocess
import sys

import pytest

from boardlab.errors import InputError
from boardlab.pages import timing


def test_steps_and_suites_make_one_table(tmp_path):
    suites = tmp_path / "testsuites"
    suites.mkdir()
    (suites / "test_alpha.py").write_text("import time\ndef test_a():\n    time.sleep(0.2)\n"
                                          "def test_b():\n    pass\n")
    (suites / "test_beta.py").write_text("def test_c():\n    pass\n")
    run = tmp_path / "run"
    run.mkdir()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suites),
                        "--junitxml", str(run / "junit.xml")], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    seconds = timing.suite_seconds(run / "junit.xml")   # pytest's own file, as the main job writes it
    assert list(seconds) == ["test_alpha", "test_beta"]
    assert seconds["test_alpha"] >= 0.2 > seconds["test_beta"]
    for name, s in (("set-up (apt, venv)", 3), ("lab up (services)", 5), ("suites", 1), ("report", 2)):
        timing.add_step(run, name, s)
    text = timing.table(run, host="host-x")
    assert "on host-x" in text and "| - test_alpha |" in text
    assert text.index("| suites |") < text.index("| - test_alpha |") < text.index("| report |")
    assert "| total | 11.0 |" in text


def test_a_run_without_steps_is_named(tmp_path):
    with pytest.raises(InputError, match="steps.tsv: no such file"):
        timing.read_steps(tmp_path)
