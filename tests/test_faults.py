"""Faults and what they leave, as pure pieces: the era's panic wording, a hang judged
from the kernel's baseline, a power switch that never answers, one run per board, the
run directory checked before any boot. The same faults on boards: test_scripted_boards
(the old U-Boot and 2.4) and test_vlab_faults (the virtual board)."""
import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from boardlab.boot import bootplan, bootwatch, powerctl
from boardlab.sharing.boardlock import BoardBusy, BoardLock
from boardlab.boot.bootlog import BootError, KernelBootError, LabBootError
from boardlab.errors import BUG, INPUT, KERNEL, LAB, TEST, fault_of
from boardlab.facts.board import load_board
from boardlab.boot import milestonesdue
from boardlab.judge.results import RunDirError, prepare_run_dir
from boardlab.measure import console as con
from paths import ROOT


@pytest.mark.parametrize("line, quoted", [
    ("Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,255)",
     "VFS: Unable to mount root fs on unknown-block(0,255)"),                       # 2.6 and later
    ("Kernel panic: VFS: Unable to mount root fs on 02:00", "VFS: Unable to mount root fs on 02:00"),  # 2.4
])
def test_a_panic_of_either_era_is_recognised(line, quoted):
    m = re.search(bootplan.PANIC, line)
    assert m and m.group(0).endswith(quoted)


@pytest.mark.parametrize("line", [
    "loader: no modules for kernel 6.12.117 in the ramdisk",    # as a 6.12 kernel given as a file met it
    "loader: insmod virtio_net.ko failed",
    "loader: NFS mount of 192.168.10.1:/srv/boardlab/nfs/qemu-arm failed",
])
def test_the_nfs_loaders_own_failure_lines_are_recognised(line):
    m = re.search(bootplan.LOADER_FAILURE, "[    0.80] " + line + "\r\nloader: dropping to a shell")
    assert m and m.group(0) == line
    assert not re.search(bootplan.LOADER_FAILURE, "loader: mounting 192.168.10.1:/srv (nolock)")


def test_a_kernel_file_says_how_it_mounts_its_nfs_root(tmp_path):
    from boardlab.measure import kernelid
    board = load_board("qemu-arm")
    img = tmp_path / "uImage-6.12.117"
    img.write_bytes(b"x")
    assert bootplan.resolve_kernel(board, str(img)).nfs_loader        # unsaid: as the default kernel (armmp)
    kernelid.write_sidecar(img, {"release": "6.12.117"}, nfs_root="built-in")
    assert not bootplan.resolve_kernel(board, str(img)).nfs_loader


def test_old_uboots_tftp_error_names_file_and_server():
    out = "Loading: *\b\nTFTP error: 'File not found' (1)\nStarting again\n"
    why = bootplan.uboot_fault(out, bootplan.LOAD_FAULTS, "tqm860l/uImage-x", "192.168.20.1")
    assert why.startswith("tqm860l/uImage-x is not on the TFTP server 192.168.20.1")


PATTERNS = con.milestone_patterns("login: ", "# ")
EXPECTED = {"linux_version": 1.9, "freeing_init": 3.7, "login": 49.7}   # the study's 2.4.25


def test_a_silence_long_past_the_next_milestones_time_is_a_hang():
    reached = {"starting_kernel": 0.9}
    # Linux version is due at 1.9 s from the load (the baseline does not time Starting
    # kernel): overdue 3 x 1.9 + 5 = 10.7 s after Starting kernel, at 11.6 s, when quiet for 5 s
    assert bootwatch.overdue(EXPECTED, reached, PATTERNS, 11.5, 0.9, "Uncompressing") is None
    hang = bootwatch.overdue(EXPECTED, reached, PATTERNS, 11.7, 0.9, "Uncompressing")
    assert hang.milestone == "linux_version" and hang.silent_s == pytest.approx(10.8)
    assert "'Linux version' was due at 1.90 s by the baseline of kernel 2.4.25" in hang.reason("2.4.25")


