"""A shared lab on the virtual lab: a board's health check through labgrid, LAVA's health
checks taking a broken board out and a repaired one back, and one board held by a person
and by LAVA in turn with no collision."""
import contextlib
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from boardlab import cli, lava
from boardlab.facts.labfacts import load_lab
from paths import ROOT

pytestmark = pytest.mark.vlab


def test_lab_check_says_good_then_bad_with_why_when_the_power_switch_refuses(ppc_host, tmp_path, capsys):
    """`boardlab lab check`: the labgrid way (the board's environment and strategy). On the
    PowerPC board and its lab host, beside the default board's tests: any board will do."""
    board = "qemu-ppc"
    assert cli.main(["lab", "check", board, "--log-dir", str(tmp_path / "good")]) == 0
    said = capsys.readouterr().out
    assert f"{board}: good: " in said and "memory.free_total_kb = " in said, said
    ppc_host.stop_service("power-switch")
    try:
        assert cli.main(["lab", "check", board, "--log-dir", str(tmp_path / "bad")]) == 1
        last = capsys.readouterr().err.strip().splitlines()[-1]   # after the progress lines: one line of why
        assert last.startswith(f"boardlab lab check: {board}: bad: power") and "8101" in last, last
    finally:
        ppc_host.start_service("power-switch")
    # the board's lock went with the failed check: the next check has the board, and
    # leaves it off (a later test's boot finds it free)
    assert cli.main(["lab", "check", board, "--log-dir", str(tmp_path / "again")]) == 0


def device(srv, board="qemu-arm") -> dict:
    return yaml.safe_load(lava.lavacli(srv.identity, "devices", "show", board, "--yaml"))


def wait_for(what, ok, timeout):
    deadline = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < deadline, f"not {what} after {timeout} s"
        time.sleep(2)


def health_checks(srv, board="qemu-arm") -> list[dict]:
    out = lava.lavacli(srv.identity, "jobs", "list", "--limit", "50", "--yaml")
    jobs = [yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", str(j["id"]), "--yaml"))
            for j in yaml.safe_load(out) or []]
    return sorted((j for j in jobs if j.get("health_check") and j.get("device") == board), key=lambda j: int(j["id"]))


@pytest.mark.lava_server
@pytest.mark.slow
def test_a_broken_board_goes_bad_and_takes_no_job_and_a_repaired_one_comes_back(vlab, tmp_path, capsys):
    from boardlab.lava.localserver import LocalLavaServer
    from test_lava import free_port
    with LocalLavaServer(tmp_path / "server", port=free_port(), identity="boardlab-test") as srv:
        srv.up(["qemu-arm"])
        lava.lavacli(srv.identity, "devices", "update", "qemu-arm", "--health", "UNKNOWN")
        wait_for("Good after its check", lambda: device(srv)["health"] == "Good", 600)
        vlab.stop_service("power-switch")          # broken: its power switch refuses
        try:
            lava.lavacli(srv.identity, "devices", "update", "qemu-arm", "--health", "UNKNOWN")
            wait_for("Bad", lambda: device(srv)["health"] == "Bad", 600)
            rc = cli.main(["lava", "submit", "--identity", srv.identity, "--out", str(tmp_path / "submit"),
                           "--job", "qemu-arm-armmp-nightly"])
            assert rc == 0
            job = re.findall(r"submitted as job (\d+)", capsys.readouterr().out)[0]
            time.sleep(30)
            assert yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))["state"] == "Submitted"
        finally:
            vlab.start_service("power-switch")     # repaired
        assert cli.main(["lab", "recheck", "--identity", srv.identity]) == 0
        wait_for("Good after the repair", lambda: device(srv)["health"] == "Good", 600)
        assert lava.wait_for_job(srv.identity, job, 900) == "Complete"   # the job waited, then ran
        checks = [j["health"] for j in health_checks(srv)]
        assert "Incomplete" in checks and checks[-1] == "Complete", checks


@contextlib.contextmanager
def uboot_erased(vlab, board):
    """Its flash reads erased: no U-Boot, a silent console. Repaired: flashed again."""
    from boardlab.facts.board import load_board
    from boardlab.facts.labhosts import load_lab_host
    from boardlab.vlab import flash
    b = load_board(board)
    flash.erase(b, load_lab_host(b.lab_host))
    try:
        yield
    finally:
        flash.write(b, load_lab_host(b.lab_host))


@contextlib.contextmanager
def tftpd_stopped(vlab, board):
    vlab.stop_service("tftpd")
    try:
        yield
    finally:
        vlab.start_service("tftpd")


