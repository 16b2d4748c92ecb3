"""The kernel build beside the board's suites (pytest --build-alongside): its own process,
its error said as the build's, its host-clock figures and the board's tagged with what
shared the host, the guest figures untouched."""
import dataclasses
import os

import pytest

from boardlab import procs
from boardlab.kernelbuilds import alongside, kbuild
from boardlab.facts.board import load_board
from boardlab.judge.results import RunResults
from boardlab.measure import clocks


def test_a_build_that_fails_beside_the_suites_says_why_as_the_build(tmp_path):
    board = dataclasses.replace(load_board("qemu-arm"), arch="m68k")   # no cross compiler for it
    build = alongside.BuildAlongside(board, [tmp_path / "virt-nfs" / "qemu-arm.config"], tmp_path / "kb.log")
    with pytest.raises(kbuild.KernelBuildError, match=r"beside the suites: KernelBuildError: board qemu-arm: "
                                                      r"no cross compiler set up for arch m68k"):
        build.result()
    build.stop()   # ended already: nothing to stop


def test_the_configs_it_builds_are_the_build_suites():
    assert [c.parent.name for c in alongside.configs_of("qemu-arm")] == ["virt-nfs"]


def test_only_host_clock_figures_say_what_shared_the_host(tmp_path):
    res = RunResults(tmp_path, host={"id": "vm-test"})
    res.host_load = alongside.BESIDE_BUILD
    host = res.record("qemu-arm", "armmp", "boot_time", "shell", 8.5)
    guest = res.record("qemu-arm", "armmp", "jitter", "avg_us", 88.0, settings={"run_s": 60})
    size = res.record("qemu-arm", "virt-nfs", "build", "uimage_data_bytes", 1e6)
    res.host_load = alongside.BESIDE_SUITES
    real = res.record("qemu-arm", "virt-nfs", "build", "real_s", 430.0)
    assert host.clock == clocks.HOST and host.settings == alongside.BESIDE_BUILD
    assert guest.settings == {"run_s": 60} and size.settings is None
    assert real.settings == {"host_shared_with": "board suites"}


def test_a_board_the_build_suite_cannot_build_for_is_said_why():
    board = load_board("qemu-arm")
    assert alongside.not_buildable(board) is None
    assert alongside.not_buildable(dataclasses.replace(board, arch="m68k")) == "no cross compiler set up for arch m68k"
    assert "no kernel config for board nosuch" in alongside.not_buildable(dataclasses.replace(board, name="nosuch"))


SESSION_KILLED_OUTRIGHT = """
import multiprocessing, os, subprocess, sys, time
from boardlab.kernelbuilds import alongside
def build(parent, out):   # as alongside._build starts: a group of its own, ended with its parent
    os.setpgrp()
    alongside._end_with_parent(parent)
    compiler = subprocess.Popen(["sleep", "300"])
    open(out, "w").write(str(compiler.pid))
    compiler.wait()
if __name__ == "__main__":
    multiprocessing.get_context("spawn").Process(target=build, args=(os.getpid(), sys.argv[1])).start()
    time.sleep(300)
"""


def test_the_build_ends_with_a_session_killed_outright(tmp_path):
    """SIGKILL (subprocess.run's answer to an interrupt) leaves the session no stop() to
    run: the build's process group, its make and compilers, ends with the session anyway."""
    import os
    import signal
    import subprocess
    import sys
    import time
    pid_file = tmp_path / "compiler.pid"
    script = tmp_path / "session.py"   # a file: spawn imports the child's function from it
    script.write_text(SESSION_KILLED_OUTRIGHT)
    session = subprocess.Popen([sys.executable, str(script), str(pid_file)])
    compiler = None
    try:
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text():
                compiler = int(pid_file.read_text())
                break
            time.sleep(0.1)
        assert compiler, "the build never started its compiler"
        session.kill()
        session.wait()
        for _ in range(50):
            if not os.path.exists(f"/proc/{compiler}") or " Z " in open(f"/proc/{compiler}/stat").read():
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the build's compiler outlived the session")
        compiler = None
    finally:
        session.kill()
        if compiler:
            os.kill(compiler, signal.SIGKILL)


def test_the_build_leaves_the_first_core_to_the_board():
    assert alongside.build_cores({0, 1}) == {1}
    assert alongside.build_cores({2, 3, 5}) == {3, 5}
    assert alongside.build_cores({0}) == {0}


def test_a_process_group_is_found_whole():
    assert os.getpid() in procs.group_members(os.getpgid(0))
    assert procs.group_members(2 ** 22 + 1) == []   # above pid_max: no such group


def test_a_build_waited_for_at_once_gets_every_core(tmp_path, monkeypatch):
    """result() right after the start (as a build alone is timed) widens after the build
    placed itself off the first core, not before, which would leave it there."""
    seen = []
    monkeypatch.setattr(procs, "group_members", lambda pgid: seen.append(build._placed.is_set()) or [])
    board = dataclasses.replace(load_board("qemu-arm"), arch="m68k")   # fails at once, after placing itself
    build = alongside.BuildAlongside(board, [tmp_path / "virt-nfs" / "qemu-arm.config"], tmp_path / "kb.log")
    with pytest.raises(kbuild.KernelBuildError):
        build.result()
    assert seen == [True]