def test_a_talking_board_or_a_slow_init_is_no_hang():
    reached = {"starting_kernel": 0.9, "linux_version": 1.9, "freeing_init": 3.7}
    # init scripts print for 50 s: login is due 46 s after Freeing init memory, overdue after 147 s
    assert bootwatch.overdue(EXPECTED, reached, PATTERNS, 60.0, 41.0, "Starting system logger") is None
    # output within the last 5 s: never a hang, however late
    assert bootwatch.overdue(EXPECTED, {}, PATTERNS, 500.0, 498.0, "x") is None
    # no baseline, no judgement (the boot timeout stays)
    assert bootwatch.overdue({}, {}, PATTERNS, 500.0, 0.0, "x") is None


def test_a_boot_slowed_by_its_host_is_held_to_its_own_pace():
    """qemu-arm's armmp on a CI host's first run (console log of 2026-11-28): `Linux
    version` at 10.34 s against its baseline's 2.88 s, then 5.2 s of host-time silence
    while the kernel unpacked its ramdisk (`Freeing unused kernel memory`, due at 4.72 s,
    came 15.4 s of guest time later). Not a hang at that pace; a board that stays quiet
    is one, and the reason says how slow the boot ran."""
    armmp = {"linux_version": 2.88225, "freeing_init": 4.719, "login": 5.08885}
    reached = {"starting_kernel": 9.6, "linux_version": 10.3424}
    assert bootwatch.pace(armmp, reached) == pytest.approx(3.588, abs=1e-3)
    assert bootwatch.overdue(armmp, reached, PATTERNS, 20.8, 15.58, "evm: HMAC attrs: 0x1") is None
    hang = bootwatch.overdue(armmp, reached, PATTERNS, 70.0, 15.58, "evm: HMAC attrs: 0x1")
    assert hang is not None and hang.milestone == "freeing_init"
    assert hang.reason("armmp").endswith("by the baseline of kernel armmp (this boot ran 3.6 x slower than it until then)")
    # at its baseline's pace, the same silence is a hang as before
    assert bootwatch.pace(armmp, {"linux_version": 2.9}) == pytest.approx(1.006, abs=1e-3)
    assert bootwatch.overdue(armmp, {"linux_version": 2.9}, PATTERNS, 20.8, 15.58, "evm") is not None
    # a slow load (TFTP at 2 MiB/s under load): Starting kernel at 7.84 s, then 6.1 s of
    # silence (6.5 s to Linux version in that run's other boots) is no hang: Linux version
    # is due 3 x 2.88 + 5 s after Starting kernel, at 21.5 s, not at 13.6 s from the load
    assert bootwatch.overdue(armmp, {"starting_kernel": 7.84}, PATTERNS, 13.94, 7.84, "Starting kernel ...") is None
    assert bootwatch.overdue(armmp, {"starting_kernel": 7.84}, PATTERNS, 21.6, 7.84, "Starting kernel ...") is not None
    # a milestone the baseline has early says nothing of pace: a slow TFTP load is no licence
    assert bootwatch.pace({"starting_kernel": 0.3, "linux_version": 2.88}, {"starting_kernel": 3.0}) == 1.0


def test_expected_times_come_from_the_kernels_baseline():
    assert milestonesdue.milestones_due("tqm860l", "2.4.25").times == EXPECTED
    assert not milestonesdue.milestones_due("no-such-board", "2.4.25")


def test_a_kernel_without_a_baseline_is_held_to_the_boards_slowest_kernel():
    """A new kernel on the TQM860L silent after U-Boot's hand-over: a hang once 'Linux
    version' is long overdue by the board's other kernels (2.6.11.7's 2.6 s at the
    latest), not after the whole 122 s boot timeout."""
    exp = milestonesdue.milestones_due("tqm860l", "my-6.1-uImage")
    six = milestonesdue.milestones_due("tqm860l", "2.6.11.7").times
    assert exp.times["linux_version"] == max(EXPECTED["linux_version"], six["linux_version"])
    hang = bootwatch.overdue(exp, {"starting_kernel": 0.9}, PATTERNS, 30.0, 0.9, "Uncompressing")
    assert hang is not None and hang.milestone == "linux_version"
    assert "the board's other kernels (2.4.25, 2.6.11.7; my-6.1-uImage has none" in hang.reason("my-6.1-uImage")


