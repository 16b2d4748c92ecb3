"""Every command, bad input: one line naming the file, field or board, exit 2, never a
traceback; nothing written and no board taken or powered before the input is checked."""
import json
from pathlib import Path

import pytest

# compare is imported here, not inside no_board: imported for the first time while
# session.board_session is patched, its `from ... import board_session` would capture the
# patch, and monkeypatch would then restore that captured patch as the "original"
from boardlab.ab import compare
from boardlab.boot import session
from boardlab.cli import main


@pytest.fixture
def no_board(monkeypatch):
    """Any attempt to take a board fails the test."""
    def taken(*a, **k):
        raise AssertionError("a board was taken before the input was checked")
    monkeypatch.setattr(session, "board_session", taken)
    monkeypatch.setattr(compare, "board_session", taken)

    def ran(*a, **k):   # a check that regressed would start the long work itself
        raise AssertionError("a sweep, bisect or nightly build started before the input was checked")
    for long_work in ("boardlab.kernel.sweep.sweep", "boardlab.bisect.run._bisect", "boardlab.bisect.nightly._build"):
        monkeypatch.setattr(long_work, ran)


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
    from boardlab.measure import baselines as bl
    written = []
    monkeypatch.setattr(bl, "write", lambda *a, **k: written.append(a))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: written.append(a))
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


def test_compare_finds_its_board_s_environment_from_any_directory(tmp_path, capsys, monkeypatch):
    """Run from outside the checkout, compare's default environment is the board's own
    (it was lab/<board>.yaml relative to where one stood: a run directory, then 'no such file')."""
    seen = []

    def stop(env, *a, **k):
        seen.append(env)
        raise ValueError("stopped before a boot")
    monkeypatch.setattr(compare, "compare", stop)
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--board", "qemu-arm", "--kernel", "armmp", "--kernel", "rt-armmp"]) == 2
    assert Path(seen[0]).is_absolute() and Path(seen[0]).is_file(), seen
    assert not any(tmp_path.iterdir())


def test_bad_names_are_refused_before_a_boot(tmp_path, capsys, no_board):
    code, err = _run(capsys, ["compare", "--board", "qemu-arm", "--kernel", "armmp",
                              "--kernel", "tftp:qemu-arm/a;reset", "--out", str(tmp_path / "out")])
    assert code == 2 and "may not hold whitespace, ';'" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, says", [
    (["boot", "--env", "/nonexistent/board.yaml"], "/nonexistent/board.yaml: no such labgrid environment file"),
    (["lava", "results", "/nonexistent/run"], "neither a lava-run directory nor a LAVA job id"),
    (["lava", "schedule", "--cron", "--schedule", "/nonexistent/schedule.yaml"], "/nonexistent/schedule.yaml: no such file"),
    (["lava", "submit", "--when", "sometimes", "--dry-run"], "no job runs 'sometimes'"),
    (["lava", "render", "--board", "nope"], "boards/nope.yaml: no such file"),
    (["places", "sync", "--lab", "nope", "--coordinator", "127.0.0.1:1"], "places/nope/lab-host.yaml: no such file"),
    (["compare", "--kernel", "baseline:qemu-arm", "--kernel", "armmp"], "a stored side is baseline:<board>:<kernel>"),
    (["compare", "--phases", "--kernel", "baseline:qemu-arm:armmp", "--kernel", "armmp"],
     "--phases boots both kernels with their phase log, but armmp (stored) is stored figures"),
    (["compare", "--kernel", "armmp", "--kernel", "rt-armmp", "--max-repeats", "0"], "--max-repeats 0: at least 1"),
    (["compare", "--kernel", "armmp", "--kernel", "rt-armmp", "--jitter-seconds", "0"], "--jitter-seconds 0: at least 1"),
    (["compare", "--kernel", "armmp", "--kernel", "rt-armmp", "--env", "/nonexistent/board.yaml"],
     "/nonexistent/board.yaml: no such labgrid environment file"),
    (["kernel", "sweep", "--budget", "-1"], "--budget -1: boots a side, 0 or more"),
    (["kernel", "show", "nosuch", "--board", "qemu-arm"], "board qemu-arm has no kernel nosuch (its kernels: armmp"),
    (["nightly", "--tree", "/nonexistent", "--boots", "0"], "--boots 0: at least 1"),
    (["bisect", "--tree", "/nonexistent", "--good", "a", "--bad", "b", "--metric", "boot_time.guest_login",
      "--repeats", "0"], "--repeats 0 --max-repeats 10: boots a revision, at least 1"),
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


