"""Health checks: the rule (the boot and memory within their bands from the baselines),
LAVA's generated health-check jobs (the labgrid path's TFTP files and NFS root, one
attempt), the commands they type run as a board's shell runs them; the failed-job rule,
the recheck's schedule and `lava server up`'s health."""
import json
import math
import re
import subprocess

import pytest
import yaml

from boardlab import lava
from boardlab.boot.bootplan import plan_boot
from boardlab.facts.board import BOARDS_DIR, load_board
from boardlab.measure import baselines as bl
from boardlab.judge.health import GUEST_BOOT, HOST_BOOT, METRIC, health_check
from boardlab.lava import health
from paths import ROOT

CAPTURED = ROOT / "tests/data/captured"

BOARDS = sorted(p.stem for p in BOARDS_DIR.glob("*.yaml"))


def test_the_rule_is_the_stored_baselines_of_the_boot_and_memory():
    check = health_check(load_board("qemu-arm"))
    assert (check.kernel, check.root, check.nfs_boot) == ("armmp", "ramdisk", True)
    fig = check.figure(METRIC)
    assert fig.judge(fig.expected) is None and fig.judge(fig.hi) is None and fig.judge(fig.lo) is None
    why = fig.judge(fig.hi + 1, " (armmp on qemu-arm)")
    assert "memory.free_total_kb" in why and "armmp" in why and "qemu-arm" in why
    boot = check.figure(GUEST_BOOT)   # the board's own clock: exact, within its floor
    assert boot.exact and boot.judge(boot.expected * 1.005) is None and boot.judge(boot.expected * 1.02)


@pytest.mark.parametrize("name, kernel, login_hi", [("tqm860l", "2.6.11.7", 58.0 * 1.1),
                                                    ("sandpoint", "2.6.11.7", None)])
def test_the_real_boards_are_checked_against_their_stored_baselines(name, kernel, login_hi):
    """The study's boards boot their NFS root (their only one); their boot is the host's
    time, bounded from above by the slowest stored boot and a margin, their memory exact."""
    board = load_board(name)
    check = health_check(board)
    base = bl.load(kernel, name)
    assert (check.kernel, check.root, check.nfs_boot) == (kernel, "nfs", False)
    boot = check.figure(HOST_BOOT)
    assert not boot.exact and boot.hi == pytest.approx(max(base[HOST_BOOT].values()) * 1.1)
    assert login_hi is None or boot.hi == pytest.approx(login_hi)
    assert boot.judge(boot.hi) is None and boot.judge(boot.hi + 0.1)
    assert (check.figure(METRIC) is not None) == (METRIC in base)
    job = health.health_check_job(board)
    assert job["actions"][0]["boot"]["timeouts"]["auto-login-action"]["seconds"] == math.ceil(boot.hi)


def _job(name):
    return yaml.safe_load(health.health_check_path(load_board(name)).read_text())


@pytest.mark.parametrize("name", BOARDS)
def test_the_check_boots_the_labgrid_paths_staged_files_from_the_lab_hosts_tftp(name):
    """No LAVA deploy (it would copy the images into a TFTP directory of its own): U-Boot
    loads what the labgrid path stages in the board's TFTP directory, from its lab host."""
    board = load_board(name)
    job = _job(name)
    boots = [a["boot"] for a in job["actions"] if "boot" in a]
    assert boots and not any("deploy" in a for a in job["actions"])
    for boot, root in zip(boots, [board.root.default, "nfs"]):
        plan = plan_boot(board, board.images.default_kernel, root)
        assert boot["commands"] == health.uboot_commands(board, plan.kernel.spec, root)
        assert f"setenv serverip {board.network.server_ip}" in boot["commands"]
        assert [ln for ln in boot["commands"] if ln.startswith(board.uboot.load_command.split()[0])] == \
            [load.command for load in plan.loads]
        assert all(load.file.startswith(board.tftp.prefix) for load in plan.loads)
        assert {f for _, f in plan.stage} == {load.file for load in plan.loads}
        assert "failure_retry" not in boot   # one attempt: a flaky board is not Good
    if "nfs" in board.root.bootargs:   # its NFS root is booted, from its own export
        nfs = boots[-1]["commands"]
        assert any(f"nfsroot={board.network.server_ip}:{board.nfs.export}" in c for c in nfs)
    assert len(boots) == (2 if health_check(board).nfs_boot else 1)