@contextlib.contextmanager
def nfs_root_emptied(vlab, board):
    """The board's NFS root serves no files (the export's own directory stays: the NFS
    server holds it by handle, so the kernel mounts it and finds no init). Repaired: the
    files moved back."""
    from boardlab.facts.board import load_board
    root = Path(load_board(board).nfs.export)
    aside = root.with_name(root.name + ".broken")
    aside.mkdir()
    for f in list(root.iterdir()):
        f.rename(aside / f.name)
    try:
        yield
    finally:
        for f in list(aside.iterdir()):
            f.rename(root / f.name)
        aside.rmdir()


BREAKAGES = {"U-Boot erased": uboot_erased, "tftpd stopped": tftpd_stopped, "NFS root unreadable": nfs_root_emptied}


@pytest.mark.lava_server
@pytest.mark.slow
def test_each_breakage_makes_the_board_bad_in_one_check_and_one_check_after_repair_good(vlab, tmp_path, capsys):
    """Issue goal: a broken board is Bad within one health check and takes no job; Good again
    after the repair and one check. The check tries the wiring: U-Boot, the lab host's tftpd
    and the board's NFS root (its second boot)."""
    from boardlab.lava.localserver import LocalLavaServer
    from test_lava import free_port
    with LocalLavaServer(tmp_path / "server", port=free_port(), identity="boardlab-test") as srv:
        srv.up(["qemu-arm"])
        lava.lavacli(srv.identity, "devices", "update", "qemu-arm", "--health", "UNKNOWN")
        wait_for("Good after its check", lambda: device(srv)["health"] == "Good", 600)
        for i, (what, broken) in enumerate(BREAKAGES.items()):
            before = max((int(j["id"]) for j in health_checks(srv)), default=0)
            with broken(vlab, "qemu-arm"):
                lava.lavacli(srv.identity, "devices", "update", "qemu-arm", "--health", "UNKNOWN")
                wait_for(f"Bad with {what}", lambda: device(srv)["health"] == "Bad", 900)
                checks = [j for j in health_checks(srv) if int(j["id"]) > before]
                assert [j["health"] for j in checks] == ["Incomplete"], (what, checks)
                if i == len(BREAKAGES) - 1:   # a job waits while the board is Bad
                    assert cli.main(["lava", "submit", "--identity", srv.identity, "--out",
                                     str(tmp_path / "submit"), "--job", "qemu-arm-armmp-nightly"]) == 0
                    job = re.findall(r"submitted as job (\d+)", capsys.readouterr().out)[0]
                    time.sleep(30)
                    assert yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))["state"] == "Submitted"
            assert cli.main(["lab", "recheck", "--identity", srv.identity]) == 0
            wait_for(f"Good after {what} was repaired", lambda: device(srv)["health"] == "Good", 600)
            assert [j["health"] for j in health_checks(srv) if int(j["id"]) > before] == ["Incomplete", "Complete"], what
        assert lava.wait_for_job(srv.identity, job, 900) == "Complete"   # the job waited, then ran


def labgrid_cmd(*args) -> list[str]:
    return [str(ROOT / ".venv" / "bin" / "labgrid-client"), "-x", load_lab().coordinator, *args]


def labgrid_env(user) -> dict:
    return {"LG_USERNAME": user, "LG_HOSTNAME": "dev", "PATH": "/usr/bin:/bin"}


def labgrid(*args, user="alice"):
    return subprocess.run(labgrid_cmd(*args), capture_output=True, text=True, env=labgrid_env(user), timeout=900)


def info_start(srv, job):
    return yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))["start_time"]