def _one_line(capsys, argv, says):
    code, err = _run(capsys, argv)
    assert code == 2 and says in err and len(err.splitlines()) == 1 and "Traceback" not in err, \
        (argv, code, err)


def test_lava_results_of_a_directory_without_or_with_a_broken_job(tmp_path, capsys):
    d = tmp_path / "job"
    d.mkdir()
    _one_line(capsys, ["lava", "results", str(d)], f"{d}/job.yaml: not there")
    (d / "job.yaml").write_text("device_type: boardlab-qemu-arm\n")
    _one_line(capsys, ["lava", "results", str(d)], f"{d}/job.log: not there")
    (d / "job.log").write_text("")
    (d / "job.yaml").write_text("device_type: [unclosed\n")
    _one_line(capsys, ["lava", "results", str(d)], f"{d}/job.yaml: not YAML")
    (d / "job.yaml").write_text("- a list\n")
    _one_line(capsys, ["lava", "results", str(d)], f"{d}/job.yaml: not a LAVA job")
    (d / "job.yaml").write_text("device_type: qemu\n")
    _one_line(capsys, ["lava", "results", str(d)], "names no boardlab board")
    assert sorted(p.name for p in d.iterdir()) == ["job.log", "job.yaml"]


def test_a_kernel_config_outside_the_tree_is_refused_before_any_source(tmp_path, capsys, monkeypatch):
    from boardlab.kernel import frombuild
    monkeypatch.setattr(frombuild, "build_version", lambda *a, **k: pytest.fail("built"))
    frag = tmp_path / "my.config"
    frag.write_text("CONFIG_PRINTK=y\n")
    _one_line(capsys, ["kernel", "build", "6.1.192-2", "--config", str(frag)], "outside this tree")
    _one_line(capsys, ["kernel", "sweep", "6.1.192-2", "--config", str(frag)], "outside this tree")
    _one_line(capsys, ["kernel", "build", "6.1.192-2", "--config", str(tmp_path / "no")], "no such file")


def test_seed_reference_without_the_study_file(tmp_path, capsys, monkeypatch):
    from boardlab.measure import baselines as bl
    from boardlab.judge import reference
    monkeypatch.setattr(reference, "REFERENCE", tmp_path / "shared/reference/x.yaml")
    monkeypatch.setattr(reference.seed, "__defaults__", (tmp_path / "shared/reference/x.yaml", tmp_path))
    monkeypatch.setattr(bl, "write", lambda *a, **k: pytest.fail("written"))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: pytest.fail("written"))
    _one_line(capsys, ["baselines", "seed-reference"], "x.yaml: not there")
    (tmp_path / "shared/reference").mkdir(parents=True)
    (tmp_path / "shared/reference/x.yaml").write_text("results: [1]\n")
    _one_line(capsys, ["baselines", "seed-reference"], "fields 'boards' and 'results' are needed")


def test_baselines_update_of_a_metric_with_a_key_no_run_has(tmp_path, capsys, monkeypatch):
    from boardlab.measure import baselines as bl
    monkeypatch.setattr(bl, "write", lambda *a, **k: pytest.fail("written"))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: pytest.fail("written"))
    run = tmp_path / "run"
    run.mkdir()
    m = {"board": "qemu-arm", "kernel": "armmp", "suite": "memory", "name": "free_free_kb",
         "value": 1.0, "unit": "kB", "verdict": "new", "colour": "red"}
    (run / "results.json").write_text(json.dumps({"meta": {}, "metrics": [m]}))
    _one_line(capsys, ["baselines", "update", str(run)], "field 'metrics[0]' has 'colour'")