def test_a_tftp_kernel_that_is_the_boards_own_uimage_is_named_as_its_kernel():
    board = load_board("tqm860l")
    assert bootplan.resolve_kernel(board, "tftp:tqm860l/uImage-2.4.25").name == "2.4.25"
    assert bootplan.resolve_kernel(board, "tftp:tqm860l/mine").name == "tqm860l/mine"


def test_the_origin_is_when_uboot_has_the_whole_load_command():
    cmd = "tftpboot 200000 tqm860l/uImage-2.4.25"        # 37 characters and the line end
    assert con.line_time_s(cmd, 115200) == pytest.approx(0.0033, abs=1e-4)
    assert con.line_time_s(cmd, 9600) == pytest.approx(0.0396, abs=1e-4)


class _Switch:
    """A power driver that answers, fails, or hangs as labgrid's rest model does when a
    switch accepts the connection and never replies."""
    def __init__(self, mode):
        self.mode, self.calls = mode, []

    def on(self):
        self.calls.append("on")
        if self.mode == "hang":
            threading.Event().wait(30)
        if self.mode == "fail":
            raise ConnectionRefusedError(111, "Connection refused")

    off = on


@pytest.mark.parametrize("mode, says", [("hang", "did not answer within 1 s"),
                                        ("fail", "ConnectionRefusedError")])
def test_a_power_switch_that_fails_or_hangs_is_named_in_seconds(mode, says):
    board = load_board("qemu-arm")
    t0 = time.monotonic()
    with pytest.raises(powerctl.PowerError) as failed:
        powerctl.switch(_Switch(mode), True, board, timeout=1.0)
    assert time.monotonic() - t0 < 2.0
    assert says in str(failed.value) and "qemu-arm" in str(failed.value)
    if mode == "hang":   # the hung call may still reach the switch: nothing overtakes it
        with pytest.raises(powerctl.PowerError, match="not sent, the earlier 'power-on-qemu-arm'"):
            powerctl.switch(_Switch("ok"), False, board, timeout=0.2)
        powerctl._pending.clear()
    powerctl.switch(_Switch("ok"), False, board, timeout=1.0)


def test_a_power_failure_of_a_virtual_board_whose_lab_host_is_down_says_so(monkeypatch):
    """A labgrid user's own script meets the power switch first: with the lab host down
    the error says that, not only what answered off the machine."""
    from dataclasses import replace
    from boardlab.facts import labhosts
    board, real = load_board("qemu-arm"), labhosts.load_lab_host("vlab")
    monkeypatch.setattr(labhosts, "load_lab_host", lambda name: replace(real, netns="boardlab-no-such-ns"))
    with pytest.raises(powerctl.PowerError) as failed:
        powerctl.switch(_Switch("fail"), False, board, timeout=1.0)
    assert str(failed.value).endswith("ConnectionRefusedError: [Errno 111] Connection refused; "
                                      "its lab host vlab is down (boardlab vlab up)"), str(failed.value)
    monkeypatch.setattr(labhosts, "load_lab_host", lambda name: replace(real, kind="real"))
    assert powerctl.lab_host_down(board) is None


def test_a_late_power_on_never_lands_after_a_later_off():
    """'on' timed out but reaches the switch late; the 'off' that follows waits for it,
    so the board ends off."""
    board = load_board("qemu-ppc")
    order = []

    class Slow:
        def on(self):
            time.sleep(0.6)
            order.append("on")

        def off(self):
            order.append("off")
    with pytest.raises(powerctl.PowerError, match="did not answer"):
        powerctl.switch(Slow(), True, board, timeout=0.1)
    powerctl.switch(Slow(), False, board, timeout=2.0)
    assert order == ["on", "off"]


