"""The KCIDB export says what happened: each status made by the event that should make it
(a regressed metric, a kernel that did not build or boot, a lab fault, a change point the
watch recorded), from the run as it lands in the history, through the one mapping; a
nightly build's commit and tree; each metric's verdict, interval and samples beside its
number. Checked by kcidb-io's schema where the history's venv is."""
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from boardlab.bisect import watch as w
from boardlab.boot.bootlog import BootError, KernelBootError, LabBootError
from boardlab.facts.board import load_board
from boardlab.history import changes, kcidb, submit
from boardlab.history.server import VENV
from boardlab.judge import outcomes
from boardlab.judge.results import RunResults
from boardlab.lava import logs as lava_logs
from paths import DATA
from test_baselines import write_baseline

REV = "0123456789abcdef0123456789abcdef01234567"
ENV = "qemu-arm.guest-deterministic"


def squad(*run_dirs) -> list:
    """The runs as SQUAD's API gives them back to history.kcidb.read: what submit sends,
    a test's result as SQUAD keeps it (pass, fail, else skip), the metadata as sent."""
    builds = {}
    for i, s in enumerate((s for run in run_dirs for s in submit.submissions(run)), 1):
        b = builds.setdefault(s.build, {"version": s.build, "datetime": s.metadata["datetime"], "runs": []})
        b["runs"].append({
            "id": i, "job_id": s.job_id, "datetime": s.metadata["datetime"], "environment": s.environment,
            "tests": {t: r if r in ("pass", "fail") else "skip" for t, r in s.tests.items()},
            "metrics": [{"name": n, "measurement_list": v["value"], "unit": v["unit"],
                         "result": sum(v["value"]) / len(v["value"])} for n, v in s.metrics.items()],
            "metadata": json.loads(json.dumps(s.metadata))})
    return list(builds.values())


def export(*run_dirs, regressions=None) -> dict:
    doc = kcidb.from_history("vlab", squad(*run_dirs), regressions or {})
    # kcidb-io lives in the history's venv, which the set-up makes: never skipped (a fresh
    # clone's CI left KCIDB unchecked when it was; issue 'Answers without holes')
    assert (VENV / "bin" / "python").exists(), f"{VENV}: scripts/setup-host.sh makes it"
    assert kcidb.validate(doc).startswith("v5")
    return doc


def one(doc, path) -> dict:
    found = [t for t in doc["tests"] if t["path"] == path]
    assert len(found) == 1, (path, [t["path"] for t in doc["tests"]])
    return found[0]


def test_the_one_mapping_from_what_happened_to_a_status():
    s = kcidb.status
    assert s(set()) is None                                                       # nothing said
    assert s({kcidb.LAB_FAULT, kcidb.SKIPPED}) == "ERROR"                          # the lab broke
    assert s({kcidb.FAILED}) == s({kcidb.REGRESSED, kcidb.MEASURED}) == "FAIL"
    assert s({kcidb.CHANGE_POINT, kcidb.PASSED, kcidb.MEASURED}) == "FAIL"        # the watch overrules
    assert s({kcidb.PASSED, kcidb.MEASURED}) == "PASS"
    assert s({kcidb.SKIPPED, kcidb.MEASURED}) == "DONE"                            # nothing to judge by
    assert s({kcidb.SKIPPED}) == "SKIP"
    assert kcidb.events("skip", "error") == {kcidb.LAB_FAULT, kcidb.SKIPPED}
    assert kcidb.events("fail", verdict="missing") == {kcidb.FAILED, kcidb.REGRESSED}


def test_a_regressed_metric_fails_with_its_verdict_interval_and_samples(tmp_path):
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "memory.mem_eat_kb": {"value": 88832, "unit": "kB", "direction": "higher", "samples": [88832] * 3},
        "memory.free_free_kb": {"value": 20000, "unit": "kB", "direction": "higher", "samples": [20000] * 3}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 80000)         # 10 % less: regressed
    res.record("qemu-arm", "armmp", "memory", "free_free_kb", 20000)       # the same
    res.record("qemu-arm", "armmp", "boot_time", "guest_login", 4.93, samples=[4.93, 4.94])   # no baseline
    doc = export(tmp_path / "run")
    eat = one(doc, "boardlab.memory.mem_eat_kb")
    assert eat["status"] == "FAIL" and eat["number"] == {"value": 80000, "unit": "kB"}
    assert eat["misc"]["verdict"] == "regressed" and eat["misc"]["n"] == {"baseline": 3, "run": 1}
    lo, hi = eat["misc"]["ci_pct"]
    assert lo <= eat["misc"]["delta_pct"] <= hi < 0
    free = one(doc, "boardlab.memory.free_free_kb")
    assert free["status"] == "PASS" and free["misc"]["verdict"] == "same"
    login = one(doc, "boardlab.boot_time.guest_login")
    assert login["status"] == "DONE" and login["misc"]["verdict"] == "new"        # only measured
    assert login["misc"]["ci_pct"] is None and login["misc"]["n"] == {"baseline": None, "run": 2}
    assert login["misc"]["samples"] == [4.93, 4.94]
    assert not [t for t in doc["tests"] if t["path"] == "boot"]                 # no boot said: none claimed
    assert "tree_name" not in doc["checkouts"][0] and doc["checkouts"][0]["misc"]["lab"] == "vlab"


