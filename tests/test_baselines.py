"""Baselines with their samples, the verdict of a run against them (boardlab.judge.verdict),
the results file and the study-style report."""
import json

import pytest
import yaml

from boardlab.measure import baselines as bl
from boardlab.judge import reference
from boardlab.pages import report
from boardlab.judge import verdict as vd
from boardlab.judge.results import RunResults
from boardlab.measure import catalogue
from boardlab.measure import clocks
from paths import ROOT


def write_baseline(root, kernel, board, metrics):
    (root / kernel).mkdir(parents=True, exist_ok=True)
    (root / kernel / f"{board}.yaml").write_text(yaml.safe_dump({"metrics": metrics}))


def test_a_noisy_metric_is_judged_by_its_samples():
    """Host-arrival login time: an unlucky rerun inside the spread is not a regression,
    five boots all 20 % later are."""
    b = bl.Baseline("boot_time.login", 7.0, "s", "lower", samples=[6.5, 7.0, 7.4, 6.8, 7.2])
    spec = catalogue.spec("boot_time.login")
    assert vd.compare(b.values(), [7.3], spec).outcome == vd.UNKNOWN
    assert vd.compare(b.values(), [8.4, 8.5, 8.7, 8.3, 8.6], spec).outcome == vd.REGRESSED
    assert vd.compare(b.values(), [5.4, 5.5, 5.3, 5.6, 5.2], spec).outcome == vd.IMPROVED
    assert b.limit() is None                   # one figure cannot decide it (LAVA: skip)


def test_an_exact_metric_is_judged_against_its_floor():
    b = bl.Baseline("build.uimage_data_bytes", 1_000_000, "bytes", "lower", samples=[1_000_000])
    spec = catalogue.spec("build.uimage_data_bytes")
    assert b.limit() == pytest.approx(1_005_000)                          # 0.5 %
    assert vd.compare(b.values(), [1_004_000], spec, exact=True).outcome == vd.SAME
    assert vd.compare(b.values(), [1_006_000], spec, exact=True).outcome == vd.REGRESSED


def test_higher_is_better_regresses_below():
    b = bl.Baseline("memory.mem_eat_kb", 9024, "kB", "higher", samples=[9024])
    assert b.limit() == pytest.approx(9020)                               # one page
    spec = catalogue.spec("memory.mem_eat_kb")
    assert vd.compare(b.values(), [8500], spec, exact=True).outcome == vd.REGRESSED
    assert vd.compare(b.values(), [9022], spec, exact=True).outcome == vd.SAME


def test_a_metric_without_baseline_is_new_not_failed(tmp_path):
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "kernels")
    m = res.record("qemu-arm", "armmp", "boot_time", "login", 7.0, "s")
    assert m.verdict == vd.NEW and m.baseline is None


HERE = {"kind": "measured", "host_id": clocks.this_host()["id"]}   # a baseline of this host