def test_the_lock_is_no_write_through_a_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "qemu-arm.lock").symlink_to(victim)
    with pytest.raises(BoardBusy, match="it is a symbolic link"):
        BoardLock("qemu-arm", locks).acquire()
    (locks / "qemu-arm.lock").unlink()
    os.link(victim, locks / "qemu-arm.lock")           # a hard link: not a plain lock file
    with pytest.raises(BoardBusy, match="not a plain file"):
        BoardLock("qemu-arm", locks).acquire()
    assert victim.read_text() == "precious\n"


def test_a_second_user_gets_a_message_not_a_traceback():
    """Root's run holds the board; user nobody's run is told who has it. Once free,
    nobody's run takes it through root's lock file."""
    import subprocess
    import tempfile
    from paths import ROOT
    locks = Path(tempfile.mkdtemp(prefix="boardlab-locks-"))
    os.chmod(locks, 0o1777)
    held = BoardLock("qemu-arm", locks)
    held.acquire()
    # nobody cannot read this checkout: the two modules the lock needs, copied for it
    pkg = Path(tempfile.mkdtemp(prefix="boardlab-pkg-"))
    (pkg / "boardlab" / "sharing").mkdir(parents=True)
    for name in ("__init__.py", "sharing/__init__.py", "sharing/boardlock.py", "errors.py"):
        shutil.copy(ROOT / "boardlab" / name, pkg / "boardlab" / name)
    os.chmod(pkg, 0o755)
    probe = ("import sys; sys.path.insert(0, %r)\n"
             "from boardlab.sharing.boardlock import BoardLock, BoardBusy\n"
             "try:\n    BoardLock('qemu-arm', __import__('pathlib').Path(%r)).acquire(); print('took it')\n"
             "except BoardBusy as e:\n    print(e)\n") % (str(pkg), str(locks))

    def as_nobody():
        return subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True,
                              user=65534, group=65534, cwd="/", timeout=30)
    try:
        busy = as_nobody()
        assert busy.returncode == 0 and "board qemu-arm is in use by pid" in busy.stdout, busy
        held.release()
        free = as_nobody()
        assert free.returncode == 0 and free.stdout.strip() == "took it", free
    finally:
        held.release()
        shutil.rmtree(locks, ignore_errors=True)
        shutil.rmtree(pkg, ignore_errors=True)


def test_one_run_per_board_and_the_holder_is_named(tmp_path):
    first, second = BoardLock("qemu-arm", tmp_path), BoardLock("qemu-arm", tmp_path)
    first.acquire()
    first.acquire()                        # idempotent
    with pytest.raises(BoardBusy, match=r"board qemu-arm is in use by pid \d+ .* since"):
        second.acquire()
    first.release()
    second.acquire()                       # free again
    assert BoardLock("tqm860l", tmp_path).acquire() is None   # another board: its own lock
    second.release()


