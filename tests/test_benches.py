"""The benches start: each bench/*.py (every one, found by name: a new bench is checked
without a word here) imports, and answers --help with its usage, exit 0, in a process of
its own as a person runs it, without touching the virtual lab or leaving a file behind;
and each bench's pure core (figures from given samples) runs on a tiny input. A bench
that rots (a name it imports moved, an argument it no longer parses) fails here, not on
the day someone needs its figures."""
import ast
import importlib
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
import types
from argparse import Namespace
from pathlib import Path

import pytest

from paths import ROOT

BENCHES = sorted((ROOT / "bench").glob("*.py"))


def bench(name: str):
    """bench/<name>.py as a module (bench_<name>: not a test module's name)."""
    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
    return sys.modules[key]


def test_the_benches_are_found():
    assert len(BENCHES) >= 16 and ROOT / "bench" / "soak.py" in BENCHES


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.stem)
def test_a_bench_imports(path):
    assert callable(bench(path.stem).main)


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.stem)
def test_what_a_bench_names_is_there(path):
    """What a bench reaches only once it runs is there too: each name a function imports
    (`from X import Y` anywhere in it) and each attribute it reads of a module it holds
    (`baselines.load`), which neither the import nor --help touches."""
    module, missing = bench(path.stem), []
    sys.path.insert(0, str(ROOT / "tests"))   # as the benches do for tests/kerneltree.py
    try:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level:
                source = importlib.import_module(node.module)
                missing += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names
                            if not hasattr(source, a.name)
                            and importlib.util.find_spec(f"{node.module}.{a.name}") is None]
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) \
                    and isinstance(node.value, ast.Name) \
                    and isinstance(held := getattr(module, node.value.id, None), types.ModuleType) \
                    and not hasattr(held, node.attr):
                missing.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    finally:
        sys.path.remove(str(ROOT / "tests"))
    assert missing == []


# Started first in a bench's process (sitecustomize): a process started or a connection
# opened (the virtual lab, a build, a server) ends it at once with exit 3, whatever the
# bench catches
NOTHING_TOUCHED = """
import os, sys
REFUSED = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork", "socket.connect")
def refuse(event, args):
    if event in REFUSED:
        sys.stderr.write(f"--help touched something: {event} {args!r:.300}\\n")
        sys.stderr.flush()
        os._exit(3)
sys.addaudithook(refuse)
"""


def test_every_bench_is_listed_where_a_reader_looks():
    """docs/benchmarks.md lists each bench with what it measures, so none is found only by
    reading bench/."""
    listed = (ROOT / "docs/benchmarks.md").read_text()
    assert [p.name for p in BENCHES if f"bench/{p.name}" not in listed] == []


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.stem)
def test_a_bench_answers_help_and_touches_nothing(path, tmp_path):
    """Its usage at once, as a person runs it: argparse answers before a lab, a build, a
    server or a temporary directory is touched (no process started, no connection opened;
    TMPDIR, an empty directory of the test's, still empty after)."""
    tmp, guard = tmp_path / "tmp", tmp_path / "guard"
    tmp.mkdir()
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NOTHING_TOUCHED)
    env = {**os.environ, "PYTHONPATH": f"{guard}{os.pathsep}{ROOT}", "TMPDIR": str(tmp)}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, str(path), "--help"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert r.stdout.startswith("usage: "), r.stdout[:500]
    assert list(tmp.iterdir()) == []
    assert time.monotonic() - t0 < 60


