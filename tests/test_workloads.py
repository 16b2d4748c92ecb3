"""Each measurement defined once (boardlab.measure.workloads): the suites, measure.py and the
LAVA jobs take it from there; the LAVA test definitions' shell is held to it here, so a
setting changed on one side fails this test instead of drifting."""
import re
import shlex

import yaml

from boardlab import lava
from boardlab.facts.board import load_board
from boardlab.measure import sample, workloads
from paths import ROOT
from testdefs import run_testdef

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
    sh = (TESTDEFS / "lmbench" / "lmbench.sh").read_text()
    m = re.search(r'\[ "\$QUICK" = true \] && export (.+)', sh)
    assert m, "lmbench.sh sets no quick-mode environment"
    exported = dict(kv.split("=", 1) for kv in m.group(1).split())
    assert exported == workloads.LMBENCH_QUICK
    assert workloads.lmbench_env(True) == "ENOUGH=100000 TIMING_O=0 LOOP_O=0 "
    assert workloads.lmbench_env(False) == ""
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
    suite = {k.split(".", 1)[1]: v for k, v in sample.jitter_figures(thread).items()}
    reported = run_testdef(tmp_path, "jitter", {"cyclictest": f"cat {captured}"}, DURATION="1",
                           INTERVAL="1001", HISTOGRAM=str(workloads.CYCLICTEST_HISTOGRAM_US))
    assert {name: float(v) for name, v in reported} == suite


def test_a_small_board_skips_the_same_runs_everywhere():
    tqm = load_board("tqm860l")
    assert workloads.small_board(tqm.ram_mb) and not workloads.small_board(load_board("qemu-arm").ram_mb)
    job = lava.render_job(tqm, "2.4.25", suites=["lmbench"], testdefs_url="file:///x.tgz")
    params = next(a["test"]["definitions"][0]["parameters"] for a in job["actions"] if "test" in a)
    assert params["SMALL"] == "true"


def test_no_copy_of_a_workload_setting_is_left():
    """The settings live in boardlab/measure/workloads.py; a second literal copy in Python is
    drift waiting to happen."""
    for path in [*(ROOT / "boardlab").rglob("*.py"), *(ROOT / "testsuites").rglob("*.py"),
                 ROOT / "tests" / "data" / "capture.py"]:
        if path.name == "workloads.py":
            continue
        text = path.read_text()
        assert "ENOUGH=100000" not in text, path
        assert not re.search(r"cyclictest -m", text), path
        assert not re.search(r"SMALL_BOARD_MB\s*=", text), path


class _LocalShell:
    """Runs the board's shell lines in this host's sh, lmbench's programs stubbed to print
    the timing variables they would run with."""
    STUBS = "".join(f'{p}() {{ echo "{p} ENOUGH=$ENOUGH TIMING_O=$TIMING_O LOOP_O=$LOOP_O"; }}; '
                    for p in ("bw_tcp", "lat_connect", "lat_pagefault", "bw_file_rd"))

    def run(self, cmd, timeout=None):
        import subprocess
        r = subprocess.run(["sh", "-c", self.STUBS + cmd + '; echo "after ENOUGH=$ENOUGH"'],
                           capture_output=True, text=True)
        return r.stdout.splitlines(), [], r.returncode


def test_every_lmbench_command_of_a_line_runs_in_the_mode_asked_for():
    """A served program's client and the command after a `dd` run in quick mode too (a
    prefix reached only the line's first command), and the mode leaves the line."""
    from boardlab.measure import sample
    quick = "ENOUGH=100000 TIMING_O=0 LOOP_O=0"
    lm = sample.lmbench_runner(_LocalShell(), quick=True)
    out = lm("bw_tcp -s; sleep 0; bw_tcp -m 65536 127.0.0.1; bw_tcp -S 127.0.0.1").splitlines()
    assert out == [f"bw_tcp {quick}"] * 3 + ["after ENOUGH="]
    out = lm("dd if=/dev/zero of=/dev/null count=1 2>/dev/null; lat_pagefault /tmp/f").splitlines()
    assert out == [f"lat_pagefault {quick}", "after ENOUGH="]
    slow = sample.lmbench_runner(_LocalShell(), quick=False)
    assert slow("lat_connect 127.0.0.1").splitlines() == [
        "lat_connect ENOUGH= TIMING_O= LOOP_O=", "after ENOUGH="]


def _ctx_output(two_p_16k: float) -> str:
    """lat_ctx -s 16's output (on stderr, as lmbench prints it) with the 2-process figure given."""
    return f'\n"size=16k ovr=177.6\n2 {two_p_16k}\n4 72.08\n8 74.69\n16 77.62\n'


def test_the_16k_ring_is_the_median_of_3_invocations_in_the_suite_and_in_lava(tmp_path):
    """One invocation in about 5 draws lat_ctx_16k_2p's second value: the suite and the LAVA
    job both report the middle of 3 invocations, so one high draw is passed by."""
    draws = [70.41, 68.3, 68.35]
    calls = iter(draws)
    got = sample.lmbench_group("context_switch", lambda cmd: (
        _ctx_output(next(calls)) if "-s 16" in cmd else _ctx_output(1.0).replace("16k", cmd.split()[2] + "k")))
    assert got["lmbench.lat_ctx_16k_2p_us"] == 68.35 and got["lmbench.lat_ctx_16k_4p_us"] == 72.08

    for i, v in enumerate(draws, 1):
        (tmp_path / f"ctx.{i}").write_text(_ctx_output(v))
    counted = (f'[ "$2" = 16 ] || exit 0\nn=$(($(cat {tmp_path}/n 2>/dev/null || echo 0) + 1))\n'
               f'echo $n > {tmp_path}/n; cat {tmp_path}/ctx.$n >&2')
    reported = dict(run_testdef(tmp_path, "lmbench", {"lat_ctx": counted}))
    assert (tmp_path / "n").read_text().strip() == "3"
    assert float(reported["lat_ctx_16k_2p_us"]) == 68.35 and float(reported["lat_ctx_16k_4p_us"]) == 72.08