def test_run_directories_are_new_and_checked_before_a_boot(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b = prepare_run_dir(), prepare_run_dir()
    assert a != b and (a / "console").is_dir() and (b / "console").is_dir()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(RunDirError, match="a-file/run: not writable"):
        prepare_run_dir(tmp_path / "a-file" / "run")


# ---- who is at fault ----------------------------------------------------------------------
def _errors():
    from boardlab.bisect import BisectLabFault, MetricMissing
    from boardlab.boot.bootlog import BootInputError, KernelBootError, LabBootError
    from boardlab.judge.gate import NoFigure
    from boardlab.measure.ownoutput import ProgramOutputError
    from boardlab.boot.staging import StagingError
    from boardlab.images.images import ForeignTreeError
    from boardlab.kernelbuilds.kbuild import KernelBuildError
    from boardlab.facts.typedyaml import FactsError
    from boardlab.lava.errors import LavaFault, LavaInputError
    from boardlab.measure.parsers import ParseError
    return [
        (powerctl.PowerError("the switch did not answer"), (LAB, "power")),
        (LabBootError("the console (ser2net vlab port 4001) failed", part="console"), (LAB, "console")),
        (StagingError("cannot stage uImage"), (LAB, "tftp")),
        (ForeignTreeError("the export holds files boardlab did not put there"), (LAB, "nfs")),
        (BoardBusy("held by another run"), (LAB, "board")),
        (LavaFault("the server did not answer"), (LAB, "lava")),
        (BisectLabFault("ser2net down"), (LAB, "")),
        (KernelBootError("kernel panic", part="nfs"), (KERNEL, "")),
        (KernelBuildError("make failed"), (KERNEL, "")),
        (MetricMissing("no guest_login"), (KERNEL, "")),
        (BootInputError("no kernel named armmq"), (INPUT, "")),
        (FactsError("boards/x.yaml: no such field"), (INPUT, "")),
        (LavaInputError("no such device type"), (INPUT, "")),   # LavaError's below InputError's
        (NoFigure("jitter.max_us: the measurement gave nan"), (TEST, "")),
        (ProgramOutputError("lat_pipe printed no figure"), (TEST, "")),
        (ParseError("no figure"), (BUG, "")),
        (KeyError("board"), (BUG, "")),                         # anything unknown: ours
    ]


def test_each_error_says_who_is_at_fault_and_the_labs_part():
    for exc, (party, part) in _errors():
        fault = fault_of(exc)
        assert (fault.party, fault.part) == (party, part), exc
        assert fault.line == str(exc).splitlines()[0]
    assert fault_of(powerctl.PowerError("x")).words() == "the lab broke: power"
    assert fault_of(KernelBootError("panic")).words() == "your kernel broke"
    from boardlab.measure.ownoutput import ProgramOutputError
    assert fault_of(ProgramOutputError("x")).words() == "the test broke"


def test_every_error_is_of_exactly_one_kind():
    """Who is at fault is an error's type: each error class of boardlab derives from
    exactly one of the five kinds (a base kept for `except`, such as BootError, from none,
    and only its subclasses are raised)."""
    import importlib
    import inspect
    from boardlab import errors
    for path in (ROOT / "boardlab").rglob("*.py"):
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts)
                                         .removesuffix(".__init__"))
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, errors.BoardlabError) or cls.__module__ != module.__name__ \
                    or cls in errors.KINDS or cls is errors.BoardlabError:
                continue
            kinds = [k for k in errors.KINDS if issubclass(cls, k)]
            assert len(kinds) <= 1, f"{module.__name__}.{name}: {kinds}"
            if not cls.__subclasses__():
                assert kinds, f"{module.__name__}.{name} is of no kind (errors.KINDS)"


FAULT_SUITE = '''
import pytest
from boardlab.boot.bootlog import KernelBootError, LabBootError
from boardlab.boot.powerctl import PowerError
from boardlab.boot.staging import StagingError
from boardlab.images.images import ForeignTreeError

@pytest.fixture
def shell():
    {fixture}

def test_boot_milestones(shell):
    {body}
'''


@pytest.mark.parametrize("part, fixture, body, outcome", [
    ("power", "pass", "raise PowerError('the switch (vlab port 1) did not answer within 1 s')", "error"),
    ("console", "pass", "raise LabBootError('the console (ser2net vlab port 4001) failed', part='console')",
     "error"),
    ("tftp", "pass", "raise StagingError('cannot copy uImage into /srv/tftp')", "error"),
    ("nfs", "pass", "raise ForeignTreeError('/srv/nfs/qemu-arm holds files boardlab did not put there')",
     "error"),
    ("power", "raise PowerError('the switch did not answer')", "pass", "error"),   # in set-up
    ("kernel", "pass", "raise KernelBootError('kernel panic: VFS')", "fail"),
])
def test_a_lab_fault_is_a_tests_error_naming_the_part_the_kernels_a_failure(tmp_path, part, fixture,
                                                                            body, outcome):
    from boardlab.judge import outcomes
    (tmp_path / "test_suite.py").write_text(FAULT_SUITE.format(fixture=fixture, body=body))
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={tmp_path / 'junit.xml'}", "test_suite.py"], cwd=tmp_path,
                   capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    [(result, why)] = outcomes.junit(tmp_path / "junit.xml").values()
    assert result == outcome
    assert ("your kernel broke" if part == "kernel" else f"the lab broke: {part}: ") in why