@pytest.mark.lava_server
@pytest.mark.slow
def test_a_person_and_lava_take_turns_on_one_board(vlab, tmp_path, capsys):
    """A job submitted while a developer holds the board waits and runs after the
    release; a reservation made during a job is granted when the job ends; neither side
    had the board while the other did."""
    from boardlab.lava.localserver import LocalLavaServer
    from test_lava import free_port
    # the lab's places at the coordinator, as an admin makes them (`boardlab places sync`):
    # on a fresh host no other test of the slow set has (the arbiter said "not a place")
    assert cli.main(["places", "sync"]) == 0
    with LocalLavaServer(tmp_path / "server", port=free_port(), identity="boardlab-test") as srv:
        srv.up(["qemu-arm"])
        wait_for("LAVA's place", lambda: "acquired: lava-arbiter/lava" in labgrid("-p", "qemu-arm", "show").stdout, 60)
        assert labgrid("-p", "qemu-arm", "acquire").returncode != 0   # no one takes it past LAVA
        r = labgrid("reserve", "--wait", "--shell", "board=qemu-arm")
        token = re.search(r"LG_TOKEN=(\S+)", r.stdout).group(1)
        assert labgrid("-p", f"+{token}", "acquire").returncode == 0
        assert labgrid("-p", "qemu-arm", "power", "cycle").returncode == 0   # the person's
        assert device(srv)["health"] == "Maintenance"
        rc = cli.main(["lava", "submit", "--identity", srv.identity, "--out", str(tmp_path / "s1"),
                       "--job", "qemu-arm-armmp-nightly"])
        job = re.findall(r"submitted as job (\d+)", capsys.readouterr().out)[0]
        time.sleep(20)
        assert rc == 0 and yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))["state"] == "Submitted"
        released = time.time()
        labgrid("-p", f"+{token}", "release")
        labgrid("cancel-reservation", token)
        wait_for("the job running", lambda: yaml.safe_load(lava.lavacli(
            srv.identity, "jobs", "show", job, "--yaml"))["state"] in ("Running", "Finished"), 120)
        # during the job: reserve --wait polls the reservation (labgrid drops one nobody polls)
        waiting = subprocess.Popen(labgrid_cmd("reserve", "--wait", "--shell", "board=qemu-arm"),
                                   stdout=subprocess.PIPE, text=True, env=labgrid_env("alice"))
        try:
            assert lava.wait_for_job(srv.identity, job, 900) == "Complete"
            ended = yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", job, "--yaml"))["end_time"]
            out, _ = waiting.communicate(timeout=180)   # granted once the job ended
        finally:
            waiting.kill()
        token = re.search(r"LG_TOKEN=(\S+)", out).group(1)
        assert str(info_start(srv, job)) >= time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(released - 2))
        assert ended is not None
        assert labgrid("-p", f"+{token}", "acquire").returncode == 0
        labgrid("-p", f"+{token}", "release")
        labgrid("cancel-reservation", token)


def job_state(srv, job) -> dict:
    return yaml.safe_load(lava.lavacli(srv.identity, "jobs", "show", str(job), "--yaml"))


@pytest.mark.lava_server
@pytest.mark.slow
def test_a_lava_server_restart_loses_no_job(vlab, tmp_path, capsys):
    """Issue 'The shared lab, round two': `lava server up` ended every unfinished job,
    Submitted ones too. Now a job queued behind a person's hold waits through a restart
    and runs after the release; a job running when the server stops (its dispatcher ended
    with the worker) ends Incomplete saying so and is submitted again, and that one runs."""
    from boardlab.lava.localserver import LocalLavaServer
    from test_lava import free_port
    assert cli.main(["places", "sync"]) == 0
    with LocalLavaServer(tmp_path / "server", port=free_port(), identity="boardlab-test") as srv:
        srv.up(["qemu-arm"])
        wait_for("LAVA's place", lambda: "acquired: lava-arbiter/lava" in labgrid("-p", "qemu-arm", "show").stdout, 60)
        token = re.search(r"LG_TOKEN=(\S+)", labgrid("reserve", "--wait", "--shell", "board=qemu-arm").stdout).group(1)
        assert labgrid("-p", f"+{token}", "acquire").returncode == 0
        assert cli.main(["lava", "submit", "--identity", srv.identity, "--out", str(tmp_path / "s1"),
                         "--job", "qemu-arm-armmp-nightly"]) == 0
        job = re.findall(r"submitted as job (\d+)", capsys.readouterr().out)[0]
        srv.down()
        srv.up(["qemu-arm"])
        assert job_state(srv, job)["state"] == "Submitted"      # it waits, as it did before the restart
        assert "submitted job(s) of an earlier run wait in the queue" in capsys.readouterr().out
        labgrid("-p", f"+{token}", "release")
        labgrid("cancel-reservation", token)
        wait_for("the job running", lambda: job_state(srv, job)["state"] == "Running", 180)
        time.sleep(5)
        srv.down()                                                # its dispatcher ends with the worker
        srv.up(["qemu-arm"])
        said = capsys.readouterr().out
        again = re.search(rf"job {job} was Running when an earlier run stopped: Incomplete, "
                          r"submitted again as job (\d+)", said)
        assert again, said
        ended = job_state(srv, job)   # its comment: ours, or what the new worker reported of it
        assert ended["state"] == "Finished" and ended["health"] == "Incomplete"
        assert lava.wait_for_job(srv.identity, again.group(1), 900) == "Complete"