JUNIT_SUITE = '''
import pytest

@pytest.fixture
def shell():
    raise RuntimeError("BootError: the board did not answer")

def test_boot_time(shell):
    pass

def test_memory():
    assert False, "regressed against the baseline: memory.mem_eat_kb"

def test_lmbench():
    pytest.skip("its image has no lmbench")

@pytest.mark.parametrize("kernel", ["armmp"])
def test_uname(kernel):
    pass
'''


def suites_run(tmp_path, name, kernel_fault) -> RunResults:
    """A run of the suites whose boot failed, the kernel's or the lab's, with pytest's own
    junit.xml of a suite that errored in set-up, failed, skipped and passed."""
    run = tmp_path / name
    res = RunResults(run)
    with pytest.raises(BootError), outcomes.boot_recorded(res, "qemu-arm", "armmp"):
        raise (KernelBootError("kernel panic") if kernel_fault else LabBootError("U-Boot did not answer"))
    with outcomes.boot_recorded(res, "qemu-arm", "armmp"):       # booted on the next try
        pass
    (tmp_path / "testsuites").mkdir(exist_ok=True)
    (tmp_path / "testsuites" / "test_suite.py").write_text(JUNIT_SUITE)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={run / 'junit.xml'}",
                    "testsuites/test_suite.py"], cwd=tmp_path, capture_output=True)
    return res


def test_a_kernel_that_does_not_boot_fails_and_a_lab_fault_is_an_error(tmp_path):
    suites_run(tmp_path, "panic", kernel_fault=True)
    doc = export(tmp_path / "panic")
    boot = one(doc, "boot")
    assert boot["status"] == "FAIL" and boot["misc"]["why"] == "kernel panic"   # not undone by the retry
    errored = [t for t in doc["tests"] if t["path"].endswith("test_boot_time")]
    assert [t["status"] for t in errored] == ["SKIP"]                # kept from running by the kernel
    suites_run(tmp_path, "lab", kernel_fault=False)
    doc = export(tmp_path / "lab")
    assert one(doc, "boot")["status"] == "ERROR"
    by_name = {t["path"].rsplit(".", 1)[-1]: t for t in doc["tests"] if ".pytest." in t["path"]}
    assert {k: t["status"] for k, t in by_name.items()} == {
        "test_boot_time": "ERROR", "test_memory": "FAIL", "test_lmbench": "SKIP", "test_uname_armmp_": "PASS"}
    assert "the board did not answer" in by_name["test_boot_time"]["misc"]["why"]