def test_results_say_a_lab_fault_as_an_error_naming_its_part(tmp_path):
    from boardlab.judge import outcomes
    from boardlab.judge.results import RunResults
    res = RunResults(tmp_path)
    with pytest.raises(powerctl.PowerError), outcomes.boot_recorded(res, "qemu-arm", "armmp"):
        raise powerctl.PowerError("the switch did not answer")
    said = res.meta["outcomes"]["qemu-arm/armmp"]
    assert said[outcomes.BOOT] == "error" and said["why"][outcomes.BOOT] == \
        "the lab broke: power: the switch did not answer"
    with pytest.raises(BootError), outcomes.boot_recorded(res, "qemu-arm", "armmp"):
        raise KernelBootError("kernel panic: VFS")
    assert said[outcomes.BOOT] == "fail" and said["why"][outcomes.BOOT] == "kernel panic: VFS"


@pytest.mark.parametrize("error_type, milestones, party, part", [
    ("Infrastructure", {"linux_version": 1.0}, LAB, "lava"),   # whatever the kernel printed
    ("Configuration", {}, LAB, "lava"),
    ("Bug", {}, LAB, "lava"),                                  # LAVA's own bug: the lab's software
    ("Job", {"linux_version": 1.0}, KERNEL, ""),               # auto-login-action timed out
    ("Test", {}, LAB, "uboot"),                                # nothing from the kernel
    ("Job", {"linux_version": 1.0, "login": 3.0}, LAB, "lava"),  # its prompt, unanswered
])
def test_lavas_error_types_say_who_is_at_fault(error_type, milestones, party, part):
    from boardlab.lava.logs import lava_fault
    fault = lava_fault(error_type, milestones, "auto-login-action timed out")
    assert (fault.party, fault.part) == (party, part)


@pytest.mark.parametrize("failed_boot", ["bad", "skip"])
def test_a_bisect_step_answers_only_for_the_kernels_own_fault(failed_boot):
    from types import SimpleNamespace
    from boardlab.bisect import ANSWER, step
    from boardlab.kernelbuilds.kbuild import KernelBuildError
    from boardlab.measure.parsers import ParseError
    from boardlab.measure.sample import MeasureError
    b = SimpleNamespace(failed_boot=failed_boot)
    said = lambda e: (ANSWER[step.unmeasured(b, e)[0]], step.unmeasured(b, e)[1])  # noqa: E731
    assert said(KernelBootError("kernel panic: VFS")) == (failed_boot, "boot failed: kernel panic: VFS")
    assert said(KernelBuildError("make failed")) == ("skip", "build failed: make failed")
    assert said(MeasureError("no figure of lat_syscall")) == ("skip", "no figure of lat_syscall")
    assert said(powerctl.PowerError("no answer")) == ("stop", "lab fault: power: no answer")
    assert said(ParseError("no figure")) == ("stop", "a boardlab bug: ParseError: no figure")
    from boardlab.judge.gate import NoFigure   # the test's own fault: the bisect stops, saying so
    assert said(NoFigure("jitter.max_us: the measurement gave nan")) == \
        ("stop", "the test broke: NoFigure: jitter.max_us: the measurement gave nan")


def test_the_report_says_the_lab_broke_and_which_part_or_that_the_kernel_did(tmp_path):
    from boardlab.judge import outcomes
    from boardlab.judge.results import RunResults
    from boardlab.pages import report
    lab, kernel = RunResults(tmp_path / "lab"), RunResults(tmp_path / "kernel")
    for res, fault in ((lab, powerctl.PowerError("the switch did not answer")),
                       (kernel, KernelBootError("kernel panic: VFS"))):
        res.record("qemu-arm", "armmp", "boot_time", "login", 4.9)
        with pytest.raises(type(fault)), outcomes.boot_recorded(res, "qemu-arm", "armmp"):
            raise fault
    assert report.who_broke(str(lab.run_dir)) == [
        "the lab broke: power: the switch did not answer (qemu-arm armmp, kernel/boot)"]
    assert "your kernel broke: kernel panic: VFS (qemu-arm armmp, kernel/boot)" in \
        report.markdown(str(kernel.run_dir), with_summary=True)
    assert report.who_broke(str(kernel.run_dir)) == report.run_ending(kernel.run_dir)[1:]