@pytest.mark.parametrize("name", [b for b in BOARDS if b != "smdk24a0"])
def test_every_board_with_baselines_asserts_a_boot_figure(name):
    check = health_check(load_board(name))
    assert check.figure(GUEST_BOOT) or check.figure(HOST_BOOT)
    assert _job(name)["metadata"]["boardlab.health_check"] != "boot"


def test_every_device_type_has_its_generated_health_check_and_lava_takes_it(tmp_path):
    files = []
    for name in BOARDS:
        board = load_board(name)
        path = health.health_check_path(board)
        assert path.read_text() == health.generated_files()[path], f"{path}: stale: run boardlab gen"
        job = yaml.safe_load(path.read_text())
        assert job["actions"][0]["boot"]["method"] == "u-boot"
        assert job["metadata"]["boardlab.kernel"] == board.images.default_kernel
        files.append(("job", path))
    assert lava.validate(files) == {}


PIPELINE = """
import logging, sys, yaml
from lava_common.log import YAMLLogger
from lava_dispatcher.device import NewDevice
from lava_dispatcher.parser import JobParser
logging.setLoggerClass(YAMLLogger)
logger = logging.getLogger("boardlab-health-check")
job = JobParser().parse(open(sys.argv[2]).read(), NewDevice(yaml.safe_load(open(sys.argv[1]))), 1, logger, "")
job.logger = logger
job.validate()
print(" ".join(a.name for a in job.pipeline.actions))
"""