def test_results_are_on_disk_after_every_metric(tmp_path):
    write_baseline(tmp_path / "kernels", "armmp", "qemu-arm",
                   {"boot_time.guest_login": {"value": 7.0, "unit": "s", "samples": [7.0] * 3,
                                              "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "kernels")
    res.record("qemu-arm", "armmp", "boot_time", "guest_login", 9.0, "s", samples=[9.0])
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    [m] = on_disk["metrics"]
    assert (m["verdict"], m["baseline"]["value"], m["limit"]) == ("regressed", 7.0, pytest.approx(7.07))
    assert m["samples"] == [9.0] and "beyond the floor" in m["comparison"]["why"]
    # an interrupted run, resumed: the first result is still there
    again = RunResults(tmp_path / "run", baselines_root=tmp_path / "kernels")
    again.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 80000, "kB", "higher")
    assert len(json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]) == 2


def test_update_baselines_writes_median_and_spread_and_nothing_else_changes_them(tmp_path):
    root = tmp_path / "kernels"
    res = RunResults(tmp_path / "run", baselines_root=root)
    res.record("qemu-arm", "armmp", "boot_time", "login", 7.1, "s", samples=[7.4, 7.1, 6.9])
    assert not (root / "armmp" / "qemu-arm.yaml").exists()    # recording alone writes none
    [path] = res.update_baselines()
    b = bl.load("armmp", "qemu-arm", root)["boot_time.login"]
    assert b.value == 7.1 and b.spread["min"] == 6.9 and b.spread["max"] == 7.4
    assert b.spread["n"] == 3 and b.source["kind"] == "measured" and b.source["repeats"] == 3
    assert b.samples == [7.4, 7.1, 6.9]
    assert path == root / "armmp" / "qemu-arm.yaml"


@pytest.mark.parametrize("metrics, message", [
    ({"boot_time.login": {"unit": "s"}}, r"value must be a number, got None"),
    ({"boot_time.login": {"value": "fast", "unit": "s"}}, r"value must be a number, got 'fast'"),
    ({"boot_time.login": {"value": 1, "unit": "s", "direction": "up"}}, r"direction must be lower or higher"),
    ({"boot_time.login": {"value": 1, "unit": "s", "samples": ["x"]}}, r"samples must be a list of numbers"),
])
def test_a_malformed_baseline_names_the_file_and_field(tmp_path, metrics, message):
    write_baseline(tmp_path, "armmp", "qemu-arm", metrics)
    with pytest.raises(bl.BaselineError, match=r"qemu-arm\.yaml: metrics\.boot_time\.login\." + message):
        bl.load("armmp", "qemu-arm", tmp_path)


@pytest.mark.parametrize("source", [
    {"kind": "measured", "host": "vm", "date": "2026-11-21"},      # before hosts had an id
    {"kind": "measured", "host_id": "vm-0123456789ab"},             # another machine
    {"kind": "study"},
])
def test_a_host_bound_figure_is_judged_only_against_its_own_host(tmp_path, source):
    """Boot time (host clock) and lmbench on a realtime virtual board depend on the
    machine; memory does not. Another host's baseline is shown, not judged."""
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "boot_time.login": {"value": 7.0, "unit": "s", "source": source},
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "source": source},
        "memory.free_used_kb": {"value": 6140, "unit": "kB", "samples": [6140] * 3, "source": source}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    login = res.record("qemu-arm", "armmp", "boot_time", "login", 70.0, "s")
    pipe = res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 900, "us", qemu_clock="realtime")
    used = res.record("qemu-arm", "armmp", "memory", "free_used_kb", 9000, "kB")
    assert (login.clock, pipe.clock, used.clock) == ("host", "guest-realtime", "none")
    assert login.verdict == pipe.verdict == vd.OTHER_HOST and login.limit is None
    assert "other host, not judged" in login.describe() and "7 s measured on" in login.describe()
    assert used.verdict == vd.REGRESSED                  # a size is a size on any host
    assert json.loads((tmp_path / "run/results.json").read_text())["meta"]["host"] == \
        clocks.this_host()["id"]


def test_a_deterministic_clock_is_judged_on_any_host(tmp_path):
    """On the icount clock lmbench counts instructions: another machine's baseline judges it."""
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3,
                                "source": {"host_id": "vm-0123456789ab"}},
        "boot_time.guest_login": {"value": 20.0, "unit": "s", "samples": [20.0] * 3,
                                  "source": {"host_id": "vm-0123456789ab"}},
        "boot_time.login": {"value": 7.0, "unit": "s", "source": {"host_id": "vm-0123456789ab"}}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    pipe = res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 900, "us")
    guest = res.record("qemu-arm", "armmp", "boot_time", "guest_login", 20.1, "s")
    host = res.record("qemu-arm", "armmp", "boot_time", "login", 7.0, "s")
    assert (pipe.clock, pipe.verdict) == ("guest-deterministic", vd.REGRESSED)
    assert (guest.clock, guest.verdict) == ("guest-deterministic", vd.SAME)
    assert (host.clock, host.verdict) == ("host", vd.OTHER_HOST)   # arrival on this host


def test_a_baseline_of_another_clock_does_not_judge(tmp_path, monkeypatch):
    """A realtime session on the host that measured the icount baseline: not comparable."""
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "lmbench.lat_pipe_us": {"value": 355, "unit": "us", "samples": [355] * 3,
                                "source": {**HERE, "clock": "guest-deterministic"}}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    m = res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 200, "us", qemu_clock="realtime")
    assert (m.clock, m.verdict) == ("guest-realtime", vd.OTHER_CLOCK)
    assert "other clock, not judged" in m.describe() and "guest-deterministic clock" in m.describe()
    same = res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 356, "us", qemu_clock="deterministic")
    assert same.verdict == vd.SAME