def test_the_guard_of_help_stops_a_bench_that_starts_something(tmp_path):
    """The guard above works: a would-be bench that runs a command on --help is ended."""
    (tmp_path / "guard").mkdir()
    (tmp_path / "guard" / "sitecustomize.py").write_text(NOTHING_TOUCHED)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "guard")}
    r = subprocess.run([sys.executable, "-c", "import subprocess; subprocess.run(['true']); print('ran')"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and "touched something: subprocess.Popen" in r.stderr and "ran" not in r.stdout


# ---- the pure cores --------------------------------------------------------------------

def test_soak_spread():
    line = bench("soak").spread("shell", "s", [1.0, 1.1, 1.2, 1.3])
    assert line.startswith("shell: n=4 median 1.1500 s, min 1.0000") and "max 1.3000" in line
    assert bench("soak").spread("x", "s", []) == "x: no samples"
    assert "n=1 median 2.0000" in bench("soak").spread("x", "s", [2.0])


def test_qemu_beside_build_summary():
    b = bench("qemu_beside_build")
    lines = b.summary({"alone": [3.5, 3.7], b.EVERY_CORE: [5.0, 4.0, 6.0], b.OFF_FIRST: [4.0, 4.0, 4.0]})
    assert lines[0] == "alone: median 3.60 s over 2 (3.50, 3.70)"
    assert lines[-1].endswith("median 1.250 (1.000-1.500); off the first core faster in 2 of 3 rounds")
    assert b.summary({"alone": [1.0], b.EVERY_CORE: [], b.OFF_FIRST: []}) == ["alone: median 1.00 s over 1 (1.00)"]

def test_sweep_time_figures_without_and_with_builds():
    from boardlab.kernel.sweep import Entry
    figures = bench("sweep_time").figures
    failed = {"x": Entry("x", "virt-nfs-x", status="failed", why="not a version")}
    assert "no build took time" in figures(failed, 3.0)
    done = {v: Entry(v, f"virt-nfs-{v}", status="measured", build_s=100.0, measure_s=40.0) for v in "ab"}
    line = figures(done, 260.0)
    assert line.startswith("2 kernels, wall 260 s; clean builds 200 s, measurements 80 s")
    assert "serial would be 280 s" in line and "wall / builds = 1.30" in line


def test_console_latency_lateness():
    median, p95, most = bench("console_latency").lateness_ms([0.001 * n for n in range(1, 21)])
    assert (median, p95, most) == pytest.approx((10.5, 19.0, 20.0))


def test_noise_tables(capsys):
    noise = bench("noise")
    assert noise.cv_pct([1.0, 1.0]) == 0.0 and noise.cv_pct([9.0, 11.0]) == pytest.approx(14.142, abs=1e-3)
    assert noise._keyed({"boot_time.login": 1.0, "memory.mem_eat_kb": 2}) == {
        ("boot", "login"): 1.0, ("memory", "mem_eat_kb"): 2}
    conditions = [("deterministic", False, "none"), ("realtime", False, "none")]
    samples = {c: {("boot", "guest_login"): [2.0, 2.0 + k], ("memory", "mem_eat_kb"): [90.0, 90.0]}
               for k, c in enumerate((c for c in conditions), 1)}
    noise.print_tables(conditions, samples, {c: [30.0, 32.0] for c in conditions}, 2)
    out = capsys.readouterr().out
    assert "| boot | guest_login |" in out and "| memory | mem_eat_kb | 90, 0.000 %" in out
    assert "host seconds per boot (all families): det 31 s, real 31 s" in out
    loads = [("deterministic", False, "none"), ("deterministic", False, "bursts:1")]
    samples = {c: {("boot", "guest_login"): [2.0, 2.0 + k], ("memory", "mem_eat_kb"): [90.0, 90.0]}
               for k, c in enumerate(loads)}
    noise.print_tables(loads, samples, {c: [30.0] for c in loads}, 2)
    out = capsys.readouterr().out
    assert "boot     det 0.000 %; det+bursts:1 28.284 %" in out and "det+bursts:1 30 s" in out


def _boots(rng, n, free, eat):
    return [{"memory.free_free_kb": free + rng.choice((0, 4)), "memory.mem_eat_kb": eat} for _ in range(n)]


def test_gate_detection_table_of_tiny_pools(capsys):
    rng = random.Random(1)
    pools = {"base": _boots(rng, 4, 90000, 80000), "changed": {"memory": _boots(rng, 2, 89000, 79000)},
             "families": ["memory"]}
    bench("gate_detection").table(pools, Namespace(trials=2, per_side=2, changed=2))
    out = capsys.readouterr().out
    assert "| memory | after | 0 of 2 |" in out and "| memory | before |" in out
    assert "memory.free_free_kb (target) | -1.1" in out
    assert "| memory.mem_eat_kb |" in out


def test_gate_false_alarms_runs_through_the_gate(tmp_path):
    import collections
    from boardlab.facts.board import load_board
    from boardlab.measure import baselines
    g = bench("gate_false_alarms")
    # the two-valued figure the bench is about: qemu-ppc's mem_eat as its 30 boots of
    # 2026-11-29 read it (118784 kB, 118720 on 7); its baseline of 2026-12-06 has one value
    kept = baselines.load("virt-nfs", "qemu-ppc")["memory.mem_eat_kb"]
    base = baselines.Baseline(kept.name, 118784.0, kept.unit, kept.direction, None, kept.source,
                              [118784.0] * 23 + [118720.0] * 7)
    (usual, _), (second, _) = collections.Counter(base.values()).most_common(2)
    runs = g.runs_through_the_gate(load_board("qemu-ppc"), "virt-nfs", "memory.mem_eat_kb", base,
                                   (usual, second), 2, tmp_path)
    assert runs and all(1 <= len(s) <= 2 for s in runs)
    for q in (0.0, 0.2, 1.0):
        rate = g.weighed(runs, usual, second, q)
        assert sum(v for k, v in rate.items() if k != "boots") == pytest.approx(1.0)
        assert 1 <= rate["boots"] <= 2
    assert g.weighed(runs, usual, second, 0.0)["regressed"] == 0


def test_noisy_board_rounds_through_the_gate(capsys):
    """bench/noisy_board.py's core on a tiny pool: A/A rounds of a repeating figure end
    'same' (no false alarm), a shift of twice the floor is found, each round's boots are
    counted; a host-bound figure's shift against a stored baseline stays unknown on the
    virtual board (judge rule 7) and is found when the same samples are a real board's."""
    from boardlab.facts.board import load_board
    nb = bench("noisy_board")
    board = load_board("qemu-arm-noisy")
    memory = [{"memory.free_free_kb": 90000.0, "memory.free_used_kb": 6288.0} for _ in range(12)]
    aa = nb.rounds(board, memory, "memory", 2, 5, 0)
    shifted = nb.rounds(board, memory, "memory", 2, 5, 2, seed=2)
    t = nb.tally(aa, shifted, "memory")
    assert t["alarms"] == 0 and t["aa_same"] == {"memory.free_free_kb": 2, "memory.free_used_kb": 2}
    assert t["found"] == {"memory.free_free_kb": 2, "memory.free_used_kb": 2} and t["every"] == 2
    assert t["target"] == "memory.free_free_kb" and 3 <= t["aa_boots"][0] <= t["aa_boots"][1] <= 5
    lat = [{"lmbench.lat_pipe_us": 300.0 + i % 3} for i in range(12)]   # CV 0.3 %, floor 3 %
    here = nb.rounds(board, lat, "lmbench", 1, 5, 2)
    real = nb.rounds(nb.as_real_board(board), lat, "lmbench", 1, 5, 2)
    assert here["verdicts"] == [{"lmbench.lat_pipe_us": "unknown"}]
    assert real["verdicts"] == [{"lmbench.lat_pipe_us": "regressed"}]
    assert nb.rounds(board, lat[:6], "lmbench", 1, 5, 0)["verdicts"] == []   # no baseline left
    paired = nb.paired_rounds(board, lat, "lmbench", 1, 6, 2)          # as compare: rule 7 is met
    assert paired["verdicts"] == [{"lmbench.lat_pipe_us": "regressed"}] and paired["boots"] == [10]
    assert nb.paired_rounds(board, lat, "lmbench", 1, 6, 0)["verdicts"] == [{"lmbench.lat_pipe_us": "same"}]
    assert nb.paired_rounds(board, lat[:8], "lmbench", 1, 6, 0)["verdicts"] == []   # under 5 rounds a side
    data = {"board": board.name, "clock": "realtime", "host": "h", "date": "d", "jitter_s": 10,
            "boots": [{"families": ["memory"], "clock": "realtime", "host_s": 6.0, "figures": f} for f in memory]}
    nb.describe(data, board)
    results = nb.judge_all(board, data, 1, 5, ["memory"])
    lines = nb.table(results, data, 1, 5) + nb.spread_table(data, ["memory"])
    assert "| this board | memory | 12 | 0 of 1 |" in "\n".join(lines)
    assert "| memory.free_free_kb | 12 | 90000 | 90000 - 90000 | 0.00 % |" in lines
    assert "guest-realtime" in lines[0] and "12 of boot_time and memory" in lines[0]
    # which metric made an A/A false alarm, per way
    aa = {"keys": ["memory.free_free_kb", "memory.free_used_kb"], "boots": [3, 3],
          "verdicts": [{"memory.free_free_kb": "improved", "memory.free_used_kb": "same"},
                       {"memory.free_free_kb": "same", "memory.free_used_kb": "same"}]}
    t = nb.tally(aa, shifted, "memory")
    assert t["alarms"] == 1 and t["aa_alarms"] == {"memory.free_free_kb": 1, "memory.free_used_kb": 0}
    rows = nb.table({nb.WAYS[0]: {"memory": t | {"pool": 12}}}, data, 2, 5)
    assert "| memory.free_free_kb | 2 | 1 | 1 |" in rows and "| memory.free_used_kb | 2 | 2 | 0 |" in rows


def test_history_detection_series():
    h = bench("history_detection")
    flat = h.series(random.Random(1), 0.0, 0.0, 3)
    stepped = h.series(random.Random(1), 0.0, 0.05, 3)
    assert len(flat) == h.BUILDS and set(flat) == {100.0}
    assert stepped[:h.STEP_AT] == flat[:h.STEP_AT]
    assert stepped[h.STEP_AT:] == pytest.approx([105.0] * (h.BUILDS - h.STEP_AT))


def test_initcall_detection_judges_a_slowed_initcall():
    from boardlab.measure import phases
    ic = bench("initcall_detection")
    spans = phases.from_kernel_log((ROOT / "tests/data/phases/qemu-arm-virtio-sleep-parent.kmsg")
                                   .read_text().splitlines())
    a = phases.durations(spans)
    b = {**a, ic.TARGET: a[ic.TARGET] + 0.002}
    w = ic.judge([a], [b], phases.sources(spans))
    assert [r.key for r in w.changed] == [ic.TARGET]
    assert w.changed[0].cmp.outcome == "regressed" and w.changed[0].delta_s == pytest.approx(0.002)
    assert not ic.judge([a], [a], phases.sources(spans)).changed


def _run(path: Path, metrics: list[dict]) -> Path:
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps({"metrics": metrics}))
    return path


def test_first_run_compares_two_runs_metric_for_metric(tmp_path, capsys):
    fr = bench("first_run")
    m = {"board": "qemu-arm", "kernel": "armmp", "suite": "memory"}
    before = _run(tmp_path / "before", [{**m, "name": "a_kb", "verdict": "same", "value": 1},
                                        {**m, "name": "b_kb", "verdict": "same", "value": 2},
                                        {**m, "suite": "build", "name": "real_s", "verdict": "info",
                                         "value": 300.5}])
    after = _run(tmp_path / "after", [{**m, "name": "a_kb", "verdict": "regressed", "value": 9},
                                      {**m, "name": "c_kb", "verdict": "same", "value": 3}])
    assert fr.against(before, after) == 3   # a regressed, b and real_s gone
    out = capsys.readouterr().out
    assert "| qemu-arm armmp memory.a_kb | same 1 | regressed 9 | WORSE |" in out
    assert "only after: ['qemu-arm armmp memory.c_kb']" in out
    assert fr.clean_build_s(before) == 300.5 and fr.clean_build_s(after) is None
    assert fr.clean_build_s(tmp_path / "nowhere") is None


def test_main_job_aa_windows_from_saved_rounds(tmp_path, capsys):
    rng = random.Random(1)
    for i in range(4):
        _run(tmp_path / f"round-{i + 1:02d}", [{"suite": "jitter", "name": "max_us", "settings": {"run_s": 60},
                                               "samples": [rng.choice((40, 41, 43)) for _ in range(3)]}])
    bench("main_job_aa").windows(tmp_path, trials=3)
    out = capsys.readouterr().out
    assert "jitter.max_us from 12 maxima of 60 s runs (40-43 us" in out
    rows = [ln for ln in out.splitlines() if ln.startswith("| ") and " s | " in ln]
    assert [r.split(" | ")[0] for r in rows] == ["| 60 s", "| 180 s", "| 360 s", "| 720 s"]
    assert all(" of 3 | " in r for r in rows)


def test_parallel_counts_tftp_timeouts_and_prints_stalls(tmp_path, capsys):
    p = bench("parallel")
    log = tmp_path / "job" / "console" / "boot-1.log"
    log.parent.mkdir(parents=True)
    log.write_text("0.1 | => tftpboot 0x1000000 a.uImage\n0.2 | Loading: ####T###\n"
                   "0.3 |          ##T#T\n0.4 | done\n0.5 | Bytes transferred = 5 (5 hex)\n"
                   "0.6 | Loading: #####\n0.7 | Starting kernel ... Tftp T\n")
    assert p.tftp_timeouts(tmp_path) == (2, 3)
    counts = {"client": {"rounds": 2, "jobs": 4, "stall": 1, "failed": 0, "transfers": 8, "T": 2}}
    p.print_stalls(counts, {"id": "host-1"})
    out = capsys.readouterr().out
    assert "host host-1" in out and "client (5 s)" in out and out.rstrip().endswith("0.250")


def test_shared_board_counts_collisions():
    sb = bench("shared_board")
    t = time.mktime(time.strptime("2026-11-26 10:31:00", "%Y-%m-%d %H:%M:%S"))
    job = tuple(time.strftime("%Y%m%dT%H:%M:%S", time.gmtime(t + s)) for s in (100, 200))   # LAVA's, UTC
    rounds = [{"hold": (t, t + 50), "run": job}]
    assert sb.collisions(rounds, [(t + 10, sb.PERSON), (t + 150, sb.LAVA_SIDE)]) == 0
    assert sb.collisions(rounds, [(t + 25, sb.LAVA_SIDE), (t + 150, sb.PERSON), (t + 300, sb.PERSON)]) == 2


def test_critical_path_against_the_main_job():
    cp = bench("critical_path")
    alone = {"set-up": 2.0, "images": 18.0, "build": 240.0, "suites": 400.0}
    assert cp.critical_path(alone) == (420.0, "suites")
    assert cp.critical_path({**alone, "build": 500.0}) == (520.0, "build")
    host = {"id": "host-1", "cpus": 2}
    out = cp.report(alone, 441.0, {"set-up": 3.0, "build": 300.0}, {"images": "cached"}, host)
    assert out.startswith("host host-1 (2 cores), host clock")
    assert "| images | 18.0 | - | cached |" in out and "| build | 240.0 | 300.0 |  |" in out
    assert "= 2.0 + 18.0 + max(240.0, 400.0) = 420.0 s (the longer: suites)" in out
    assert "beyond it: +21.0 s" in out and "1.05 x (goal <= 1.1 x: met)" in out
    assert "1.12 x (goal <= 1.1 x: NOT met)" in cp.report(alone, 470.0, {}, {}, host)
    # 760 CPU-s of build and 440 of suites over 2 cores: at least 620 s; 1.1 x 420 leaves 442 s: 2.7 cores
    least, cores = cp.cpu_bound(alone, {"build": 760.0, "suites": 440.0}, 2)
    assert least == 620.0 and round(cores, 2) == 2.71
    out = cp.report(alone, 700.0, {}, {}, host, {"build": 760.0, "suites": 440.0})
    assert "at least 620.0 s here (1.48 x the critical path); within 1.1 x it needs 2.7 cores " \
           "(out of reach on this host)" in out
    assert "this host has them" in cp.report(alone, 700.0, {}, {}, {**host, "cpus": 4}, {"build": 760.0, "suites": 440.0})


def test_critical_path_rounds_turn_the_order_and_give_the_median():
    cp = bench("critical_path")
    assert [cp.round_order(i) for i in range(3)] == ["parts, then main job", "main job, then parts",
                                                     "parts, then main job"]
    alone = {"set-up": 2.0, "images": 18.0, "build": 240.0, "suites": 400.0}   # critical path 420 s
    in_main = {"suites": 410.0, "build": 430.0, "build suite": 12.5}
    out = cp.rounds_summary([(alone, 441.0, in_main), ({**alone, "suites": 480.0}, 550.0, {}), (alone, 504.0, in_main)])
    assert "| 2 | main job, then parts | 2.0 | 18.0 | 240.0 | 480.0 | 500.0 | 550.0 | 1.10 x | - | - | - |" in out
    assert "| 504.0 | 1.20 x | 410.0 | 430.0 | 12.5 |" in out
    assert "over 3 rounds: median 1.10 x (1.05-1.20); within 1.1 x in 2 of 3 (goal: met by the median)" in out
    assert "NOT met by the median" in cp.rounds_summary([(alone, 504.0, {})])


def test_critical_path_reads_the_main_jobs_run_and_the_parts_logs(tmp_path):
    cp = bench("critical_path")
    (tmp_path / "steps.tsv").write_text("set-up (apt, venv)\t3\nlab up (services)\t4\n"
                                        "lab up: images of qemu-arm\t2\nsuites\t480\nreport\t1\n")
    (tmp_path / "results.json").write_text(json.dumps({"metrics": [], "meta": {"build_alongside_s": 410.5}}))
    (tmp_path / "junit.xml").write_text(
        '<testsuite><testcase classname="testsuites.test_jitter" name="a" time="300"/>'
        '<testcase classname="testsuites.test_memory" name="b" time="2.5"/>'
        '<testcase classname="testsuites.test_build" name="c" time="60"/></testsuite>')
    parts, rest = cp.in_main_job(tmp_path, "qemu-arm")
    assert parts == {"set-up": 3.0, "images": 2.0, "build": 410.5, "suites": 302.5, "build suite": 60.0}
    assert "lab up (services) 4.0 s" in rest and "build suite's tests 60.0 s" in rest
    assert cp.in_main_job(tmp_path / "nowhere", "qemu-arm")[0] == dict.fromkeys((*cp.PARTS, "build suite"))
    assert cp.setup_note("setup: host ready for the main job (31 packages)\n").startswith("already installed")
    assert "installing: qemu" in cp.setup_note("setup: installing: qemu-system-arm\nsetup: host ready\n")
    assert cp.images_note("images for qemu-arm are up to date (/x)", False).startswith("cached")
    assert "cold" in cp.images_note("building images for qemu-arm into /x", True)
    cmd = cp.pytest_cmd("qemu-arm", tmp_path)
    assert cmd[-1] == "--ignore=testsuites/test_build.py" and "--quick" in cmd and "testsuites/" in cmd
    assert "--quick" not in cp.pytest_cmd("qemu-arm", tmp_path, full=True)


def test_chaos_counts_overlaps_from_a_power_log_and_the_holds():
    ch = bench("chaos")
    t = time.mktime(time.strptime("2026-12-01 23:59:50", "%Y-%m-%d %H:%M:%S"))
    log = ('23:59:50 10.231.0.11 "PUT /outlet/1/value HTTP/1.1" 200 -\n'
           '23:59:55 10.231.0.1 "GET /outlet/1/value HTTP/1.1" 200 -\n'   # a read: no power action
           '23:59:58 10.231.0.1 "PUT /outlet/1/value HTTP/1.1" 200 -\n'
           '00:00:05 10.231.0.11 "PUT /outlet/1/value HTTP/1.1" 200 -\n'   # after midnight: the next day
           '00:00:09 10.231.0.11 "PUT /outlet/2/value HTTP/1.1" 200 -\n')
    requests = ch.power_requests(log, {1: "qemu-arm"}, t)
    assert requests == [(t, "10.231.0.11", "qemu-arm"), (t + 8, "10.231.0.1", "qemu-arm"),
                        (t + 15, "10.231.0.11", "qemu-arm"), (t + 19, "10.231.0.11", "outlet 2")]
    sources = {"10.231.0.11": "lava", "10.231.0.1": "person"}
    alice = [("qemu-arm", t + 5, t + 12)]                    # her hold: her own two requests in it
    job = [("qemu-arm", t - 30, t + 3), ("qemu-ppc", t, t + 60)]
    assert ch.overlaps(requests, alice, job, sources) == []
    # LAVA's worker inside alice's hold, and alice inside a LAVA job, each counted; the edges' second is not
    late_job = job + [("qemu-arm", t + 6, t + 10)]
    assert ch.overlaps(requests, [("qemu-arm", t + 10, t + 20)], late_job, sources) == [
        (t + 8, "10.231.0.1", "qemu-arm"), (t + 15, "10.231.0.11", "qemu-arm")]
    assert ch.overlaps(requests, [("qemu-arm", t + 14, t + 16)], [], sources, margin=0.5) == [
        (t + 15, "10.231.0.11", "qemu-arm")]
    assert ch.overlaps(requests, [("qemu-arm", t + 14.5, t + 16)], [], sources) == []
    assert ch.overlaps(requests, alice, job, {}) == []       # a source of neither side


def _view(holder, health, job=None, reservation=None):
    return {"holder": holder, "health": health, "job": job, "reservation": reservation}


def test_chaos_says_when_boards_are_usable_again_and_which_are_wedged():
    ch, lava = bench("chaos"), "lava-arbiter/lava"
    assert ch.usable(_view(lava, "Good")) and ch.usable(_view(lava, "Unknown", job=7))
    assert ch.usable(_view(lava, "Maintenance", job=7))             # set aside while its job ends
    assert ch.usable(_view("dev/alice", "Maintenance"))            # a person's, LAVA starts nothing
    assert ch.usable(_view(None, "Maintenance", reservation="tok"))  # released to a reservation
    assert not ch.usable(_view(None, "Good"))                      # nobody holds it: not re-taken
    assert not ch.usable(_view("dev/alice", "Good"))               # LAVA could start a job on it
    assert not ch.usable(_view("dev/alice", "Maintenance", job=7))  # an overlap
    assert not ch.usable(_view(lava, "Bad")) and not ch.usable(None)
    assert not ch.usable(_view(lava, "Maintenance"))   # LAVA's, idle, nobody wants it: wedged
    assert ch.usable(_view(lava, "Maintenance", reservation="waiting"))   # on its way to who waits
    end = 1000.0
    samples = [(990.0, {"a": _view(lava, "Good")}), (1001.0, None), (1003.0, {"a": _view(None, "Good")}),
               (1009.0, {"a": _view(lava, "Good")}), (1020.0, {"a": _view(lava, "Good")})]
    assert ch.recovery(end, samples, {995.0, 1004.0, 1008.0}) == (9.0, [])
    # rounds every 0.5 s: 6 s unusable is longer than two rounds (2 x 0.5 s + the looks' 4 s), said with its state
    assert ch.recovery(end, samples, {1001.0, 1001.5}) == (9.0, ["a (health Good, 6 s)"])
    # rounds every 5 s: given back within two of them, a transient, not a wedge
    assert ch.recovery(end, samples, {1000.0, 1005.0, 1010.0}) == (9.0, [])
    # never usable again: wedged once longer than two rounds, whatever came after
    stuck = samples[:3] + [(1030.0, {"a": _view(lava, "Maintenance")})]
    assert ch.recovery(end, stuck, {1000.0, 1005.0, 1010.0}) == (None, ["a (holder lava-arbiter/lava, health Maintenance, 27 s)"])
    assert ch.recovery(end, samples[:3], set()) == (None, [])   # 0 s unusable so far: not yet wedged
    assert ch.recovery(end, samples[:2], {1001.5, 1001.6}) == (None, ["(no answer)"])


def test_the_a_a_bench_counts_a_family_s_rounds_with_a_false_verdict_once_each():
    aa = bench("main_job_aa")
    rounds_of = {"lmbench.lat_pipe_us": {0: "same", 1: "regressed", 2: "same"},
                 "lmbench.bw_tcp_mb_s": {0: "same", 1: "improved", 2: "unknown"},
                 "jitter.max_us": {0: "unknown", 1: "unknown", 2: "unknown"}}
    assert aa.rounds_with(rounds_of, "lmbench", ("regressed", "improved")) == 1   # round 1, two metrics
    assert aa.rounds_with(rounds_of, "lmbench", ("unknown",)) == 1
    assert aa.rounds_with(rounds_of, "jitter", ("regressed", "improved")) == 0
    assert aa.rounds_with(rounds_of, "jitter", ("unknown",)) == 3


def test_the_nightly_bench_names_the_culprit_by_the_metric():
    nl = bench("nightly_loop")
    assert nl.culprit_of("boot_time.guest_login") == "boot"
    assert nl.culprit_of("lmbench.lat_syscall_null_us") == "syscall"
    assert nl.culprit_of("build.vmlinux_dec_bytes") == "size"
    with pytest.raises(SystemExit, match="none of the test tree's commits moves it"):
        nl.culprit_of("jitter.max_us")