@pytest.mark.parametrize("argv, says", [
    (["history", "export"], "--kcidb (the one format it writes) is needed"),
    (["history", "watch"], "--tree (the kernel tree the builds are revisions of) is needed"),
    (["history", "changes", "--since", "2026-13-45"], "--since 2026-13-45: not a date"),
    (["history", "changes", "--since", "yesterday"], "--since yesterday: not a date"),
    (["history", "changes", "--metric", "boot_time.guest_logn"], "'boot_time.guest_logn' is not in the catalogue"),
    (["history", "page", "--metric", "lmbench/lat_pipe"], "'lmbench.lat_pipe' is not in the catalogue"),
    (["history", "watch", "--tree", "/nonexistent", "--metric", "x.y"], "'x.y' is not in the catalogue"),
])
def test_history_filters_and_missing_options(capsys, argv, says):
    """One line on stderr, exit 2, before the history is asked."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2 and says in err.strip() and len(err.strip().splitlines()) == 1, (code, out, err)
    assert not out and '"' not in err, err     # the message itself, not a KeyError's repr of it


def test_a_broken_yaml_file_is_one_line_with_where_it_breaks(tmp_path):
    """PyYAML's own message is four lines with the quoted line; every loader says one."""
    from boardlab.errors import BoardlabError
    from boardlab.facts import kernelpin, typedyaml
    from boardlab.measure import baselines
    from boardlab.lava.server import load_schedule
    broken = "jobs:\n  a: {board: qemu-arm\n"
    (tmp_path / "k").mkdir()
    for name in ("f.yaml", "k/pin.yaml"):
        (tmp_path / name).write_text(broken)
    loaders = [lambda: typedyaml.load_yaml(tmp_path / "f.yaml"), lambda: kernelpin.load_pin("k", tmp_path),
               lambda: baselines._read(tmp_path / "f.yaml"), lambda: load_schedule(tmp_path / "f.yaml")]
    for load in loaders:
        with pytest.raises(BoardlabError) as e:
            load()
        said = str(e.value)
        assert len(said.splitlines()) == 1 and ("f.yaml" in said or "pin.yaml" in said), said
        # libyaml's words ("did not find expected ...") or PyYAML's ("expected ..., but got")
        assert "line 3, column 1: " in said and "expected ',' or '}'" in said, said


@pytest.mark.parametrize("board, why", [("nosuch", "boards/nosuch.yaml: no such file"),
                                        ("sandpoint", "board sandpoint: its lab host labhost1 is not a virtual one")])
def test_vlab_up_with_a_board_the_virtual_lab_lacks_starts_nothing(capsys, monkeypatch, board, why):
    from boardlab.vlab import lab

    def started(*a, **k):
        raise AssertionError("the lab started before the board's name was checked")
    monkeypatch.setattr(lab, "management_up", started)
    code, err = _run(capsys, ["vlab", "up", "--board", board])
    assert code == 2 and len(err.splitlines()) == 1 and why in err, err


# ---- figures no verdict can use, and baselines update ---------------------------------------

NAN, INF = float("nan"), float("inf")


def _metric(kernel="armmp", suite="memory", name="free_free_kb", value=3072.0, unit="kB", **more):
    return {"board": "qemu-arm", "kernel": kernel, "suite": suite, "name": name, "value": value,
            "unit": unit, "samples": [value], "verdict": "new", "clock": "none", "host": "vm-a", **more}


def _run_of(tmp_path, name, *metrics):
    run = tmp_path / name
    run.mkdir()
    (run / "results.json").write_text(json.dumps({"meta": {"run_id": name}, "metrics": list(metrics)}))
    return run


