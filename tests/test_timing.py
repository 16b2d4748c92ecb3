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


def test_a_build_beside_the_suites_says_its_own_time(tmp_path):
    """--build-alongside: the build suite's junit time is the wait for it; the table says so
    with the build's own seconds."""
    (tmp_path / "junit.xml").write_text(
        '<testsuites><testsuite><testcase classname="testsuites.test_jitter" name="t" time="280.0"/>'
        '<testcase classname="testsuites.test_build" name="b" time="95.5"/></testsuite></testsuites>')
    (tmp_path / "results.json").write_text('{"meta": {"build_alongside_s": 441.2}, "metrics": []}')
    timing.add_step(tmp_path, "suites", 480)
    text = timing.table(tmp_path, host="host-x")
    assert "| - test_jitter | 280.0 |" in text
    assert "| - test_build: the build ran beside the suites above (441.2 s from the session's start); " \
           "waited for it, then its boot | 95.5 |" in text