def test_the_same_figures_are_judged_on_the_host_that_measured_the_baseline(tmp_path):
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "boot_time.login": {"value": 7.0, "unit": "s", "source": HERE},
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3, "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    # one login figure cannot decide a noisy metric; ten times slower five times can
    assert res.record("qemu-arm", "armmp", "boot_time", "login", 70.0, "s").verdict == vd.UNKNOWN
    assert res.record("qemu-arm", "armmp", "boot_time", "login", 70.0, "s",
                      samples=[70.0] * 5).verdict == vd.UNKNOWN   # against one stored sample
    assert res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 301, "us").verdict == vd.SAME


def test_a_real_boards_own_clock_is_judged_against_the_study(tmp_path):
    """lmbench on a real TQM860L runs on the board's clock, not the lab host's: judged
    against the study (not 'other host'), but as the noisy figure a real board's clock
    gives: one run against one published number decides nothing, samples do."""
    own = {"tools": "own"}   # the TQM860L runs the project's programs (its isa, the family record)
    write_baseline(tmp_path / "k", "2.4.25", "tqm860l", {
        "lmbench.lat_pipe_us": {"value": 100, "unit": "us", "source": {"kind": "measured", "settings": own}},
        "lmbench.lat_unix_us": {"value": 100, "unit": "us", "samples": [98, 100, 101, 99, 102],
                                "source": {"kind": "measured", "settings": own}},
        "lmbench.lat_tcp_us": {"value": 100, "unit": "us", "source": {"kind": "study"}}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    m = res.record("tqm860l", "2.4.25", "lmbench", "lat_pipe_us", 1000.0, "us")
    assert m.clock == "guest-realtime" and m.verdict == vd.UNKNOWN
    assert "exactness not shown: measured on the guest-realtime clock" in m.comparison["why"]
    # the study's lmbench figures are lmbench's: a figure of the project's programs is not
    # judged against them (the page compares changes, not absolute figures)
    tcp = res.record("tqm860l", "2.4.25", "lmbench", "lat_tcp_us", 1000.0, "us")
    assert tcp.verdict == vd.OTHER_SETTINGS and "other programs" in tcp.comparison["why"]
    unix = res.record("tqm860l", "2.4.25", "lmbench", "lat_unix_us", 1000.0, "us", samples=[1000.0, 990.0,
                                                                                            1010.0, 1005.0, 995.0])
    assert unix.verdict == vd.REGRESSED and unix.comparison["method"] == "rank test"


def test_a_real_boards_boot_milestones_are_its_own_time_and_judged(tmp_path):
    """An independent TQM860L console (U-Boot 1.1.2, 2.4.25 at real speed) measured the
    study's milestones: the board's time, stamped on arrival by whatever lab host, so
    judged against the study; a build's time is the host's work: never."""
    write_baseline(tmp_path / "k", "2.4.25", "tqm860l", {
        "boot_time.linux_version": {"value": 1.9, "unit": "s", "source": {"kind": "study"}},
        "boot_time.login": {"value": 49.7, "unit": "s", "source": {"kind": "study"}},
        "build.real_s": {"value": 50.3, "unit": "s", "source": {"kind": "study"}}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    version = res.record("tqm860l", "2.4.25", "boot_time", "linux_version", 1.933, "s")
    login = res.record("tqm860l", "2.4.25", "boot_time", "login", 49.733, "s")
    build = res.record("tqm860l", "2.4.25", "build", "real_s", 300.0, "s")
    assert version.clock == login.clock == "host"
    assert vd.OTHER_HOST not in (version.verdict, login.verdict)
    assert version.comparison and login.comparison
    assert build.verdict == vd.OTHER_HOST


@pytest.mark.parametrize("key, board, a, b, ok, verdict", [
    ("lmbench.lat_pipe_us", "qemu-arm", ("guest-realtime", "h1"), ("guest-deterministic", "h1"), False, "other-clock"),
    ("lmbench.lat_pipe_us", "qemu-arm", ("guest-deterministic", "h1"), ("guest-deterministic", "h2"), True, ""),
    ("lmbench.lat_pipe_us", "qemu-arm", ("guest-realtime", "h1"), ("guest-realtime", "h2"), False, "other-host"),
    ("boot_time.login", "qemu-arm", ("host", "h1"), ("host", "h1"), True, ""),
    ("boot_time.login", "qemu-arm", (None, None), ("host", "h1"), False, "other-host"),
    ("boot_time.login", "tqm860l", (None, None), ("host", "h1"), True, ""),
    ("build.real_s", "tqm860l", (None, "study"), ("host", "h1"), False, "other-host"),
    ("build.uimage_data_bytes", "tqm860l", (None, None), ("none", "h1"), True, ""),
    ("memory.mem_eat_kb", "qemu-ppc", ("none", "h1"), ("none", "h2"), True, ""),
])
def test_one_rule_says_which_figures_may_be_judged(key, board, a, b, ok, verdict):
    from boardlab.facts.board import load_board
    from boardlab.judge.decide import Figures, why_not
    apart = why_not(key, Figures((), *a), Figures((), *b), load_board(board))
    assert (apart is None, apart.outcome if apart else "") == (ok, verdict), apart


def test_no_module_decides_judgeability_on_its_own():
    """Results, compare, report, the study table, LAVA, the bisect and the boot spans ask
    judge.decide; none tests a metric's clock or host by itself, and nothing but the
    judge calls the comparison of samples."""
    import re
    for path in list((ROOT / "boardlab").rglob("*.py")) + list((ROOT / "bench").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"timed_by == catalogue\.HOST", text), path
        if path.name != "decide.py":
            assert not re.search(r"\.clock\(\) not in \(None", text), path
            assert not re.search(r"\b(vd|verdict)\.compare\(", text), f"{path} compares samples itself"
            assert not re.search(r"from boardlab\.judge\.verdict import .*\bcompare\b", text), path


def test_a_host_bound_baseline_pools_one_hosts_runs_only(tmp_path):
    from boardlab.judge.results import Metric, update_baselines
    runs = [[Metric("qemu-arm", "armmp", "boot_time", "login", v, "s", clock="host", host=h)]
            for v, h in ((7.0, "vm-aaaaaaaaaaaa"), (7.2, "vm-bbbbbbbbbbbb"))]
    with pytest.raises(bl.BaselineError, match="measured on different hosts"):
        update_baselines(runs, tmp_path)
    update_baselines(runs[:1], tmp_path)
    assert bl.load("armmp", "qemu-arm", tmp_path)["boot_time.login"].host_id() == "vm-aaaaaaaaaaaa"


def test_a_unit_mismatch_is_an_error_not_a_verdict(tmp_path):
    write_baseline(tmp_path / "k", "armmp", "qemu-arm",
                   {"boot_time.login": {"value": 7000, "unit": "ms"}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    with pytest.raises(bl.BaselineError, match="unit is 'ms', the catalogue says 's'"):
        res.record("qemu-arm", "armmp", "boot_time", "login", 7.0, "s")


def test_a_metric_the_catalogue_lacks_or_a_wrong_unit_is_refused(tmp_path):
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    with pytest.raises(catalogue.UnknownMetric, match="not in the catalogue"):
        res.record("qemu-arm", "armmp", "lmbench", "lat_nothing_us", 1.0, "us")
    with pytest.raises(bl.BaselineError, match="measured in 'ms'"):
        res.record("qemu-arm", "armmp", "boot_time", "login", 7000, "ms")


def test_the_study_baselines_are_seeded_from_the_reference(tmp_path):
    reference.seed(root=tmp_path)
    for f in tmp_path.rglob("*/*.yaml"):   # the committed files are what seeding writes
        committed = ROOT / "kernels" / f.relative_to(tmp_path)
        assert committed.read_text() == f.read_text(), f"{committed} differs from the reference"
    b = bl.load("2.4.25", "tqm860l", tmp_path)
    assert b["boot_time.linux_version"].value == 1.9
    assert b["memory.mem_eat_kb"].value == 9024
    assert b["memory.kernel_code_data_kb"].value == 1144


def table(md):
    """metric -> the delta column of a two-sided report."""
    return {ln.split("|")[1].strip(): ln.split("|")[5].strip() for ln in md.splitlines()[2:]}


def test_the_report_reproduces_the_study_deltas():
    sand = table(report.markdown("baseline:sandpoint:2.4.25", "baseline:sandpoint:2.6.11.7"))
    tqm = table(report.markdown("baseline:tqm860l:2.4.25", "baseline:tqm860l:2.6.11.7"))
    # the study: build real +31 % / +43 %, compressed kernel +27 % / +43 %
    assert sand["sandpoint build.real_s"] == "+30.8 %"
    assert tqm["tqm860l build.real_s"] == "+43.5 %"
    assert sand["sandpoint build.uimage_data_bytes"] == "+26.5 %"
    assert tqm["tqm860l build.uimage_data_bytes"] == "+42.6 %"
    assert tqm["tqm860l memory.mem_eat_kb"] == "-7.8 %"


def test_report_of_one_run_shows_verdicts_and_writes_html(tmp_path):
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3, "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "jitter", "max_us", 900, "us")
    res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 330, "us")
    md = report.markdown(str(tmp_path / "run"))
    assert "| qemu-arm jitter.max_us | us | 900 | - | - | guest-deterministic | new |  |" in md
    assert ("| qemu-arm lmbench.lat_pipe_us | us | 330 | 300 | +10.0 % | guest-deterministic | "
            "regressed | exact: medians 300 and 330 us differ by 30 us, beyond the floor 9 us") in md
    page = report.html_page(str(tmp_path / "run"), None, tmp_path / "r.html").read_text()
    assert "<table>" in page and '<tr class="regressed">' in page


def test_the_report_opens_with_a_summary_and_groups_metrics_by_family(tmp_path):
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3, "source": HERE},
        "memory.mem_eat_kb": {"value": 88832, "unit": "kB", "samples": [88832] * 3, "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "jitter", "max_us", 900, "us")
    res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 330, "us")
    res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 88832, "kB")
    md = report.markdown(str(tmp_path / "run"), with_summary=True)
    assert md.startswith("1 regressed | 1 same | 1 new | of 3 metrics\n"
                         "regressed: qemu-arm lmbench.lat_pipe_us +10.0 %\n"
                         "not judged: qemu-arm jitter.max_us: new\n"), md
    page = report.html_page(str(tmp_path / "run"), None, tmp_path / "r.html").read_text()
    # families in the catalogue's order, each a header row; the deltas drawn against the floor
    assert page.index(">memory (1)<") < page.index(">lmbench (1)<") < page.index(">jitter (1)<")
    assert page.count('<svg class="delta"') == 2 and 'fill="#c00"' in page   # +10 % beyond 3 %


def test_report_of_a_missing_run_is_a_clear_error(tmp_path):
    from boardlab.judge.results import BadRun
    with pytest.raises(BadRun, match="no results.json"):
        report.markdown(str(tmp_path / "nope"))


def test_baselines_pooled_over_runs_carry_the_run_to_run_noise(tmp_path):
    from boardlab.judge.results import Metric, update_baselines
    runs = [[Metric("qemu-arm", "armmp", "lmbench", "lat_pipe_us", v, "us")] for v in (400, 600, 500)]
    update_baselines(runs, tmp_path)
    b = bl.load("armmp", "qemu-arm", tmp_path)["lmbench.lat_pipe_us"]
    assert b.value == 500 and b.spread["n"] == 3 and b.source["runs"] == 3
    assert b.spread["stdev"] == pytest.approx(100) and b.samples == [400, 600, 500]


def test_a_harness_keeps_only_the_figures_it_measures_differently(tmp_path):
    write_baseline(tmp_path, "armmp", "qemu-arm", {
        "memory.mem_eat_kb": {"value": 88832, "unit": "kB", "direction": "higher"},
        "lmbench.lat_pipe_us": {"value": 355, "unit": "us"}})
    (tmp_path / "armmp" / "qemu-arm.lava.yaml").write_text(yaml.safe_dump({"metrics": {
        "memory.mem_eat_kb": {"value": 87296, "unit": "kB", "direction": "higher", "samples": [87296] * 3}}}))
    lava_view = bl.load("armmp", "qemu-arm", tmp_path, "lava")
    assert lava_view["memory.mem_eat_kb"].value == 87296        # LAVA's own
    assert lava_view["lmbench.lat_pipe_us"].value == 355        # shared
    assert bl.load("armmp", "qemu-arm", tmp_path)["memory.mem_eat_kb"].value == 88832
    res = RunResults(tmp_path / "run", baselines_root=tmp_path, harness="lava")
    assert res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 87300, "kB", "higher").verdict == vd.SAME


def test_a_host_clock_figure_is_not_judged_across_sessions(tmp_path):
    """Measured: two runs minutes apart on one host, all 5 boots of the second 8 % later.
    Against a stored baseline a host-clock shift stays 'unknown' (compare judges it)."""
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {"boot_time.login": {
        "value": 5.33, "unit": "s", "samples": [5.30, 5.33, 5.31, 5.35, 5.36], "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    m = res.record("qemu-arm", "armmp", "boot_time", "login", 5.77, samples=[5.75, 5.77, 5.8, 5.76, 5.79])
    assert m.verdict == vd.UNKNOWN and "drifts between sessions" in m.comparison["why"]


def test_the_report_page_as_a_browser_shows_it(tmp_path):
    """Debian's headless Chromium renders the page: the summary on top, the regressed
    metric's delta drawn red beyond its grey floor band."""
    from browser import dom, pixels_near, screenshot
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3, "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "lmbench", "lat_pipe_us", 330, "us")
    page = report.html_page(str(tmp_path / "run"), None, tmp_path / "r.html")
    text = dom(page.as_uri())
    assert text.index("Summary") < text.index("Regressed") < text.index("Metrics by family")
    shot = screenshot(page.as_uri(), tmp_path / "r.png", size=(1400, 700))
    assert pixels_near(shot, (204, 0, 0), 20) > 20          # the red mark, beyond the floor
    assert pixels_near(shot, (221, 221, 221), 2) > 50       # the floor's grey band


def test_a_host_is_itself(tmp_path, monkeypatch):
    """A random id written once per machine, kept across runs; the old digest ids
    (machine-id + CPU, the same on every clone of one image) name an unknown host, and
    a host-clock figure is never judged against one."""
    path = tmp_path / "host-id"
    first = clocks._host_token(path)
    assert clocks._host_token(path) == first and len(first) == 16
    assert clocks._host_token(tmp_path / "other") != first
    here = clocks.this_host()["id"]
    assert clocks.known_host(here) == here
    assert clocks.known_host("vm-291aa637f1e3") is None
    from boardlab.judge.decide import Figures, why_not
    shared = Figures((), "host", "vm-291aa637f1e3")
    apart = why_not("build.real_s", shared, shared, None)
    assert apart.outcome == vd.OTHER_HOST and "an id machines of one kind share" in apart.why
    assert why_not("build.real_s", Figures((), "host", here), Figures((), "host", here), None) is None
    assert "unknown host" in bl.host_of({"host_id": "vm-291aa637f1e3"})


def test_a_figure_of_other_settings_has_its_own_baseline_kept_beside(tmp_path):
    """The maximum of a 60 s cyclictest run is judged against 60 s runs, kept beside the
    10 s ones in the same file; a run length without baselines is not judged."""
    from boardlab.judge.results import Metric, update_baselines

    def runs(values, run_s):
        return [[Metric("qemu-arm", "armmp", "jitter", "max_us", v, "us", samples=[v],
                        settings={"run_s": run_s})] for v in values]
    update_baselines(runs((2100, 2000, 2200), 10), tmp_path)
    update_baselines(runs((2600, 2620, 2610), 60), tmp_path)
    b = bl.load("armmp", "qemu-arm", tmp_path)["jitter.max_us"]
    assert (b.value, b.settings()) == (2100, {"run_s": 10})
    assert [(o.value, o.settings()) for o in b.others] == [(2610, {"run_s": 60})]
    update_baselines(runs((2500, 2520, 2510), 60), tmp_path)     # taken again: replaced, not added
    b = bl.load("armmp", "qemu-arm", tmp_path)["jitter.max_us"]
    assert b.value == 2100 and [o.value for o in b.others] == [2510]
    assert b.for_settings({"run_s": 60}).value == 2510 and b.for_settings({"run_s": 10}) is b
    res = RunResults(tmp_path / "run", baselines_root=tmp_path)
    m = res.record("qemu-arm", "armmp", "jitter", "max_us", 2515, samples=[2515, 2512, 2514],
                   settings={"run_s": 60})
    assert m.baseline["value"] == 2510 and "other_settings" not in m.baseline
    assert m.verdict == vd.SAME, m.describe()
    m = res.record("qemu-arm", "armmp", "jitter", "max_us", 2515, samples=[2515], settings={"run_s": 30})
    assert m.verdict == vd.OTHER_SETTINGS and "run_s 10" in m.describe()


@pytest.mark.parametrize("others, message", [
    ("x", r"metrics.jitter.max_us.other_settings must be a list of metrics"),
    ([{"value": 1, "unit": "us"}], r"other_settings must be a list of metrics, each with its source.settings"),
    ([{"value": "1", "unit": "us", "source": {"settings": {"run_s": 60}}}],
     r"metrics.jitter.max_us.other_settings\[0\].value must be a number"),
])
def test_a_malformed_other_settings_entry_names_its_place(tmp_path, others, message):
    write_baseline(tmp_path, "armmp", "qemu-arm", {"jitter.max_us": {
        "value": 2100, "unit": "us", "source": {"settings": {"run_s": 10}}, "other_settings": others}})
    with pytest.raises(bl.BaselineError, match=message):
        bl.load("armmp", "qemu-arm", tmp_path)


def test_baselines_update_keep_host_bound_writes_only_what_any_host_can_judge(tmp_path, monkeypatch):
    """`boardlab baselines update --keep-host-bound RUN`: a host-clock figure is left out,
    a size or a guest-deterministic figure is written (the way LAVA's memory baselines and
    the build sizes are recorded)."""
    from dataclasses import asdict
    from boardlab.cli import main
    from boardlab.judge.results import Metric
    written = {}
    monkeypatch.setattr(bl, "write_all", lambda files, *a, **k: [written.update(m) for _, _, m, _ in files])
    run = tmp_path / "run"
    run.mkdir()
    metrics = [Metric("qemu-arm", "armmp", "boot_time", "login", 7.0, "s", samples=[7.0], clock="host", host="vm-a"),
               Metric("qemu-arm", "armmp", "boot_time", "guest_login", 20.7, "s", samples=[20.7],
                      clock="guest-deterministic", host="vm-a"),
               Metric("qemu-arm", "armmp", "memory", "mem_eat_kb", 80000, "kB", "higher", samples=[80000],
                      clock="none", host="vm-a")]
    (run / "results.json").write_text(json.dumps({"meta": {}, "metrics": [asdict(m) for m in metrics]}))
    assert main(["baselines", "update", "--keep-host-bound", str(run)]) == 0
    assert set(written) == {"boot_time.guest_login", "memory.mem_eat_kb"}


def test_a_spread_without_its_samples_gives_the_samples_it_determines():
    """Older files kept n, min and max but not the samples: three samples are min, median,
    max; n alike ones are n times the value; anything else is one value."""
    three = bl.Baseline("memory.mem_eat_kb", 87296, "kB", "higher",
                        spread={"min": 87232, "max": 87296, "n": 3})
    assert three.values() == [87232.0, 87296.0, 87296.0]
    alike = bl.Baseline("memory.free_total_kb", 112196, "kB", "higher",
                        spread={"min": 112196, "max": 112196, "n": 5})
    assert alike.values() == [112196.0] * 5
    four = bl.Baseline("memory.mem_eat_kb", 87296, "kB", "higher", spread={"min": 87232, "max": 87296, "n": 4})
    assert four.values() == [87296]


def test_baselines_of_two_kernels_are_written_all_or_none(tmp_path, monkeypatch):
    """An OS error on the second kernel's file (a full disk, a read-only directory) was a
    traceback after the first file was written: now one line naming the file, and neither
    file changed (issue 'Answers without holes')."""
    from boardlab.judge.results import Metric, update_baselines
    metric = {"board": "qemu-arm", "suite": "memory", "name": "free_free_kb", "value": 3072.0, "unit": "kB",
              "samples": [3072.0], "verdict": "new", "clock": "none", "host": "vm-a"}
    (tmp_path / "rt-armmp").mkdir()
    (tmp_path / "rt-armmp").chmod(0o500)          # its file cannot be made
    import os
    if os.geteuid() == 0:   # root writes anywhere: a file where the directory should be
        (tmp_path / "rt-armmp").chmod(0o700)
        (tmp_path / "rt-armmp").rmdir()
        (tmp_path / "rt-armmp").write_text("not a directory\n")
    runs = [[Metric(**{**metric, "kernel": k}) for k in ("armmp", "rt-armmp")]]
    with pytest.raises(bl.BaselineError, match=r"rt-armmp/qemu-arm.yaml: cannot be written .*no baseline file was changed"):
        update_baselines(runs, tmp_path)
    assert not (tmp_path / "armmp" / "qemu-arm.yaml").exists()
    assert not [p for p in tmp_path.rglob(".baseline-*")]
