"""Each measurement defined once (boardlab.measure.workloads): the suites, measure.py and the
LAVA jobs take it from there; the LAVA test definitions' shell is held to it here, so a
setting changed on one side fails this test instead of drifting."""
import re
import shlex

import yaml

from boardlab import lava
from boardlab.facts.board import load_board
from boardlab.measure import catalogue, families, workloads
from boardlab.measure.families import jitter, lmbench, lmbench_output
from paths import ROOT
from testdefs import LocalShell, captured_programs, lava_figures, stub_commands

TESTDEFS = ROOT / "jobs" / "testdefs"
DATA = ROOT / "tests" / "data"


def _cyclictest_options(cmd: str) -> dict:
    words = shlex.split(cmd)
    opts, i = {}, 1
    while i < len(words):
        w = words[i]
        if w in ("-p", "-i", "-l", "-h"):
            opts[w] = words[i + 1]
            i += 2
            continue
        if w in ("-m", "-v", "-q"):
            opts[w] = True
        i += 1
    return opts


def test_lmbench_quick_mode_is_the_same_in_the_suite_and_in_lava():
    runs = (TESTDEFS / "lmbench" / "runs.sh").read_text()   # the runs of both (target_load)
    m = re.search(r'\[ "\$QUICK" = true \] && export (.+)', runs)
    assert m, "runs.sh sets no quick-mode environment"
    exported = dict(kv.split("=", 1) for kv in m.group(1).split())
    assert exported == lmbench.QUICK
    assert lmbench.quick_env(True) == "ENOUGH=100000 TIMING_O=0 LOOP_O=0 "
    assert lmbench.quick_env(False) == ""
    for sh in (runs, (TESTDEFS / "lmbench" / "lmbench.sh").read_text()):
        assert f"under {workloads.SMALL_BOARD_MB} MB" in sh