def test_a_nightly_build_says_its_commit_and_tree_and_what_happened(tmp_path):
    from boardlab.bisect.nightly import ERROR, FAIL, PASS, outcome
    failed, faulted = RunResults(tmp_path / "failed"), RunResults(tmp_path / "faulted")
    for res, rev in ((failed, REV), (faulted, REV[::-1])):
        res.meta["nightly"] = {"tree": "/srv/linux", "branch": "master", "rev": rev, "subject": "x",
                               "url": "https://robot:secret@git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git",
                               "tree_name": "next"}
        outcome(res, "qemu-arm", rev[:12], "kernel/checkout", PASS)
    outcome(failed, "qemu-arm", REV[:12], "kernel/build", FAIL, "make: *** [vmlinux] Error 2")
    outcome(faulted, "qemu-arm", REV[::-1][:12], "kernel/build", PASS)
    outcome(faulted, "qemu-arm", REV[::-1][:12], "kernel/boot", ERROR, "TFTP: file not found")
    doc = export(tmp_path / "failed", tmp_path / "faulted")
    checkout = next(c for c in doc["checkouts"] if c["misc"]["kernel"] == REV[:12])
    assert checkout["git_commit_hash"] == REV and checkout["tree_name"] == "next"   # as told: KernelCI's name
    assert checkout["git_repository_url"] == "https://git.kernel.org/pub/scm/linux/kernel/git/next/linux-next.git"
    assert checkout["git_repository_branch"] == "master" and checkout["valid"] is True
    builds = {b["checkout_id"].rsplit(":", 1)[-1]: b for b in doc["builds"]}
    assert builds[REV[:12]]["status"] == "FAIL" and builds[REV[::-1][:12]]["status"] == "PASS"
    assert one(doc, "boot")["status"] == "ERROR"                  # the lab's: not the kernel's FAIL
    # a tree the lab was not told the name of has none: a directory's name is no tree's
    # (issue 'Answers without holes': it was the directory's, "net-next")
    assert "name" not in submit.tree_of({"nightly": {"tree": "/srv/net-next", "rev": REV, "url": ""}}, REV[:12])
    assert submit.tree_of({"nightly": {"tree": "/srv/linux", "rev": REV}}, "armmp") == {}


def lava_entries(name):
    return lava_logs.read_log((DATA / "lava" / f"{name}.job.log").read_text())


def cut_after_the_kernel_started(error_type):
    """A job whose kernel started and never came to its login, as LAVA logs it ending."""
    entries = lava_entries("qemu-arm-armmp-memory-jitter")
    at = next(i for i, e in enumerate(entries) if e["lvl"] == "target" and "Linux version" in str(e["msg"]))
    end = {"dt": entries[at]["dt"], "lvl": "results",
           "msg": {"case": "job", "definition": "lava", "result": "fail", "error_type": error_type,
                   "error_msg": "auto-login-action timed out after 256 seconds"}}
    return entries[:at + 3] + [end]


@pytest.mark.parametrize("entries, boot", [
    (lava_entries("qemu-arm-armmp-memory-jitter"), "PASS"),
    (cut_after_the_kernel_started("Job"), "FAIL"),               # the kernel started, and no login came
    (cut_after_the_kernel_started("Infrastructure"), "ERROR"),   # LAVA's own infrastructure
    (lava_entries("qemu-arm-armmp-auto-login-stuck"), "ERROR"),  # at its login prompt; LAVA never saw it
], ids=["booted", "kernel", "infrastructure", "lava-missed-the-prompt"])
def test_a_lava_job_says_its_boot(tmp_path, entries, boot):
    lava_logs.results_from_log(entries, load_board("qemu-arm"), "armmp", tmp_path / "lava", "captured")
    doc = export(tmp_path / "lava")
    assert one(doc, "boot")["status"] == boot
    if boot == "PASS":
        assert one(doc, "boardlab.lava.job")["status"] == "PASS"


def test_a_change_point_the_watch_recorded_fails_its_metric(tmp_path):
    runs = []
    for n, (rev, login) in enumerate((("a" * 12, 4.93), ("b" * 12, 5.10))):
        res = RunResults(tmp_path / f"night-{n}")
        res.record("qemu-arm", rev, "boot_time", "guest_login", login, samples=[login])
        runs.append(res.run_dir)
    worse = changes.ChangePoint("boot_time/guest_login", ENV, "b" * 12, "a" * 12, ["b" * 12], 3.4, (3.3, 3.5), 1e-5)
    better = changes.ChangePoint("boot_time/guest_login", ENV, "a" * 12, "9" * 12, ["a" * 12], -3.4, (-3.5, -3.3), 1e-5)

    def bisect(*_a, **_k):
        raise w.BisectError("did not regress after all")
    seen = {f"{c.metric}@{c.environment}@{c.build}": w.handle(c, tmp_path, None, bisect) for c in (worse, better)}
    assert [e["regression"] for e in seen.values()] == [True, False]
    seen["boot_time/guest_login@qemu-arm.bisect.guest-deterministic@bisect-" + "b" * 12] = {"regression": True}
    (tmp_path / "watched.json").write_text(json.dumps(seen))
    regressions = kcidb.watched(SimpleNamespace(data=tmp_path))
    assert set(regressions) == {("boot_time/guest_login", ENV, "b" * 12)}       # never a bisect's own
    doc = export(*runs, regressions=regressions)
    login = {t["build_id"].split(":")[2]: t for t in doc["tests"]}
    assert login["b" * 12]["status"] == "FAIL" and login["b" * 12]["misc"]["change_point"].startswith(
        "boot_time/guest_login on qemu-arm.guest-deterministic: +3.40 %")
    assert login["a" * 12]["status"] == "DONE"                      # an improvement fails nothing