@pytest.mark.parametrize("name", BOARDS)
def test_lavas_dispatcher_builds_and_validates_each_check(tmp_path, name):
    """LAVA 2023.01's own job parser and pipeline validation, on the board's device."""
    from boardlab.lava.devices import render_device
    from boardlab.lava.files import SYSTEM_PYTHON
    r = subprocess.run([SYSTEM_PYTHON, "-c", "import lava_dispatcher"], capture_output=True)
    if r.returncode:
        pytest.skip("lava-dispatcher is not installed")
    board = load_board(name)
    (tmp_path / "device.yaml").write_text(render_device(board))
    r = subprocess.run([SYSTEM_PYTHON, "-c", PIPELINE, str(tmp_path / "device.yaml"),
                        str(health.health_check_path(board))], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    actions = r.stdout.split()
    assert actions[0] == "uboot-action" and actions[-1] == "finalize"


def run_command(tmp_path, command, total_kb=112196, login_s=20.722814):
    """A check's command in a shell with `free` and `dmesg` standing in (what a board
    gives) -> its answer line."""
    script = "\n".join([
        f"free() {{ echo '              total        used        free'; echo 'Mem:     {total_kb}  4000  100000'; }}",
        f"dmesg() {{ echo '[    0.000000] Booting Linux'; echo '<5>[   {login_s:.6f}] boardlab: login prompt'; }}",
        command])
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def _command(name, key):
    script = _job(name)["actions"][1]["test"]["interactive"][0]["script"]
    return next(c for c in script if c["name"] == health.case_name(key))


@pytest.mark.parametrize("delta, good", [(0, True), (4, True), (-4, True), (5, False), (-400, False)])
def test_the_memory_command_answers_bad_outside_its_floor(tmp_path, delta, good):
    fig = health_check(load_board("qemu-arm")).figure(METRIC)
    cmd = _command("qemu-arm", METRIC)
    out = run_command(tmp_path, cmd["command"], total_kb=int(fig.expected) + delta)
    assert re.search(cmd["successes"][0]["message"], out) if good else re.search(cmd["failures"][0]["message"], out)
    assert out.endswith(f"{METRIC}={int(fig.expected) + delta}")
    assert cmd["failures"][0]["exception"] == "TestError"
    # the typed command, echoed by the board, answers neither way
    assert not re.search(cmd["successes"][0]["message"], cmd["command"])
    assert not re.search(cmd["failures"][0]["message"], cmd["command"])


@pytest.mark.parametrize("factor, good", [(1.0, True), (1.009, True), (0.991, True), (1.02, False), (0.5, False)])
def test_the_boot_command_reads_the_boards_own_login_time(tmp_path, factor, good):
    fig = health_check(load_board("qemu-arm")).figure(GUEST_BOOT)
    cmd = _command("qemu-arm", GUEST_BOOT)
    out = run_command(tmp_path, cmd["command"], login_s=fig.expected * factor)
    assert out.startswith("health-check: good" if good else "health-check: bad")
    # a board whose log has no login stamp answers bad, with nothing read
    assert run_command(tmp_path, cmd["command"].replace("boardlab: login prompt", "no such line")).startswith(
        "health-check: bad")


def fake_lavacli(monkeypatch, healths):
    calls = []

    def lavacli(identity, *args, check=True):
        calls.append(args)
        if args[:2] == ("devices", "show"):
            return yaml.safe_dump({"health": healths[args[2]]})
        if args[:2] == ("devices", "list"):
            return yaml.safe_dump([{"hostname": h, "health": v} for h, v in healths.items()])
        return ""
    monkeypatch.setattr(lava.server, "lavacli", lavacli)
    return calls


def test_a_failed_job_has_its_board_checked_and_bad_boards_are_rechecked(monkeypatch):
    calls = fake_lavacli(monkeypatch, {"qemu-arm": "Good", "qemu-ppc": "Bad"})
    failed = {"state": "Finished", "health": "Incomplete", "actual_device": "qemu-arm"}
    assert lava.server.check_after_failure(None, failed, 7, echo=lambda *_: None)
    assert ("devices", "update", "qemu-arm", "--health", "UNKNOWN") in calls
    assert lava.server.recheck(None, echo=lambda *_: None) == ["qemu-ppc"]
    assert ("devices", "update", "qemu-ppc", "--health", "UNKNOWN") in calls


@pytest.mark.parametrize("job, health, unknown", [
    ({"health": "Incomplete"}, "Good", True),
    ({"health": "Canceled"}, "Good", True),
    ({"health": "Complete"}, "Good", False),
    ({"health": "Incomplete", "health_check": True}, "Good", False),   # LAVA set it Bad itself
    ({"health": "Incomplete"}, "Maintenance", False),                  # an admin's
    ({"health": "Incomplete"}, "Retired", False),
    ({"health": "Incomplete"}, "Looping", False),
    ({"health": "Incomplete", "state": "Running"}, "Good", False),
])
def test_one_failed_job_rule_for_the_arbiter_and_a_waiting_submit(monkeypatch, job, health, unknown):
    from boardlab.lab import rules
    job = {"state": "Finished", "actual_device": "qemu-arm", **job}
    calls = fake_lavacli(monkeypatch, {"qemu-arm": health})
    assert lava.server.check_after_failure(None, job, 7, echo=lambda *_: None) == unknown
    assert (("devices", "update", "qemu-arm", "--health", "UNKNOWN") in calls) == unknown
    assert (rules.after_job(job, health, False) == "unknown") == unknown


def test_every_lava_board_of_the_real_lab_is_watched_by_its_arbiter():
    """A scheduled `lava submit` does not wait for its jobs: the arbiter applies the failed-
    job rule to every board LAVA has (the virtual ones: `lava server up`'s own arbiter)."""
    from boardlab.facts.labhosts import lab_hosts
    from boardlab.facts.labfacts import load_lab
    from boardlab.lab.units import management_units
    unit = management_units(lab_hosts(), load_lab())["boardlab-arbiter.service"]
    for host in lab_hosts():
        if host.kind == "real" and host.lava_worker:
            for board in host.boards:
                assert f" {board}" in unit.split("ExecStart=")[1].splitlines()[0]


@pytest.mark.parametrize("now, said, unknown", [
    ("Good", "", False), ("Unknown", "", False), ("Bad", "", True), ("Maintenance", "fan replaced", False),
    ("Retired", "", False), ("Looping", "", False), ("Maintenance", "NOT_SERVED", True)])
def test_lava_server_up_leaves_an_admins_health_alone_and_checks_a_bad_board(monkeypatch, tmp_path,
                                                                             now, said, unknown):
    """Registering a board at `lava server up`: Retired stays retired, an admin's
    Maintenance is not cancelled; a Bad board is set Unknown (checked again), and so is one
    an earlier run parked because it did not serve it (its description cleared)."""
    from boardlab.lava import localserver
    said = localserver.NOT_SERVED if said == "NOT_SERVED" else said
    calls = []

    def manage(*args, check=True):
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, "", "")
    monkeypatch.setattr(localserver, "_manage", manage)
    monkeypatch.setattr(localserver, "_django", lambda expr: repr((now, said)))   # as LAVA's shell prints it
    monkeypatch.setattr(localserver, "CONFIG", tmp_path)
    monkeypatch.setattr(localserver.health, "stage_check_files", lambda board: [])
    localserver.LocalLavaServer(tmp_path, labs=["vlab"], echo=lambda *_: None).register_board("qemu-arm")
    update = [c for c in calls if c[:2] == ("devices", "update")]
    assert update and ("UNKNOWN" in update[0]) == unknown
    assert (("--description", "") == update[0][-2:]) == (said == localserver.NOT_SERVED)