def test_baselines_update_of_two_kernels_writes_neither_when_the_second_is_bad(tmp_path, capsys, monkeypatch):
    """Pooled over two runs, the second kernel's figures are of two settings: refused
    before the first kernel's file is written."""
    from boardlab.measure import baselines as bl
    written = []
    monkeypatch.setattr(bl, "write", lambda *a, **k: written.append(a))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: written.append(a))
    jitter = {"suite": "jitter", "name": "p99_us", "unit": "us", "value": 90.0, "clock": "guest-deterministic"}
    one = _run_of(tmp_path, "one", _metric("armmp"), _metric("rt-armmp", **jitter, settings={"run_s": 10}))
    two = _run_of(tmp_path, "two", _metric("armmp"), _metric("rt-armmp", **jitter, settings={"run_s": 60}))
    _one_line(capsys, ["baselines", "update", str(one), str(two)], "rt-armmp jitter.p99_us: the runs were "
              "measured with other settings")
    assert written == []


def test_baselines_of_two_kernels_are_read_before_either_is_written(tmp_path):
    """The second kernel's stored file is broken: the first kernel's is not written either."""
    from boardlab.measure import baselines as bl
    from boardlab.judge.results import Metric, update_baselines
    (tmp_path / "rt-armmp").mkdir()
    (tmp_path / "rt-armmp/qemu-arm.yaml").write_text("metrics: {memory.free_free_kb: {value: lots, unit: kB}}\n")
    runs = [[Metric(**_metric(kernel)) for kernel in ("armmp", "rt-armmp")]]
    with pytest.raises(bl.BaselineError, match=r"rt-armmp/qemu-arm.yaml: metrics.memory.free_free_kb.value "
                                               r"must be a number"):
        update_baselines(runs, tmp_path)
    assert not (tmp_path / "armmp").exists()


@pytest.mark.parametrize("metric, says", [
    ({"value": NAN}, "nan is no figure"),
    ({"value": INF}, "inf is no figure"),
    ({"samples": [3072, NAN, 3072]}, "nan is no figure"),
    ({"suite": "boot_time", "name": "guest_login", "unit": "s", "value": 0.0}, "0 s as a baseline"),
    ({"value": "3072"}, "'3072' is not a number"),
    ({"name": "free_kb"}, "memory.free_kb: not in the catalogue"),
    ({"unit": "MB"}, "in 'MB', the catalogue says 'kB'"),
])
def test_baselines_update_refuses_a_figure_no_verdict_can_use(tmp_path, capsys, monkeypatch, metric, says):
    from boardlab.measure import baselines as bl
    monkeypatch.setattr(bl, "write", lambda *a, **k: pytest.fail("written"))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: pytest.fail("written"))
    m = _metric(**{k: v for k, v in metric.items() if k != "samples"})
    m["samples"] = metric.get("samples", m["samples"])
    run = _run_of(tmp_path, "run", m)
    _one_line(capsys, ["baselines", "update", str(run)], f"{run}/results.json: metrics[0] ")
    _one_line(capsys, ["baselines", "update", str(run)], says)


@pytest.mark.parametrize("stored, says", [
    ("{value: .nan, unit: kB}", "metrics.memory.free_free_kb: nan is no figure"),
    ("{value: 3072, unit: kB, samples: [3072, .nan, 3072]}", "metrics.memory.free_free_kb: nan is no figure"),
    ("{value: .inf, unit: kB}", "metrics.memory.free_free_kb: inf is no figure"),
])
def test_a_stored_baseline_that_is_no_figure_is_refused(tmp_path, stored, says):
    """[3072] x 5 against [3072, nan, 3072] was 'same'; an infinite baseline made the floor
    infinite."""
    from boardlab.measure import baselines as bl
    (tmp_path / "armmp").mkdir()
    (tmp_path / "armmp/qemu-arm.yaml").write_text(f"metrics:\n  memory.free_free_kb: {stored}\n")
    with pytest.raises(bl.BaselineError) as e:
        bl.load("armmp", "qemu-arm", tmp_path)
    assert str(e.value) == f"{tmp_path}/armmp/qemu-arm.yaml: {says}" + (
        " (a measurement that failed?)"), str(e.value)


