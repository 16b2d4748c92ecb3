"""The suites' kernel build beside the board (`pytest --build-alongside`, the main job's
way): the clean build of each kernels/<kernel>/<board>.config runs in a process of its own
while the board's suites measure, so a run takes the longer of the two, not their sum.
The build runs at the lowest CPU priority (nice 19, and the SCHED_IDLE policy, so a
waking QEMU thread takes its core at once) and off the host's first core, which the
board's QEMU keeps to itself while the suites run (build_cores; every core once they wait
for it): a compiler on QEMU's core, even one QEMU preempts, stretched the board's guest
work 1.24 x (docs/setup.md, "The build off QEMU's core"), so the suites are stretched
little by it.

The board's figures on the guest-deterministic clock do not depend on the host's load.
Figures on the host clock do, so they say what shared the host (their settings): the
build's real, user and sys times were taken beside the board's suites, the board's
host-clock boot times beside the build. A baseline taken alone does not judge them
(other-settings), nor they it."""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

from boardlab import procs
from boardlab.kernelbuilds import kbuild
from boardlab.facts.board import KERNELS_DIR, Board
from boardlab.log import progress

BESIDE_BUILD = {"host_shared_with": "kernel build"}       # the board's host-clock figures
BESIDE_SUITES = {"host_shared_with": "board suites"}      # the build's times
PR_SET_PDEATHSIG = 1   # prctl(2)


def configs_of(board_name: str, root: Path = KERNELS_DIR) -> list[Path]:
    """The kernel configs the build suite builds for a board."""
    return sorted(root.glob(f"*/{board_name}.config"))


def not_buildable(board: Board) -> str | None:
    """Why the build suite builds nothing for this board (it skips, saying so), or None."""
    if not configs_of(board.name):
        return f"no kernel config for board {board.name} under kernels/"
    if board.arch not in kbuild.ARCH:
        return f"no cross compiler set up for arch {board.arch}"
    return None


def build_all(board: Board, configs: list[Path]) -> dict[str, kbuild.BuildResult]:
    """The build suite's builds: {kernel: BuildResult}, one clean build a config."""
    return {cfg.parent.name: kbuild.build(board, cfg.parent.name, cfg) for cfg in configs}


def _end_with_parent(parent: int) -> None:
    """The build's process group ends when the session's process does, killed outright
    too (subprocess.run answers an interrupt with SIGKILL, which leaves no stop() to run):
    the kernel sends SIGTERM when the parent dies, and the group, make and compilers, goes."""
    def end(*_):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.killpg(0, signal.SIGTERM)
    signal.signal(signal.SIGTERM, end)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:   # it died before that
        end()


def build_cores(allowed: set[int]) -> set[int]:
    """The cores the build may use: all but the lowest, which the board's QEMU keeps (the
    scheduler puts it where the build is not); all of them on a one-core host."""
    return set(sorted(allowed)[1:]) or set(allowed)


def _build(send, placed, board: Board, configs: list[Path], log: Path, parent: int) -> None:
    """In the build's own process: its own process group (stopped as one, make and
    compilers too, also when the session dies), its progress in log, the results or the
    error sent back."""
    os.setpgrp()
    _end_with_parent(parent)
    os.nice(19)   # the board's suites first (their compilers inherit both)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))   # preempted by any waking task
    os.sched_setaffinity(0, build_cores(os.sched_getaffinity(0)))   # its compilers inherit it
    placed.set()   # widen() after this, or this would undo it
    t0 = time.monotonic()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        send.send(("built", build_all(board, configs), round(time.monotonic() - t0, 1)))
    except Exception as e:   # said in the parent as the error it is
        send.send(("failed", f"{type(e).__name__}: {e}", None))
    sys.stdout.flush()


class BuildAlongside:
    """The build, started now; result() waits for it, on every core (nothing of the
    board's runs beside it by then). seconds: how long it took (the build process's own
    host clock, from its start to its last uImage), once known."""

    def __init__(self, board: Board, configs: list[Path], log: Path):
        ctx = multiprocessing.get_context("spawn")   # not a fork of a process with threads
        self._recv, send = ctx.Pipe(duplex=False)
        self.log, self.seconds, self._placed = log, None, ctx.Event()
        self._proc = ctx.Process(target=_build, args=(send, self._placed, board, configs, log, os.getpid()),
                                 name="kernel-build")
        self._proc.start()
        send.close()
        progress(f"building {', '.join(c.parent.name for c in configs)} for {board.name} beside the "
                 f"board's suites (pid {self._proc.pid}, log {log})")

    def result(self) -> dict[str, kbuild.BuildResult]:
        """{kernel: BuildResult}; KernelBuildError when the build failed or died."""
        self.widen()
        try:
            what, got, self.seconds = self._recv.recv()
        except EOFError:
            what, got = "failed", None
        self._proc.join()
        if what != "built":
            raise kbuild.KernelBuildError(
                f"the kernel build beside the suites: {got or f'ended without a result (exit {self._proc.exitcode})'}"
                f" (log {self.log})")
        return got

    def running(self) -> bool:
        return self._proc.is_alive()

    def widen(self) -> None:
        """The build on every core this process may use."""
        self.place(os.sched_getaffinity(0))

    def place(self, cores: set[int]) -> None:
        """The build on `cores`: make, its sub-makes and the compilers running now (its
        process group; new compilers inherit make's), once the build has placed itself
        off the first core (or that would undo this)."""
        while self._proc.is_alive() and not self._placed.wait(timeout=1):
            pass
        for pid in procs.group_members(self._proc.pid):
            try:
                os.sched_setaffinity(pid, cores)
            except (ProcessLookupError, PermissionError):
                pass   # a compiler that just ended

    def stop(self) -> None:
        """Stopped with its make and compilers if still running (a session that ends early)."""
        if self._proc.is_alive():
            try:
                os.killpg(self._proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        self._proc.join(timeout=30)
