"""Every command, bad input: one line naming the file, field or board, exit 2, never a
traceback; nothing written and no board taken or powered before the input is checked."""
import json

import pytest

from boardlab.boot import session
from boardlab.cli import main


@pytest.fixture
def no_board(monkeypatch):
    """Any attempt to take a board fails the test."""
    def taken(*a, **k):
        raise AssertionError("a board was taken before the input was checked")
    monkeypatch.setattr(session, "board_session", taken)
    from boardlab.judge import compare
    monkeypatch.setattr(compare, "board_session", taken)


def _run(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    return code, err


def _bad_runs(tmp_path):
    empty, trunc, alien = tmp_path / "empty", tmp_path / "trunc", tmp_path / "alien"
    for d in (empty, trunc, alien):
        d.mkdir()
    (empty / "results.json").write_text("")
    (trunc / "results.json").write_text('{"meta": {"host": "x"}, "metrics": [{"board": "qemu-a')
    (alien / "results.json").write_text(json.dumps({"metrics": [{"board": "qemu-arm"}], "meta": {}}))
    return empty, trunc, alien


def test_report_and_baselines_update_name_a_broken_results_file(tmp_path, capsys, monkeypatch):
    from boardlab.judge import baselines as bl
    written = []
    monkeypatch.setattr(bl, "write", lambda *a, **k: written.append(a))
    empty, trunc, alien = _bad_runs(tmp_path)
    for argv, says in [
        (["report", str(empty)], f"{empty}/results.json: empty"),
        (["report", str(trunc)], f"{trunc}/results.json: not valid JSON at line 1"),
        (["report", str(alien)], "field 'metrics[0]' lacks kernel, suite, name, value, unit"),
        (["report", str(tmp_path / "typo")], "no results.json (is it a run directory?)"),
        (["baselines", "update", str(trunc)], "not valid JSON"),
        (["baselines", "update", str(empty)], "empty"),
        (["report", "baseline:tqm860l"], "a stored side is baseline:<board>:<kernel>"),
        (["report", "baseline:tqm860l:9.9"], "no baselines for board tqm860l, kernel 9.9"),
    ]:
        code, err = _run(capsys, argv)
        assert code == 2 and says in err and len(err.splitlines()) == 1, (argv, code, err)
    assert not written
    assert not list(tmp_path.rglob("report.html"))


def test_lava_render_checks_its_arguments_before_writing(tmp_path, capsys):
    for extra, says in [(["--kernel", "nope"], "no kernel 'nope' in images.kernels"),
                        (["--suites", "memory", "--root", "nfs"], "suite memory is measured on the ramdisk"),
                        (["--suites", "nonsense"], "unknown suite 'nonsense'")]:
        out = tmp_path / extra[1]
        code, err = _run(capsys, ["lava", "render", "--board", "qemu-arm", "--out", str(out), *extra])
        assert code == 2 and says in err and len(err.splitlines()) == 1, err
        assert not out.exists()


def test_lava_validate_names_a_missing_file(capsys):
    code, err = _run(capsys, ["lava", "validate", "/nonexistent/job.yaml"])
    assert code == 2 and err == "boardlab lava validate: /nonexistent/job.yaml: no such file"


def test_compare_with_a_mistyped_run_directory_takes_no_board(tmp_path, capsys, no_board):
    run = tmp_path / "results" / "compare-typo"
    code, err = _run(capsys, ["compare", "--board", "qemu-arm", "--kernel", "armmp",
                              "--kernel", str(run), "--out", str(tmp_path / "out")])
    assert code == 2 and f"kernel '{run}': neither a kernel of board qemu-arm" in err, err
    assert not (tmp_path / "out").exists()


def test_bad_names_are_refused_before_a_boot(tmp_path, capsys, no_board):
    code, err = _run(capsys, ["compare", "--board", "qemu-arm", "--kernel", "armmp",
                              "--kernel", "tftp:qemu-arm/a;reset", "--out", str(tmp_path / "out")])
    assert code == 2 and "may not hold whitespace, ';'" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, says", [
    (["boot", "--env", "/nonexistent/board.yaml"], "/nonexistent/board.yaml: no such labgrid environment file"),
    (["lava", "results", "/nonexistent/run"], "neither a lava-run directory nor a LAVA job id"),
    (["lava", "schedule", "--cron", "--schedule", "/nonexistent/schedule.yaml"], "/nonexistent/schedule.yaml"),
    (["lava", "submit", "--when", "sometimes", "--dry-run"], "no job runs 'sometimes'"),
    (["lava", "render", "--board", "nope"], "boards/nope.yaml: no such file"),
    (["places", "sync", "--lab", "nope", "--coordinator", "127.0.0.1:1"], "places/nope/lab-host.yaml: no such file"),
    (["compare", "--kernel", "baseline:qemu-arm", "--kernel", "armmp"], "a stored side is baseline:<board>:<kernel>"),
    (["compare", "--phases", "--kernel", "baseline:qemu-arm:armmp", "--kernel", "armmp"],
     "--phases boots both kernels with their phase log, but armmp (stored) is stored figures"),
])
def test_every_command_names_bad_input_in_one_line(capsys, no_board, argv, says):
    code, err = _run(capsys, argv)
    assert code == 2 and says in err and len(err.splitlines()) == 1, (code, err)


def test_a_coordinator_that_is_down_is_one_line_for_places_sync_and_the_remote_suites(capsys):
    """A fault of a distributed lab: nothing answers at the coordinator's address."""
    import subprocess
    import sys

    from boardlab.net import free_port
    from paths import ROOT
    dead = f"127.0.0.1:{free_port()}"
    code, err = _run(capsys, ["places", "sync", "--coordinator", dead])
    assert code == 1 and f"the labgrid coordinator {dead} is not reachable" in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    r = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", "lab/remote/qemu-ppc.yaml",
                        "--lg-coordinator", dead, "testsuites/test_shell.py", "-q", "-p", "no:cacheprovider"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert f"lab/remote/qemu-ppc.yaml: the labgrid coordinator {dead} (place qemu-ppc) is not reachable" in r.stdout