def test_lava_server_up_parks_the_devices_of_earlier_runs_it_does_not_serve(monkeypatch, tmp_path):
    """`lava server up --board qemu-arm` after a run that served qemu-ppc too: LAVA would
    schedule qemu-ppc's health checks with nobody serving it (they went Incomplete, then
    Bad). It is put in Maintenance, saying why; an admin's health is not looked at."""
    from boardlab.lava import localserver
    calls, asked = [], []

    def manage(*args, check=True):
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, "", "")

    def django(expr):
        asked.append(expr)
        return "qemu-ppc,qemu-arm-noisy"
    monkeypatch.setattr(localserver, "_manage", manage)
    monkeypatch.setattr(localserver, "_django", django)
    srv = localserver.LocalLavaServer(tmp_path, labs=["vlab"], echo=lambda *_: None)
    assert srv._park_others(["qemu-arm"]) == ["qemu-ppc", "qemu-arm-noisy"]
    assert "exclude(hostname__in=['qemu-arm'])" in asked[0] and "HEALTH_RETIRED" not in asked[0]
    assert calls == [("devices", "update", b, "--health", "MAINTENANCE", "--description", localserver.NOT_SERVED)
                     for b in ("qemu-ppc", "qemu-arm-noisy")]


def test_the_recheck_is_scheduled_as_its_own_role_by_cron_and_systemd_alike():
    """`lava schedule --cron`, `lava schedule --systemd` and the management host's units
    (`boardlab gen`) run one recheck: the same command, identity and hour, one unit name."""
    from boardlab.facts.labhosts import lab_hosts
    from boardlab.facts.labfacts import load_lab
    from boardlab.lab.units import management_units
    sched = lava.load_schedule()
    command = "boardlab lab recheck --identity boardlab-recheck"
    cron = [ln for ln in lava.cron_lines(sched).splitlines() if "lab recheck" in ln]
    assert len(cron) == 1 and cron[0].startswith("15 * * * * root ") and f"/{command} >>" in cron[0]
    keys = {}
    for where, units in (("schedule", lava.systemd_units(sched)), ("gen", management_units(lab_hosts(), load_lab()))):
        for kind in ("service", "timer"):
            text = units[f"boardlab-lab-recheck.{kind}"]
            keys[where, kind] = dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln and ln[0] != "#")
        assert keys[where, "service"]["ExecStart"].endswith(f"/.venv/bin/{command}")
    assert keys["schedule", "timer"]["OnCalendar"] == keys["gen", "timer"]["OnCalendar"] == "*-*-* *:15:00"
    # the rest that follows the jobs runs from either path too
    units = lava.systemd_units(sched)
    assert "boardlab history changes" in units["boardlab-history.service"]
    assert "OnCalendar=Sun *-*-* 04:00:00" in units["boardlab-sweep.timer"]


class FakeStrategy:
    """A board through labgrid as `lab check` sees it: each boot's record, the roots booted."""

    def __init__(self, board, login_s, guest_login_s):
        self.board, self.booted, self.login = board, [], (login_s, guest_login_s)
        self.last_boot = None

    def select(self, kernel, root):
        self.selected = (kernel, root)

    def transition(self, status):
        if status == "shell":
            from types import SimpleNamespace
            self.booted.append(self.selected)
            self.last_boot = SimpleNamespace(milestones={"login": self.login[0]},
                                             guest_milestones={"login": self.login[1]})