def test_a_culprit_is_an_issue_present_where_it_moved_and_absent_after_the_fix_night(tmp_path):
    """Issue 'Answers without holes': the watch's culprit becomes a KCIDB issue (the code
    its culprit, the report's file:// URL and subject, confirmed by revert), an incident
    present at the night it moved and each night still regressed, and present=false on the
    night the fix is measured, nothing after; the export is valid against kcidb-io v5."""
    nights = [("a" * 12, 4.93), ("b" * 12, 5.10), ("c" * 12, 5.10), ("d" * 12, 4.93), ("e" * 12, 4.93)]
    runs = []
    for n, (rev, login) in enumerate(nights):
        res = RunResults(tmp_path / f"night-{n}")
        res.meta["started"] = f"2026-12-0{n + 1}T02:00:00+0000"     # the nights in their order
        res.record("qemu-arm", rev, "boot_time", "guest_login", login, samples=[login] * 3)
        runs.append(res.run_dir)
    culprit = "f" * 40
    report = tmp_path / "bisect" / "report.txt"
    report.parent.mkdir()
    report.write_text("boardlab bisect: a +3.45 % regression of boot_time.guest_login on qemu-arm\n\n...\n"
                      f"#regzbot introduced: {culprit[:12]}\n")
    entry = {"change": "boot_time/guest_login on qemu-arm.guest-deterministic: +3.45 %", "good": "a" * 12,
             "bad": "b" * 12, "regression": True, "state": "done", "run_dir": str(report.parent),
             "first_bad": {"rev": culprit, "subject": "net: sleep"}, "report": str(report),
             "revert": "confirmed by revert"}
    (tmp_path / "watched.json").write_text(json.dumps({f"boot_time/guest_login@{ENV}@{'b' * 12}": entry}))
    server = SimpleNamespace(data=tmp_path)
    doc = kcidb.from_history("vlab", squad(*runs), kcidb.watched(server), kcidb.culprits(server))
    assert kcidb.validate(doc).startswith("v5")
    [issue] = doc["issues"]
    assert issue["id"] == f"boardlab:vlab:culprit:{culprit}" and issue["culprit"] == {
        "code": True, "tool": False, "harness": False}
    assert issue["report_url"] == report.as_uri() and issue["report_url"].startswith("file:///")
    assert issue["report_subject"].startswith("boardlab bisect: a +3.45 % regression")
    assert issue["misc"]["confirmed_by_revert"] and "confirmed by revert" in issue["comment"]
    assert issue["misc"]["regzbot"] == f"#regzbot introduced: {culprit[:12]}"
    tests = {t["id"]: t["build_id"].split(":")[2] for t in doc["tests"]}
    said = [(tests[i["test_id"]], i["present"]) for i in doc["incidents"]]
    assert said == [("b" * 12, True), ("c" * 12, True), ("d" * 12, False)]     # nothing of the night after
    assert {i["issue_id"] for i in doc["incidents"]} == {issue["id"]}


def test_figures_measured_on_a_drifting_board_are_the_labs_error(tmp_path, monkeypatch):
    """The board, not the kernel: a run measured while its board drifts from its own level
    (judge.boardhealth) says so in results.json, and its KCIDB tests are ERROR (the lab),
    not FAIL, each saying why."""
    from boardlab.judge import boardhealth as bh
    from boardlab.facts.board import load_board
    monkeypatch.setattr(bh, "HEALTH_DIR", tmp_path / "health")
    for i in range(8):
        bh.record(load_board("qemu-arm"), "armmp", {"boot_time.guest_login": 20.729278 * (1.1 if i == 7 else 1.0)},
                  at=f"2026-12-06T00:0{i}:00")
    write_baseline(tmp_path / "k", "armmp", "qemu-arm", {
        "memory.mem_eat_kb": {"value": 88832, "unit": "kB", "direction": "higher", "samples": [88832] * 3}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 80000)         # 10 % less: regressed
    eat = one(export(tmp_path / "run"), "boardlab.memory.mem_eat_kb")
    assert eat["status"] == "ERROR" and eat["misc"]["verdict"] == "regressed"
    assert eat["misc"]["lab"] == ("the board changed, not the kernel: it was drifting since "
                                  "2026-12-06T00:07:00: boot_time.guest_login +10.0 %")
