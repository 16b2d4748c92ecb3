"""The tests' own set-up in steps (scripts/test.sh): a test that needs more than the main
job's packages waits for the rest of the set-up, and a failed or killed set-up ends the
session with its exit code and log, not with the tests' errors about missing programs."""
import subprocess

import pytest

from conftest import SETUP_DONE, rest_of_the_setup


class Writer:
    def __init__(self):
        self.lines = []

    def line(self, text):
        self.lines.append(text)


class Config:
    def __init__(self):
        self.stash, self.writer = {}, Writer()

    def get_terminal_writer(self):
        return self.writer


def pending(monkeypatch, tmp_path, pid, status=""):
    (tmp_path / "status").write_text(status)
    monkeypatch.setenv("BOARDLAB_SETUP_PENDING", f"{pid} {tmp_path / 'status'} {tmp_path / 'setup.log'}")


def test_a_set_up_that_ended_well_is_not_waited_for(monkeypatch, tmp_path):
    pending(monkeypatch, tmp_path, 1, "0\n")
    config = Config()
    rest_of_the_setup(config)
    assert config.stash[SETUP_DONE] and config.writer.lines == []


def test_the_first_test_that_needs_it_waits_for_the_set_up_to_end(monkeypatch, tmp_path):
    setup = subprocess.Popen(["sh", "-c", f"sleep 0.5; echo 0 > {tmp_path / 'status'}"])
    try:
        pending(monkeypatch, tmp_path, setup.pid)
        config = Config()
        rest_of_the_setup(config)
        assert (tmp_path / "status").read_text() == "0\n"
        assert config.writer.lines == [f"\n(waiting for the rest of the set-up, pid {setup.pid}, "
                                       f"log {tmp_path / 'setup.log'})"]
    finally:
        setup.wait()


def test_a_failed_set_up_ends_the_session_naming_its_exit_code_and_log(monkeypatch, tmp_path):
    pending(monkeypatch, tmp_path, 1, "100\n")
    with pytest.raises(pytest.exit.Exception, match=r"set-up failed \(exit 100; log .*setup.log\)") as end:
        rest_of_the_setup(Config())
    assert end.value.returncode == 3


def test_a_set_up_killed_before_its_exit_code_is_a_failure(monkeypatch, tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    pending(monkeypatch, tmp_path, gone.pid)
    with pytest.raises(pytest.exit.Exception, match="exit none: it was killed"):
        rest_of_the_setup(Config())


def test_without_a_set_up_in_steps_nothing_waits(monkeypatch):
    monkeypatch.delenv("BOARDLAB_SETUP_PENDING", raising=False)
    config = Config()
    rest_of_the_setup(config)
    assert config.stash == {}