class FakeShell:
    def __init__(self, total_kb):
        self.total_kb = total_kb

    def run_check(self, cmd):
        return ["              total        used        free      shared  buff/cache   available",
                f"Mem:         {self.total_kb}        6180       88544           0       17472      100000"]


def lab_check(monkeypatch, tmp_path, name, total_kb=None, login_s=None, guest_login_s=None):
    import contextlib
    from boardlab.boot import session
    from boardlab.judge import health as judge_health
    board = load_board(name)
    check = health_check(board)
    mem, host, guest = (check.figure(k) for k in (METRIC, HOST_BOOT, GUEST_BOOT))
    strategy = FakeStrategy(board, login_s or (host.expected if host else 5.0),
                            guest_login_s or (guest.expected if guest else None))
    shell = FakeShell(total_kb or int(mem.expected if mem else 1000))

    @contextlib.contextmanager
    def board_session(env, log_dir, **_):
        yield strategy, lambda: shell
    monkeypatch.setattr(session, "board_session", board_session)
    from boardlab.measure import sample

    def family(name, sh, rec, metric=None, tools=None, **_):   # its run once the board is up
        strategy.families_run = getattr(strategy, "families_run", []) + [(name, metric, tools)]
        return {k: 1.0 for k in check.performance}
    monkeypatch.setattr(sample, "family", family)
    return strategy, lambda: judge_health.check_board(tmp_path / f"{name}.yaml", tmp_path / "logs", echo=lambda *_: None)


def test_lab_check_judges_the_same_figures_and_boots_the_nfs_root_too(monkeypatch, tmp_path):
    from boardlab.judge.health import CheckFailed
    strategy, run = lab_check(monkeypatch, tmp_path, "qemu-arm")
    check = run()
    assert strategy.booted == [("armmp", "ramdisk"), ("armmp", "nfs")]
    # and for the board's own history, lmbench's health figures: asked for by name, every
    # one (the family runs what gives them: tests/test_workloads.py)
    assert check.performance == ("lmbench.lat_syscall_null_us", "lmbench.lat_pipe_us")
    assert strategy.families_run == [("lmbench", ["lmbench.lat_syscall_null_us", "lmbench.lat_pipe_us"], "debian")]
    assert {k: check.measured[k] for k in check.performance} == {k: 1.0 for k in check.performance}
    _, run = lab_check(monkeypatch, tmp_path, "qemu-arm", total_kb=112196 + 8)
    with pytest.raises(CheckFailed, match="memory.free_total_kb = 112204"):
        run()
    _, run = lab_check(monkeypatch, tmp_path, "qemu-arm", guest_login_s=25.0)
    with pytest.raises(CheckFailed, match="boot_time.guest_login = 25"):
        run()


def test_lab_check_bounds_a_real_boards_boot_from_above(monkeypatch, tmp_path):
    from boardlab.judge.health import CheckFailed
    strategy, run = lab_check(monkeypatch, tmp_path, "tqm860l", login_s=40.0)
    run()
    assert strategy.booted == [("2.6.11.7", "nfs")]
    _, run = lab_check(monkeypatch, tmp_path, "tqm860l", login_s=70.0)
    with pytest.raises(CheckFailed, match="boot_time.login = 70 s, not at most 63.8 s"):
        run()


def test_the_check_files_are_staged_as_a_labgrid_boot_stages_them(tmp_path):
    """`lava server up` puts a virtual board's check files into its TFTP directory, under
    the names U-Boot asks for; what is not built is left (the check then says so)."""
    from dataclasses import replace
    board = load_board("qemu-arm")
    images, tftp = tmp_path / "images", tmp_path / "tftp"
    images.mkdir()
    (images / "armmp.uImage").write_bytes(b"kernel")
    board = replace(board, images=replace(board.images, dir=str(images)), tftp=replace(board.tftp, dir=str(tftp)))
    assert health.stage_check_files(board) == ["qemu-arm/armmp.uImage"]
    assert (tftp / "armmp.uImage").read_bytes() == b"kernel"
    (images / "rootfs.uImage").write_bytes(b"ramdisk")
    assert health.stage_check_files(board) == ["qemu-arm/armmp.uImage", "qemu-arm/rootfs.uImage"]
    assert sorted(p.name for p in tftp.iterdir()) == ["armmp.uImage", "rootfs.uImage"]