def test_a_zero_baseline_is_refused_where_the_floor_is_relative_only(tmp_path):
    """A zero baseline made the floor 0 and the interval (inf, inf) %; memory's floor is
    absolute (a page): 0 kB is a figure there."""
    from boardlab.measure import baselines as bl
    (tmp_path / "armmp").mkdir()
    path = tmp_path / "armmp/qemu-arm.yaml"
    path.write_text("metrics:\n  memory.free_buffers_kb: {value: 0, unit: kB}\n")
    assert bl.load("armmp", "qemu-arm", tmp_path)["memory.free_buffers_kb"].value == 0
    path.write_text("metrics:\n  boot_time.guest_login: {value: 0.0, unit: s, samples: [0.0, 0.0]}\n")
    with pytest.raises(bl.BaselineError, match=r"qemu-arm.yaml: metrics.boot_time.guest_login: 0 s as a "
                                               r"baseline: the floor is 1.0% of it"):
        bl.load("armmp", "qemu-arm", tmp_path)


def test_report_refuses_a_run_with_no_figure_or_no_verdict(tmp_path, capsys):
    nan = _run_of(tmp_path, "nan", _metric(value=NAN))
    no_verdict = _run_of(tmp_path, "no-verdict", {k: v for k, v in _metric().items() if k != "verdict"})
    _one_line(capsys, ["report", str(nan)],
              f"{nan}/results.json: metrics[0] memory.free_free_kb: nan is no figure")
    _one_line(capsys, ["report", str(no_verdict)], "field 'metrics[0]' lacks verdict")
    assert not list(tmp_path.rglob("report.html"))


def test_report_of_two_runs_refuses_a_zero_on_the_side_judged_against(tmp_path, capsys):
    login = {"suite": "boot_time", "name": "guest_login", "unit": "s", "clock": "guest-deterministic"}
    zero = _run_of(tmp_path, "zero", _metric(**login, value=0.0))
    some = _run_of(tmp_path, "some", _metric(**login, value=20.7))
    _one_line(capsys, ["report", str(zero), str(some), "--html", str(tmp_path / "r.html")],
              "0 s as a baseline")
    assert main(["report", str(some), str(zero), "--html", str(tmp_path / "r.html")]) == 0   # B may be 0


def test_history_submit_reads_every_run_before_it_queues_one(tmp_path, capsys):
    """A missing run, or one with a figure that is no figure after a good one: one line,
    exit 2, and no queue (nor data directory) made; --if-kept says so too, where the lab
    keeps no history (it exited 0 saying nothing)."""
    data = tmp_path / "history"
    good, nan = _run_of(tmp_path, "good", _metric()), _run_of(tmp_path, "nan", _metric(value=NAN))
    for argv, says in [(["/nonexistent"], "/nonexistent: no results.json"),
                       (["--if-kept", "/nonexistent"], "/nonexistent: no results.json"),
                       ([str(good), str(nan)], f"{nan}/results.json: metrics[0] memory.free_free_kb: nan is no figure"),
                       (["--if-kept", str(good), str(nan)], "nan is no figure")]:
        _one_line(capsys, ["history", "submit", "--data", str(data), *argv], says)
        assert not data.exists(), argv