@pytest.mark.parametrize("fault, result, raised", [
    (KernelBootError("kernel panic: VFS"), "fail", False),
    (LabBootError("the console (ser2net vlab port 4001) failed", part="console"), "error", True),
])
def test_a_nightly_says_whose_failed_boot_it_was(tmp_path, monkeypatch, fault, result, raised):
    import contextlib
    from types import SimpleNamespace
    from boardlab.bisect import nightly
    from boardlab.boot import session
    from boardlab.judge.results import RunResults
    from boardlab.vlab import host

    @contextlib.contextmanager
    def board_session(env, console, **_):
        yield SimpleNamespace(select=lambda **kw: None), None

    def one_sample(*a):
        raise fault
    monkeypatch.setattr(session, "board_session", board_session)
    monkeypatch.setattr(host, "virtual_host_of", lambda board: None)
    monkeypatch.setattr(nightly.sample, "one_sample", one_sample)
    res = RunResults(tmp_path)
    with pytest.raises(BootError) if raised else contextlib.nullcontext():
        nightly._measure(res, load_board("qemu-arm"), "abc", tmp_path / "u", ("boot_time",), 1, "", {})
    said = res.meta["outcomes"]["qemu-arm/abc"]
    assert said["kernel/boot"] == result
    assert said["why"]["kernel/boot"].startswith("the lab broke: console: " if raised else "kernel panic")


def test_a_program_the_root_lacks_is_the_lab_s_image_not_the_kernel(monkeypatch):
    """'hackbench: not found' on a board is no kernel's fault: a bisect stops on it (a lab
    fault) instead of skipping the revision; a program that ran and failed is the kernel's."""
    from boardlab.errors import fault_of
    from boardlab.measure import boardrun, sample

    class Shell:
        def __init__(self, out, rc):
            self.out, self.rc = out, rc

        def run_check(self, cmd):
            return []

        def run(self, cmd, timeout=None):
            return self.out, [], self.rc
    with pytest.raises(boardrun.ProgramMissing) as e:
        sample.by_script("hackbench", Shell(["sh: hackbench: not found"], 127))
    assert (fault_of(e.value).party, fault_of(e.value).part) == ("lab", "image")
    with pytest.raises(sample.MeasureError) as e:
        sample.by_script("hackbench", Shell(["Segmentation fault"], 139))
    assert not isinstance(e.value, boardrun.ProgramMissing) and fault_of(e.value).party == "kernel"


def test_a_session_that_found_its_board_busy_leaves_the_board_alone(tmp_path, monkeypatch):
    """Another run holds qemu-arm: this session's first transition says so, once, and its
    clean-up neither powers the board off (it is the other run's) nor says it twice."""
    from boardlab.boot import session
    monkeypatch.setenv("BOARDLAB_LOCK_DIR", str(tmp_path))
    monkeypatch.setattr(session, "place_held", lambda board, command: contextlib.nullcontext())
    other = BoardLock("qemu-arm", tmp_path)
    other.acquire()
    powered = []
    try:
        with pytest.raises(BoardBusy, match="in use by pid") as busy:
            with session.board_session(ROOT / "lab/qemu-arm.yaml", tmp_path) as (strategy, _):
                monkeypatch.setattr(strategy, "_go", lambda status, step: powered.append(status))
                strategy.transition("shell")
        chain, e = [], busy.value.__context__
        while e is not None:
            chain.append(type(e).__name__)
            e = e.__context__
        assert "BoardBusy" not in chain and powered == []
        assert other.held and "pid" in other.holder()
    finally:
        other.release()