def test_lab_recheck_uses_the_project_s_identity_by_default(monkeypatch):
    """Without --identity it used lavacli's 'default', which `lava server up` never writes
    ("Unknown identity 'default'"); the hourly unit names the project's."""
    from boardlab.cli import build_parser
    from boardlab.lava.server import RECHECK_COMMAND, RECHECK_IDENTITY
    monkeypatch.delenv("LAVACLI_IDENTITY", raising=False)
    args = build_parser().parse_args(["lab", "recheck"])
    assert args.identity == RECHECK_IDENTITY == "boardlab-recheck"
    assert RECHECK_COMMAND.endswith(f"--identity {RECHECK_IDENTITY}")


def _performance(name):
    return next(a["test"]["interactive"][0] for a in _job(name)["actions"]
                if "test" in a and a["test"]["interactive"][0]["name"] == "performance")


def _as_lava_log(text: str) -> str:
    """Console text as the target lines of LAVA's raw log (as `lavacli jobs logs --raw` gives it)."""
    return "".join("- " + json.dumps({"dt": "2026-12-07T01:00:00.000000", "lvl": "target", "msg": ln}) + "\n"
                   for ln in text.splitlines())


def test_the_check_measures_the_families_health_figures_and_they_are_read_off_the_board(tmp_path):
    """LAVA's check types the lines the suites run (the family's raw_commands); the raw
    output is read off the board by the family's own reader, as the suites read it. Here
    the job's lines run in a shell whose lmbench programs print what armmp's printed on
    qemu-arm (tests/data/captured): no verdict is made on the board."""
    perf = _performance("qemu-arm")
    check = health_check(load_board("qemu-arm"))
    assert set(check.performance) == {"lmbench.lat_syscall_null_us", "lmbench.lat_pipe_us"}
    assert _job("qemu-arm")["metadata"]["boardlab.performance"] == " ".join(check.performance)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for program, capture in (("lat_syscall", "armmp.lat_syscall.txt"), ("lat_pipe", "armmp.lat_pipe.txt")):
        (bindir / program).write_text(f"#!/bin/sh\ncat {CAPTURED / capture} >&2\n")
        (bindir / program).chmod(0o755)
    script = "\n".join(c["command"] for c in perf["script"])
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                       env={"PATH": f"{bindir}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    measured = perf["script"][-1]
    assert measured["name"] == "lmbench-measured"
    assert re.search(measured["successes"][0]["message"], r.stdout)
    for pattern in (measured["successes"][0]["message"], measured["failures"][0]["message"]):
        assert not re.search(pattern, measured["command"])   # the echoed line answers neither way
    figures = health.figures_of_log(_as_lava_log(measured["command"] + "\n" + r.stdout), "armhf")
    assert figures == {"lmbench.lat_syscall_null_us": 13.2252, "lmbench.lat_pipe_us": 347.0577}


def test_a_failed_health_run_is_a_failed_case_not_a_figure(tmp_path):
    perf = _performance("qemu-arm")
    script = "\n".join(c["command"] for c in perf["script"])
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                       env={"PATH": f"{tmp_path}:/usr/bin:/bin"})   # no lmbench here
    assert "@lm-failed" in r.stdout
    failed = {}   # the family left out, said; the check's other figures would be kept
    assert health.figures_of_log(_as_lava_log(r.stdout), "armhf", failed) == {}
    assert re.search("lmbench: lmbench: 127: lat_syscall null", failed["lmbench"])


def test_a_health_check_keeps_the_figures_of_the_families_that_measured(tmp_path):
    """The board's own lmbench printed what is no figure (the test's fault): lmbench is
    left out with its reason, the boot's answer kept."""
    log = "\n".join(["health-check: good boot_time.guest_login=20.729278",
                     "@boardlab-raw lmbench begin", "@lm-group lat_syscall", "@lm lat_syscall_null_us",
                     "@raw lat_syscall ns=garbage", "@boardlab-raw lmbench end rc=0"])
    failed = {}
    figures = health.figures_of_log(_as_lava_log(log), "armhf", failed)
    assert figures == {"boot_time.guest_login": 20.729278}
    assert "printed what is no figure" in failed["lmbench"], failed