@pytest.mark.parametrize("schedule, verb, says", [
    ("when: {nightly: {on_calendar: '*-*-* 02:15:00'}}\njobs: {a: {board: qemu-arm, when: nightly}}\n",
     "--cron", "when.nightly.cron is missing"),
    ("when: {nightly: {cron: '15 2 * * *'}}\njobs: {a: {board: qemu-arm, when: nightly}}\n",
     "--systemd", "when.nightly.on_calendar is missing"),
    ("when: {nightly: {cron: '15 2 * * *'}}\njobs: {a: board when}\n", "--cron",
     "jobs.a must be a mapping of board, when, ..., got 'board when'"),
    ("when: {nightly: {cron: '15 2 * * *'}}\njobs: {a: {board: qemu-arm, when: [nightly]}}\n", "--cron",
     "jobs.a.when is ['nightly']; defined: nightly"),
    ("when: [nightly]\njobs: {a: {board: qemu-arm, when: nightly}}\n", "--systemd",
     "'when' must be a mapping of group -> {cron, on_calendar}, got ['nightly']"),
])
def test_lava_schedule_names_a_malformed_schedule(tmp_path, capsys, schedule, verb, says):
    path = tmp_path / "schedule.yaml"
    path.write_text(schedule)
    code, err = _run(capsys, ["lava", "schedule", verb, "--schedule", str(path)])
    assert code == 2 and err == f"boardlab lava schedule: {path}: {says}", err
    assert not capsys.readouterr().out


@pytest.mark.parametrize("bad, says", [
    ({"name": "free_kb"}, "memory.free_kb: not in the catalogue"),
    ({"value": NAN}, "memory.free_free_kb: nan is no figure"),
    ({"suite": "boot_time", "name": "guest_login", "unit": "s", "value": 0.0},
     "boot_time.guest_login: 0 s as a baseline"),
])
def test_compare_of_a_bad_run_creates_nothing(tmp_path, capsys, monkeypatch, no_board, bad, says):
    """A run directory as side A whose figures cannot be judged: refused before
    results/compare-*/console/ is made."""
    good = _run_of(tmp_path, "good", _metric(**{k: v for k, v in bad.items() if k != "value"}))
    run = _run_of(tmp_path, "bad", _metric(**bad))
    monkeypatch.chdir(tmp_path)
    _one_line(capsys, ["compare", "--board", "qemu-arm", "--kernel", str(run), "--kernel", str(good)],
              f"{run}/results.json: metrics[0] {says}")
    assert not (tmp_path / "results").exists()


def test_a_run_s_own_figures_become_baselines_only_when_usable(tmp_path):
    """pytest --update-baselines pools what the run recorded: a NaN or a zero boot time
    would make a baselines file no later run could read. Refused, nothing written."""
    from boardlab.judge.results import Metric, update_baselines
    from boardlab.measure.catalogue import BadFigure
    for metric in (_metric(value=NAN), _metric(suite="boot_time", name="guest_login", unit="s", value=0.0)):
        with pytest.raises(BadFigure, match=f"qemu-arm armmp {metric['suite']}.{metric['name']}: "):
            update_baselines([[Metric(**_metric()), Metric(**metric)]], tmp_path)
        assert not list(tmp_path.iterdir())


def test_a_value_beside_no_samples_is_refused_where_a_run_is_read(tmp_path, capsys, monkeypatch):
    """samples: [] next to a value was read as [value]: `baselines update` wrote a 1-sample
    baseline over a 3-sample one (issue 'Answers without holes')."""
    from boardlab.measure import baselines as bl
    monkeypatch.setattr(bl, "write", lambda *a, **k: pytest.fail("written"))
    monkeypatch.setattr(bl, "write_all", lambda *a, **k: pytest.fail("written"))
    run = _run_of(tmp_path, "edited", _metric(samples=[]))
    for argv in (["baselines", "update", str(run)], ["report", str(run)]):
        code, err = _run(capsys, argv)
        assert code == 2 and "metrics[0] memory.free_free_kb: samples [] beside the value 3072.0" in err, (argv, err)


def test_history_submit_on_a_lab_that_keeps_no_history_queues_nothing(tmp_path, capsys):
    """It made <data>/queue, exited 1 (no submit token), and from then on every run was
    queued for ever: the lab looked as if it kept a history (issue 'Answers without holes')."""
    from boardlab.history.submit import land
    run = _run_of(tmp_path, "run", _metric())
    data = tmp_path / "history"
    code, err = _run(capsys, ["history", "submit", "--data", str(data), str(run)])
    assert code == 2 and "keeps no history" in err and "nothing queued" in err, err
    assert not data.exists()
    assert land(run, "nosuchlab-history-test") is None
