"""Health checks: the rule (one exact figure within its floor), LAVA's generated
health-check jobs, and the check's own shell steps run as LAVA's test shell runs them."""
import subprocess

import pytest
import yaml

from boardlab import lava
from boardlab.facts.board import BOARDS_DIR, load_board
from boardlab.judge.health import health_figure
from boardlab.lava import health

BOARDS = sorted(p.stem for p in BOARDS_DIR.glob("*.yaml"))


def test_the_rule_is_the_stored_baseline_of_an_exact_figure_and_its_floor():
    fig = health_figure(load_board("qemu-arm"))
    assert (fig.kernel, fig.root, fig.key) == ("armmp", "ramdisk", "memory.free_total_kb")
    assert fig.judge(fig.expected) is None and fig.judge(fig.expected + fig.floor) is None
    why = fig.judge(fig.expected + fig.floor + 1)
    assert "memory.free_total_kb" in why and "armmp" in why and "qemu-arm" in why


def test_every_device_type_has_its_generated_health_check_and_lava_takes_it(tmp_path):
    files = []
    for name in BOARDS:
        board = load_board(name)
        path = health.health_check_path(board)
        assert path.read_text() == health.generated_files()[path], f"{path}: stale: run boardlab gen"
        job = yaml.safe_load(path.read_text())
        assert [list(a)[0] for a in job["actions"]] == ["deploy", "boot", "test"]
        assert job["metadata"]["boardlab.kernel"] == board.images.default_kernel
        files.append(("job", path))
    assert lava.validate(files) == {}


def run_steps(tmp_path, total_kb):
    """The check's steps in a shell with LAVA's helpers and `free` standing in (the
    values a board's free gives), -> (exit code, what the helpers were called with)."""
    steps = yaml.safe_load(health.health_check_path(load_board("qemu-arm")).read_text())[
        "actions"][2]["test"]["definitions"][0]["repository"]["run"]["steps"]
    calls = tmp_path / "calls"
    script = "\n".join([
        f"free() {{ echo '              total        used        free'; echo 'Mem:     {total_kb}  4000  100000'; }}",
        f"lava_test_case() {{ echo \"case $*\" >> {calls}; }}",
        f"lava_test_raise() {{ echo \"raise $*\" >> {calls}; exit 1; }}",
        *[s.replace("lava-test-case", "lava_test_case").replace("lava-test-raise", "lava_test_raise")
          for s in steps]])
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    return r.returncode, calls.read_text() if calls.exists() else ""


@pytest.mark.parametrize("delta, good", [(0, True), (4, True), (-4, True), (5, False), (-400, False)])
def test_the_check_raises_when_the_figure_is_outside_its_floor(tmp_path, delta, good):
    fig = health_figure(load_board("qemu-arm"))
    rc, calls = run_steps(tmp_path, int(fig.expected) + delta)
    assert (rc == 0) == good, calls
    assert ("case free_total_kb --result pass" in calls) == good
    if not good:
        assert "raise memory.free_total_kb" in calls and "armmp on qemu-arm" in calls


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
    from boardlab.lab.units import management_units
    unit = management_units(lab_hosts())["boardlab-arbiter.service"]
    for host in lab_hosts():
        if host.kind == "real" and host.lava_worker:
            for board in host.boards:
                assert f" {board}" in unit.split("ExecStart=")[1].splitlines()[0]


@pytest.mark.parametrize("now, unknown", [("Good", False), ("Unknown", False), ("Bad", True),
                                          ("Maintenance", False), ("Retired", False), ("Looping", False)])
def test_lava_server_up_leaves_an_admins_health_alone_and_checks_a_bad_board(monkeypatch, tmp_path,
                                                                             now, unknown):
    """Registering a board at `lava server up`: Retired stays retired, an admin's
    Maintenance is not cancelled; only a Bad board is set Unknown (checked again)."""
    from boardlab.lava import localserver
    calls = []

    def manage(*args, check=True):
        calls.append(args)
        return subprocess.CompletedProcess(args, 0, "", "")
    monkeypatch.setattr(localserver, "_manage", manage)
    monkeypatch.setattr(localserver, "_django", lambda expr: now)
    monkeypatch.setattr(localserver, "CONFIG", tmp_path)
    localserver.LocalLavaServer(tmp_path, labs=["vlab"], echo=lambda *_: None).register_board("qemu-arm")
    update = [c for c in calls if c[:2] == ("devices", "update")]
    assert update and (("--health", "UNKNOWN") == update[0][-2:]) == unknown


def test_the_recheck_is_scheduled_as_its_own_role_by_cron_and_systemd_alike():
    """`lava schedule --cron`, `lava schedule --systemd` and the management host's units
    (`boardlab gen`) run one recheck: the same command, identity and hour, one unit name."""
    from boardlab.facts.labhosts import lab_hosts
    from boardlab.lab.units import management_units
    sched = lava.load_schedule()
    command = "boardlab lab recheck --identity boardlab-recheck"
    cron = [ln for ln in lava.cron_lines(sched).splitlines() if "lab recheck" in ln]
    assert len(cron) == 1 and cron[0].startswith("15 * * * * root ") and f"/{command} >>" in cron[0]
    keys = {}
    for where, units in (("schedule", lava.systemd_units(sched)), ("gen", management_units(lab_hosts()))):
        for kind in ("service", "timer"):
            text = units[f"boardlab-lab-recheck.{kind}"]
            keys[where, kind] = dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln and ln[0] != "#")
        assert keys[where, "service"]["ExecStart"].endswith(f"/.venv/bin/{command}")
    assert keys["schedule", "timer"]["OnCalendar"] == keys["gen", "timer"]["OnCalendar"] == "*-*-* *:15:00"
    # the rest that follows the jobs runs from either path too
    units = lava.systemd_units(sched)
    assert "boardlab history changes" in units["boardlab-history.service"]
    assert "OnCalendar=Sun *-*-* 04:00:00" in units["boardlab-sweep.timer"]