def test_cyclictest_runs_with_the_same_settings_in_the_suite_and_in_lava():
    """The jitter suite's command and the LAVA job's: priority, interval and loops alike,
    for the same duration, every cycle's latency printed (-v), and the same range for the
    histogram made from them."""
    sh = (TESTDEFS / "jitter" / "jitter.sh").read_text()
    line = next(ln for ln in sh.splitlines() if ln.startswith("cyclictest "))
    job = lava.render_job(load_board("qemu-arm"), suites=["jitter"], testdefs_url="file:///x.tgz",
                          jitter_duration=7)
    params = next(a["test"]["definitions"][0]["parameters"] for a in job["actions"] if "test" in a)
    env = {"INTERVAL": params["INTERVAL"], "HISTOGRAM": params["HISTOGRAM"],
           "loops": str(int(params["DURATION"]) * 1_000_000 // int(params["INTERVAL"]))}
    lava_cmd = re.sub(r'"\$(\w+)"', lambda m: env[m.group(1)], line)
    suite_cmd = workloads.cyclictest(7, "--json=/tmp/cyc.json")
    assert _cyclictest_options(lava_cmd) == _cyclictest_options(suite_cmd) == {
        "-m": True, "-v": True, "-p": "80", "-i": "1001", "-l": "6993"}
    defaults = yaml.safe_load((TESTDEFS / "jitter" / "jitter.yaml").read_text())["params"]
    assert (defaults["INTERVAL"], defaults["HISTOGRAM"]) == (
        str(workloads.CYCLICTEST_INTERVAL_US), str(workloads.CYCLICTEST_HISTOGRAM_US))


def test_the_suite_and_lava_reduce_a_runs_cycles_to_the_same_figures(tmp_path):
    """One run's per-cycle lines, captured on the board under the load: the suite's figures
    (cyclictest's own min/avg/max, the histogram from the board's reduction) and those the
    LAVA definition reports from the same lines are the same."""
    from test_parsers import reduce_cycles
    captured = DATA / "captured" / "armmp.cyclictest-verbose.txt"
    values = [int(ln.split(":")[2]) for ln in captured.read_text().splitlines() if ln.count(":") == 2]
    r = reduce_cycles(captured.read_text())
    thread = {"min": min(values), "max": max(values), "avg": round(sum(values) / len(values), 2),
              "histogram": r["histogram"], "overflows": r["overflows"]}   # as cyclictest's JSON has them
    suite = {k.split(".", 1)[1]: v for k, v in jitter.figures(thread).items()}
    lava = lava_figures(tmp_path, "jitter", {"cyclictest": f"cat {captured}"}, DURATION="1",
                        INTERVAL="1001", HISTOGRAM=str(workloads.CYCLICTEST_HISTOGRAM_US))
    assert lava == suite


def test_a_small_board_skips_the_same_runs_everywhere():
    tqm = load_board("tqm860l")
    assert workloads.small_board(tqm.ram_mb) and not workloads.small_board(load_board("qemu-arm").ram_mb)
    job = lava.render_job(tqm, "2.4.25", suites=["lmbench"], testdefs_url="file:///x.tgz")
    params = next(a["test"]["definitions"][0]["parameters"] for a in job["actions"] if "test" in a)
    assert params["SMALL"] == "true"


def test_no_copy_of_a_workload_setting_is_left():
    """The settings live in boardlab/measure/workloads.py (lmbench's quick mode in its
    family's module); a second literal copy in Python is drift waiting to happen."""
    for path in [*(ROOT / "boardlab").rglob("*.py"), *(ROOT / "testsuites").rglob("*.py"),
                 ROOT / "tests" / "data" / "capture.py"]:
        if path.name == "workloads.py":
            continue
        text = path.read_text()
        assert "ENOUGH=100000" not in text, path
        assert not re.search(r"cyclictest -m", text), path
        assert not re.search(r"SMALL_BOARD_MB\s*=", text), path


def _pytest_side(tmp_path, monkeypatch, scripts: dict):
    """The pytest side's lmbench runner on a 'board' that is this host's sh with the
    programs stubbed: runs.sh written by the same install lines as to a board."""
    from boardlab.measure import target_load
    monkeypatch.setitem(target_load.ON_BOARD, "lmbench/runs.sh", str(tmp_path / "boardlab-lmbench.sh"))
    return LocalShell(stub_commands(tmp_path / "pytest-side", scripts))


def _captured_programs() -> dict:
    """Every lmbench program prints what it printed on the virtual board (testdefs)."""
    return captured_programs()


def test_the_suite_and_lava_run_lmbench_by_one_script_to_the_same_figures(tmp_path, monkeypatch):
    """runs.sh is lmbench's sequence for both: the pytest side writes it to the board and
    parses what it prints, LAVA's lmbench.sh sources it; on the board's captured output
    both give the same figures, every one of the catalogue's."""
    (tmp_path / "pytest-side").mkdir()
    shell = _pytest_side(tmp_path, monkeypatch, _captured_programs())
    suite = {k.split(".", 1)[1]: v for k, v in lmbench.measure_groups(shell).items()}
    assert suite["lat_syscall_null_us"] == 13.2252 and suite["lat_connect_us"] == 2497.3171
    assert suite["lat_ctx_16k_2p_us"] == 64.5 and suite["bw_tcp_mb_s"] == 110.27
    assert suite["lat_fs_create_0k_per_s"] == 4959 and suite["lat_mmap_1m_us"] == 612
    assert {f"lmbench.{n}" for n in suite} == {k for k in catalogue.METRICS if k.startswith("lmbench.")}
    assert lava_figures(tmp_path, "lmbench", _captured_programs()) == suite
    assert set(lmbench.group("connect", lmbench.runner(shell))) == {"lmbench.lat_connect_us"}


def test_a_bisect_of_one_latency_runs_that_latency_alone(tmp_path, monkeypatch):
    """A bisect narrows lmbench to the smallest run of its one figure (the record's
    group_of): a latency alone, the same command as in its group, and the same figure;
    two latencies of one bisect are two runs, so it runs the whole family."""
    (tmp_path / "pytest-side").mkdir()
    shell = _pytest_side(tmp_path, monkeypatch, _captured_programs())
    whole = lmbench.measure_groups(shell)
    record = families.get("lmbench")
    for metric in ("lmbench.lat_syscall_null_us", "lmbench.lat_mmap_1m_us", "lmbench.lat_pagefault_us"):
        assert record.group_of(metric) == "latency:" + metric.split(".")[1]
        assert lmbench.measure(shell, None, metric=metric) == {metric: whole[metric]}
    assert record.group_of("lmbench.lat_ctx_16k_4p_us") == "context_switch"
    # several figures (a health check's, a bisect's): the runs of each, and only theirs
    two = ["lmbench.lat_syscall_null_us", "lmbench.lat_pipe_us"]
    assert lmbench.measure(shell, None, metric=two) == {m: whole[m] for m in two}


def test_a_small_board_leaves_the_large_groups_out_in_the_suite_and_in_lava(tmp_path, monkeypatch):
    (tmp_path / "pytest-side").mkdir()
    shell = _pytest_side(tmp_path, monkeypatch, _captured_programs())
    got = lmbench.measure_groups(shell, small=True)
    assert {lmbench_output.group_of(k) for k in got} == {"latencies", "connect", "file_create_delete"}
    assert set(lava_figures(tmp_path, "lmbench", _captured_programs(), SMALL="true")) == \
        {k.split(".", 1)[1] for k in got}


def test_every_lmbench_command_of_a_group_runs_in_the_mode_asked_for(tmp_path, monkeypatch):
    """A served program's client and the command after a `dd` run in quick mode too, and
    the mode leaves the line."""
    quick = "ENOUGH=100000 TIMING_O=0 LOOP_O=0"
    (tmp_path / "pytest-side").mkdir()
    shell = _pytest_side(tmp_path, monkeypatch, {p: f'[ "$1" = -S ] || echo "{p} ENOUGH=$ENOUGH '
                                                   'TIMING_O=$TIMING_O LOOP_O=$LOOP_O"'
                                                for p in ("bw_tcp", "lat_pagefault", "bw_file_rd")})
    out = lmbench.runner(shell, quick=True)("tcp_bandwidth", "bandwidth").splitlines()
    assert [ln for ln in out if ln.startswith("bw_")] == [f"bw_tcp {quick}"] * 10 + [f"bw_file_rd {quick}"]
    assert shell.run('echo "after ENOUGH=$ENOUGH"')[0] == ["after ENOUGH="]
    slow = lmbench.runner(shell, quick=False)("latencies").splitlines()
    assert [ln for ln in slow if ln.startswith("lat_")] == ["lat_pagefault ENOUGH= TIMING_O= LOOP_O="]


def _ctx_output(two_p_16k: float) -> str:
    """lat_ctx -s 16's output (on stderr, as lmbench prints it) with the 2-process figure given."""
    return f'\n"size=16k ovr=177.6\n2 {two_p_16k}\n4 72.08\n8 74.69\n16 77.62\n'


def test_the_16k_ring_is_the_median_of_3_invocations_in_the_suite_and_in_lava(tmp_path, monkeypatch):
    """One invocation in about 5 draws lat_ctx_16k_2p's second value: the suite and the LAVA
    job both report the middle of 3 invocations, so one high draw is passed by."""
    for i, v in enumerate([70.41, 68.3, 68.35], 1):
        (tmp_path / f"ctx.{i}").write_text(_ctx_output(v))
    counted = (f'[ "$2" = 16 ] || {{ printf \'"size=%sk ovr=1\\n2 1\\n4 1\\n8 1\\n16 1\\n\' "$2" >&2; exit 0; }}\nn=$(($(cat {tmp_path}/n 2>/dev/null || echo 0) + 1))\n'
               f'echo $n > {tmp_path}/n; cat {tmp_path}/ctx.$n >&2')
    reported = lava_figures(tmp_path, "lmbench", {**_captured_programs(), "lat_ctx": counted})
    assert (tmp_path / "n").read_text().strip() == "3"
    assert reported["lat_ctx_16k_2p_us"] == 68.35 and reported["lat_ctx_16k_4p_us"] == 72.08
    (tmp_path / "n").unlink()
    (tmp_path / "pytest-side").mkdir()
    shell = _pytest_side(tmp_path, monkeypatch, {"lat_ctx": counted})
    got = lmbench.group("context_switch", lmbench.runner(shell))
    assert (tmp_path / "n").read_text().strip() == "3"
    assert got["lmbench.lat_ctx_16k_2p_us"] == 68.35 and got["lmbench.lat_ctx_16k_4p_us"] == 72.08
