"""The metric catalogue is the one list of names: the LAVA test definitions report exactly
its LAVA metrics, the study reference and the stored baselines use only its names, units
and directions."""
import re

import pytest
import yaml

from boardlab import lava
from boardlab.facts.board import load_board
from boardlab.judge import reference
from boardlab.measure import catalogue, families
from boardlab.measure.families import lmbench_output
from paths import DATA, ROOT
from testdefs import captured_programs, lava_figures, run_testdef


@pytest.mark.parametrize("suite", [f.name for f in families.FAMILIES if f.testdef])
def test_the_lava_test_definitions_give_exactly_the_catalogues_names(tmp_path, suite):
    """Each definition's raw output, its programs printing what they printed on the virtual
    board, read off the board by `lava results` (its family's own parser): the catalogue's
    LAVA metrics of the family, each a number; the one test case says it measured."""
    spec = yaml.safe_load((ROOT / "jobs/testdefs" / suite / f"{suite}.yaml").read_text())
    assert spec["metadata"]["name"] == suite
    got = lava_figures(tmp_path, suite, captured_programs())
    assert set(got) == {m.name for m in catalogue.of_suite(suite, lava=True)}


def test_a_definition_whose_programs_fail_says_it_did_not_measure(tmp_path):
    """A run that fails: LAVA's one test case fails, and `lava results` says why, per family."""
    from boardlab.lava.logs import raw_figures
    reported, lines = run_testdef(tmp_path, "hackbench", {"hackbench": "echo 'hackbench: not found'; exit 127"})
    assert reported == [("measured", "fail")]
    got, failed = raw_figures([{"lvl": "target", "msg": ln} for ln in lines])
    assert got == {} and failed["hackbench"].startswith("hackbench: its run exited 127: hackbench: not found")
    reported, lines = run_testdef(tmp_path / "b", "memory", {"free": "echo garbage"})
    got, failed = raw_figures([{"lvl": "target", "msg": ln} for ln in lines])
    assert failed == {"memory": "memory: no header and Mem: row in free output"}


def test_lava_times_the_catalogues_boot_milestones():
    entries = lava.read_log((DATA / "lava/qemu-arm-armmp-memory-jitter.job.log").read_text())
    found = lava.boot_milestones(entries, load_board("qemu-arm"))
    assert set(found) == {m.name for m in catalogue.of_suite("boot_time", lava=True)}


def test_the_study_and_the_stored_baselines_use_the_catalogue():
    study = yaml.safe_load(reference.REFERENCE.read_text())
    for board, kernels in study["results"].items():
        if board in study["boards"]:
            for result in kernels.values():
                for key in reference.study_metrics(result):
                    catalogue.spec(key)
    for path in (p for p in ROOT.glob("kernels/*/*.yaml") if p.name != "pin.yaml"):
        for key, m in yaml.safe_load(path.read_text())["metrics"].items():
            spec = catalogue.spec(key)
            assert (m["unit"], m["direction"]) == (spec.unit, spec.direction), f"{path}: {key}"


def test_every_metric_has_a_floor_and_a_direction():
    for m in catalogue.METRICS.values():
        assert m.direction in ("lower", "higher") and m.timed_by in ("host", "guest", "none")
        assert m.floor(100.0) > 0, m.key
    with pytest.raises(catalogue.UnknownMetric, match="not in the catalogue"):
        catalogue.spec("lmbench.lat_nothing_us")


def test_a_suite_is_a_family_by_one_name_everywhere():
    """A family of metrics is one suite: testsuites/test_<family>.py for pytest, the LAVA
    suite of the same name; no alias table in between."""
    assert set(lava.SUITES) <= set(families.NAMES)
    for family in families.NAMES:
        assert (ROOT / "testsuites" / f"test_{family}.py").exists(), family
    assert set(lava.DEFAULT_SUITES) == {f.name for f in families.FAMILIES if f.lava and f.default}


def test_the_lmbench_groups_give_every_lmbench_figure_once():
    """The one lmbench definition (measure.families.lmbench_output) covers the catalogue: each figure in
    exactly one group, so the suite, compare and a bisect step run the same commands."""

    given = [f"lmbench.{n}" for names in lmbench_output.GROUPS.values() for n in names]
    assert len(given) == len(set(given))
    assert set(given) == {k for k in catalogue.METRICS if k.startswith("lmbench.")}
    runs = (ROOT / "jobs/testdefs/lmbench/runs.sh").read_text()   # the board-side runs of each group
    groups = " ".join(re.findall(r'^LM_(?:GROUPS|LARGE)="([^"]*)"', runs, re.M)).split()
    assert groups == list(lmbench_output.GROUPS)
    assert all(re.search(rf"^lm_{g}\(\) {{", runs, re.M) for g in groups)
    assert lmbench_output.group_of("lmbench.lat_ctx_16k_4p_us") == "context_switch"


def test_a_real_lava_logs_lmbench_section_gives_every_figure_quotes_and_all():
    """LAVA job (lava-run, qemu-arm, 2026-12-07): the board's lmbench section as LAVA logged
    it, each `"` written `\\"` (lat_ctx's '"size=0k ovr=' header): read as the board printed
    it, every lmbench figure a LAVA job measures is there, lat_ctx's too."""
    import json
    from boardlab.lava.logs import raw_figures
    from paths import DATA
    entries = [json.loads(line) for line in (DATA / "lava" / "lmbench-job-target-qemu-arm.jsonl").read_text().splitlines()]
    assert any('\\"size=' in e["msg"] for e in entries)
    got, failed = raw_figures(entries)
    want = {k for k, m in catalogue.METRICS.items() if k.startswith("lmbench.") and m.lava}
    assert failed == {} and set(got["lmbench"]) == want
    assert got["lmbench"]["lmbench.lat_ctx_0k_2p_us"] == 72.18
