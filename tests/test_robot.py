"""The culprit's report (bisect.robot) and its confirmation by revert (bisect.revert):
the text from a made-up bisect state, the revert in a real small git repository with
the build and boots replaced by a fake measure, and a whole bisect that ends in both."""
import json
import subprocess
from pathlib import Path

import pytest

from boardlab.bisect import Bisect, Step
from boardlab.bisect import revert as rv
from boardlab.bisect import robot
from boardlab.bisect import run as bisect_run
from boardlab.history.changes import ChangePoint
from boardlab.judge.verdict import Verdict

GOOD, BAD, CULPRIT = "a" * 40, "b" * 40, "d" * 40


def _state(tmp_path) -> Bisect:
    b = Bisect("/src/linux", GOOD, BAD, "boot_time.guest_login", "qemu-arm", "/lab/qemu-arm.yaml",
               "/kernels/qemu-arm.config", str(tmp_path), root="nfs")
    b.steps = [Step(GOOD, "good one", "good", "good", samples={b.metrics[0]: [20.7218, 20.7228, 20.7222]}),
               Step(BAD, "bad one", "bad", "bad", samples={b.metrics[0]: [21.0231]}),
               Step(CULPRIT, "net: sleep", "step", "bad", samples={b.metrics[0]: [21.0228]}),
               Step("c" * 40, "mm: tidy", "step", "good", samples={b.metrics[0]: [20.7224]})]
    b.first_bad = {"rev": CULPRIT, "subject": "net: sleep"}
    return b


CHANGE = Verdict("regressed", "exact: medians 20.7222 and 21.0228 s differ by 0.3006 s, beyond the floor 0.2 s",
                 20.7222, 21.0228, 1.45, (1.44, 1.46), None, 0.2, "exact", (3, 1))
CONFIRMED = {"state": rv.CONFIRMED, "why": "same against the good revision: exact: ...",
             "step": {"rev": "e" * 40, "subject": 'Revert "net: sleep"', "samples": [20.7226]}}


def test_the_report_names_the_change_the_commit_the_figures_and_how_to_rerun_it(tmp_path):
    others = [{"environment": "qemu-arm.ramdisk.guest-deterministic", "metric": "boot_time/guest_login",
               "before": 18.5, "after": 18.8, "change_pct": 1.62, "status": "regressed (a change point, +1.62 %)"},
              {"environment": "tqm860l.none", "metric": "boot_time/guest_login", "before": 9.0, "after": 9.0,
               "change_pct": 0.0, "status": "no change point"}]
    text = robot.report(_state(tmp_path), CHANGE, CONFIRMED, others, seen="boot_time/guest_login on ...")
    assert text.startswith("boardlab bisect: a +1.45 % regression of boot_time.guest_login on qemu-arm\n")
    for line in [f"commit:  {CULPRIT}\n         'net: sleep'",
                 f"range:   {GOOD[:12]}..{BAD[:12]} (good..bad) in /src/linux, 2 steps",
                 "seen:    boot_time/guest_login on ...",
                 "metric:  boot_time.guest_login (s, lower is better)",
                 "change:  +1.45 % (95 % interval +1.44..+1.46 %): regressed, exact: medians",
                 "samples: 3 of the good revision, 1 of the first bad, a boot each",
                 f"good {GOOD[:12]}", f"first bad {CULPRIT[:12]}",
                 "median   20.7222 s", "21.0228 s", "samples  20.7218 20.7228 20.7222", " 21.0228\n",
                 "revert:  confirmed by revert: same against the good revision",
                 f"eeeeeeeeeeee ('Revert \"net: sleep\"' on {BAD[:12]}): median 20.7226 s",
                 "  qemu-arm.ramdisk.guest-deterministic boot_time/guest_login: 18.5 -> 18.8 (+1.62 %): regressed",
                 "  tqm860l.none boot_time/guest_login: 9 -> 9 (+0.00 %): no change point",
                 f"  boardlab bisect --tree /src/linux --good {GOOD} --bad {BAD} --metric boot_time.guest_login "
                 "--board qemu-arm --env /lab/qemu-arm.yaml --config /kernels/qemu-arm.config --root nfs "
                 "--repeats 5 --max-repeats 10 --failed-boot skip"]:
        assert line in text, line


@pytest.mark.parametrize("revert, others, said", [
    ({"state": rv.NOT_CONFIRMED, "why": "regressed against the good revision: exact: ...", "step": None}, [],
     ["revert:  not confirmed: regressed against the good revision", "  none were measured"]),
    ({"state": rv.NO_APPLY, "why": "CONFLICT (content): Merge conflict in f", "step": None}, None,
     ["revert:  revert does not apply: CONFLICT (content): Merge conflict in f", "  not looked up"]),
    ({"state": rv.NOT_TRIED, "why": "--no-revert", "step": None}, [], ["revert:  revert not tried: --no-revert"]),
])
def test_the_report_says_what_the_revert_found(tmp_path, revert, others, said):
    text = robot.report(_state(tmp_path), CHANGE, revert, others)
    assert "seen:" not in text
    for line in said:
        assert line in text, line


def test_a_first_bad_commit_without_figures_is_said_so(tmp_path):
    b = _state(tmp_path)
    b.failed_boot, b.steps[2].samples, b.steps[2].why = "bad", {}, "boot failed: kernel panic"
    text = robot.report(b, None, CONFIRMED, [])
    assert text.startswith("boardlab bisect: boot_time.guest_login: a failed boot on qemu-arm")
    assert "change:  not measured at the first bad commit (boot failed: kernel panic)" in text


def test_the_other_boards_and_configs_are_those_measured_at_both_builds():
    c = ChangePoint("boot_time/guest_login", "qemu-arm.guest-deterministic", "n2", "n1", ["n2"], 1.4, (1.3, 1.5), 1e-5)
    also = ChangePoint("boot_time/guest_login", "qemu-arm.ramdisk.guest-deterministic", "n2", "n1", ["n2"],
                       1.6, (1.5, 1.7), 1e-5)
    series = {(c.metric, c.environment): [("n1", [20.0]), ("n2", [20.3])],
              (c.metric, also.environment): [("n1", [18.0, 18.2]), ("n2", [18.4])],
              (c.metric, "tqm860l.host"): [("n1", [9.0]), ("n2", [9.0])],
              (c.metric, "qemu-ppc.host"): [("n2", [7.0])],                      # not at n1: not over the range
              ("memory/free_kb", "tqm860l.none"): [("n1", [1.0]), ("n2", [2.0])]}  # another metric
    rows = robot.alongside(c, series, [c, also])
    assert [(r["environment"], r["status"]) for r in rows] == [
        (also.environment, "regressed (a change point, +1.60 %)"), ("tqm860l.host", "no change point")]
    assert rows[0]["before"] == pytest.approx(18.1) and rows[0]["change_pct"] == pytest.approx(1.657, abs=1e-3)
    assert robot.alongside(c, {(c.metric, c.environment): series[(c.metric, c.environment)]}, [c]) == []


def _git(repo, *a):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *a],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def culprit_repo(tmp_path):
    """base; the culprit (adds table, a size's regression); a later commit elsewhere.
    Returns (repo, {subject: rev})."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    revs = {}
    for subject, path, text in (("base", "f", "0"), ("init: a table", "table", "x" * 100), ("mm: tidy", "f", "1")):
        (repo / path).write_text(text)
        _git(repo, "add", path)
        _git(repo, "commit", "-q", "-m", subject)
        revs[subject] = _git(repo, "rev-parse", "HEAD")
    return repo, revs


def _size(b, step, against):
    """A fake build: the size is the table's, checked out."""
    step.samples = {b.metrics[0]: [2000.0 if (Path(b.tree) / "table").exists() else 1000.0]}


def _sized(tmp_path, repo, revs) -> Bisect:
    b = Bisect(str(repo), revs["base"], revs["mm: tidy"], "build.vmlinux_dec_bytes", "qemu-arm", "/env",
               "/cfg", str(tmp_path / "run"))
    b.steps = [Step(revs["base"], "base", "good", "good", samples={b.metrics[0]: [1000.0]})]
    b.first_bad = {"rev": revs["init: a table"], "subject": "init: a table"}
    return b


def test_a_revert_back_within_the_floor_confirms_and_leaves_the_tree_as_found(culprit_repo, tmp_path):
    repo, revs = culprit_repo
    b = _sized(tmp_path, repo, revs)
    seen = []
    answer = rv.confirm(b, measure=lambda b, step, against: seen.append(step.subject) or _size(b, step, against))
    assert answer["state"] == rv.CONFIRMED and answer["why"].startswith("same against the good revision")
    assert seen == ['Revert "init: a table"'] and answer["step"]["samples"] == {b.metrics[0]: [1000.0]}
    assert json.loads((tmp_path / "run" / rv.REVERT).read_text()) == answer
    assert _git(repo, "symbolic-ref", "--short", "HEAD") == "main" and _git(repo, "status", "--porcelain") == ""
    assert _git(repo, "rev-parse", "HEAD") == revs["mm: tidy"]


def test_a_revert_still_regressed_or_unmeasured_does_not_confirm(culprit_repo, tmp_path):
    repo, revs = culprit_repo
    b = _sized(tmp_path, repo, revs)
    b.first_bad = {"rev": revs["mm: tidy"], "subject": "mm: tidy"}      # the wrong one: the table stays
    answer = rv.confirm(b, measure=_size)
    assert answer["state"] == rv.NOT_CONFIRMED and answer["why"].startswith("regressed against the good")
    from boardlab.kernelbuilds.kbuild import KernelBuildError

    def fails(b, step, against):
        raise KernelBuildError("make: *** [vmlinux] Error 2")
    answer = rv.confirm(b, measure=fails)
    assert answer["state"] == rv.NOT_CONFIRMED and "not measured: KernelBuildError: make" in answer["why"]


def test_a_revert_that_does_not_apply_is_said_and_leaves_the_tree_clean(culprit_repo, tmp_path):
    repo, revs = culprit_repo
    (repo / "table").write_text("y" * 100)        # the table changed after the culprit: a conflict
    _git(repo, "commit", "-q", "-a", "-m", "init: a bigger table")
    b = _sized(tmp_path, repo, revs)
    b.bad = _git(repo, "rev-parse", "HEAD")
    answer = rv.confirm(b, measure=lambda *a: pytest.fail("nothing to measure"))
    assert answer["state"] == rv.NO_APPLY and "CONFLICT" in answer["why"] and "table" in answer["why"]
    assert _git(repo, "status", "--porcelain") == "" and not (repo / ".git" / "REVERT_HEAD").exists()
    assert _git(repo, "symbolic-ref", "--short", "HEAD") == "main"


def _steps_build_by_size(tmp_path, monkeypatch):
    """git bisect run's step processes: the build replaced by the table's size."""
    import os

    from paths import ROOT
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import pathlib, types\nimport boardlab.kernelbuilds.kbuild\n"
        "def build_tree(board, tree, build_dir, config, uimage):\n"
        "    size = 2000 if (pathlib.Path(tree) / 'table').exists() else 1000\n"
        "    return types.SimpleNamespace(figures=lambda: {'vmlinux_dec_bytes': size})\n"
        "boardlab.kernelbuilds.kbuild.build_tree = build_tree\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), str(ROOT),
                                                                   os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize("no_revert", [False, True])
def test_a_bisect_that_names_a_culprit_reverts_it_and_writes_the_report(culprit_repo, tmp_path, monkeypatch,
                                                                        capsys, no_revert):
    from boardlab.bisect import step as bisect_step
    from boardlab.cli import main as boardlab_main
    repo, revs = culprit_repo
    _steps_build_by_size(tmp_path, monkeypatch)
    monkeypatch.setattr(bisect_step, "measure_revision", _size)     # the endpoints and the revert, here
    monkeypatch.setattr(bisect_run, "default_config", lambda board: repo / "f")
    code = boardlab_main(["bisect", "--tree", str(repo), "--good", "HEAD~2", "--bad", "HEAD", "--metric",
                          "build.vmlinux_dec_bytes", "--out", str(tmp_path / "run")]
                         + ["--no-revert"] * no_revert)
    out = capsys.readouterr().out
    assert code == 0 and f"report: {tmp_path / 'run'}/report.txt" in out, out
    text = (tmp_path / "run" / robot.REPORT).read_text()
    assert f"commit:  {revs['init: a table']}\n         'init: a table'" in text
    assert "change:  +100.00 % (95 % interval +100.00..+100.00 %): regressed" in text
    assert "samples: 1 of the good revision, 1 of the first bad, a build each" in text
    assert ("revert:  revert not tried: --no-revert" if no_revert else
            "revert:  confirmed by revert: same against the good revision") in text
    assert "  not looked up (a bisect run by hand" in text
    assert _git(repo, "symbolic-ref", "--short", "HEAD") == "main" and _git(repo, "status", "--porcelain") == ""


def test_the_watch_completes_the_report_notes_it_and_the_page_links_it(tmp_path, monkeypatch):
    """The bisect wrote report.txt; the watch adds the change point and the other boards
    the history measured over the range, names the revert's answer in the note and keeps
    the report's path, which the history page links (a copy beside the page)."""
    from boardlab.bisect import watch as w
    from boardlab.history import charts, notes
    from test_watch import BAD as NIGHT_BAD, GOOD as NIGHT_GOOD, FakeHistory, point
    c = point(+1.45)
    hist = FakeHistory(tmp_path, [c], monkeypatch)
    hist.series = {(c.metric, c.environment): [(NIGHT_GOOD, [20.72]), (NIGHT_BAD, [21.02])],
                   (c.metric, "tqm860l.host"): [(NIGHT_GOOD, [9.0]), (NIGHT_BAD, [9.0])]}
    run_dir = tmp_path / "bisect-1"

    def bisect(tree, good, bad, metric, board):
        b = _state(run_dir)
        b.save()
        (run_dir / rv.REVERT).write_text(json.dumps(CONFIRMED))
        robot.write(run_dir)
        return b
    done, = w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    report = run_dir / robot.REPORT
    assert done["report"] == str(report) and done["revert"] == rv.CONFIRMED
    assert done["note"] == (f"first bad commit {CULPRIT[:12]} 'net: sleep' "
                            f"(bisect {run_dir}; confirmed by revert; report {report})")
    text = report.read_text()
    assert f"seen:    {c.line()}" in text
    assert "  tqm860l.host boot_time/guest_login: 9 -> 9 (+0.00 %): no change point" in text
    record = notes.read(tmp_path)[notes.key(c)]
    assert record["report"] == str(report)
    series = {(c.metric, c.environment): hist.series[(c.metric, c.environment)]}
    page = charts.render(tmp_path / "page", "history.html", "t", "s", series, [c], notes.read(tmp_path))
    assert ' <a href="reports/bisect-1.txt">report</a></td>' in page.read_text()
    assert (tmp_path / "page" / "reports" / "bisect-1.txt").read_text() == text
    assert charts.culprit(c, notes.read(tmp_path)) == f"first bad commit {CULPRIT[:12]} 'net: sleep'"


def test_a_report_that_fails_loses_no_culprit(culprit_repo, tmp_path, monkeypatch, capsys):
    from boardlab.bisect import step as bisect_step
    repo, revs = culprit_repo
    _steps_build_by_size(tmp_path, monkeypatch)
    monkeypatch.setattr(bisect_step, "measure_revision", _size)
    monkeypatch.setattr(bisect_run, "default_config", lambda board: repo / "f")

    def fails(run_dir, *a, **k):
        raise OSError("No space left on device")
    monkeypatch.setattr(robot, "write", fails)
    b = bisect_run.start(repo, "HEAD~2", "HEAD", "build.vmlinux_dec_bytes", out=tmp_path / "run")
    assert b.first_bad["rev"] == revs["init: a table"]
    assert rv.load(tmp_path / "run")["state"] == rv.CONFIRMED
    said = capsys.readouterr()
    assert "WARNING: no report of the culprit: OSError: No space left on device" in said.out + said.err


def test_the_watch_can_leave_the_revert_out(tmp_path, monkeypatch):
    from boardlab.bisect import watch as w
    from boardlab.cli import main as boardlab_main
    (tmp_path / "tree" / ".git").mkdir(parents=True)
    passed = []
    monkeypatch.setattr(w, "watch", lambda server, tree, **k: passed.append(k["bisect"]) or [])
    for flag in ([], ["--no-revert"]):
        assert boardlab_main(["history", "watch", "--tree", str(tmp_path / "tree"),
                              "--data", str(tmp_path / "data")] + flag) == 0
    assert passed[0] is bisect_run.start and passed[1].keywords == {"revert": False}


def test_a_culprit_that_moved_two_metrics_gets_one_report_a_section_each(tmp_path):
    """report.txt was rewritten for each change point: a culprit that moved two metrics got
    figures of one and the 'seen' line and other boards of the other (issue 'Answers
    without holes'). Now one report, each metric's section with its own figures."""
    b = Bisect("/src/linux", GOOD, BAD, "boot_time.guest_login,memory.free_used_kb", "qemu-arm",
               "/lab/qemu-arm.yaml", "/kernels/qemu-arm.config", str(tmp_path))
    login, used = b.metrics
    b.steps = [Step(GOOD, "good one", "good", "good", samples={login: [20.7218, 20.7228, 20.7222], used: [4096, 4096, 4096]}),
               Step(BAD, "bad one", "bad", "bad", samples={login: [21.0231], used: [4608]}),
               Step(CULPRIT, "net: sleep", "step", "bad", samples={login: [21.0228], used: [4608]})]
    b.first_bad = {"rev": CULPRIT, "subject": "net: sleep"}
    b.save()
    rows = {login: [{"environment": "tqm860l.host", "metric": "boot_time/guest_login", "before": 9.0, "after": 9.0,
                     "change_pct": 0.0, "status": "no change point"}], used: []}
    robot.write(tmp_path, sections={login: {"others": rows[login], "seen": "guest_login seen"},
                                    used: {"others": rows[used], "seen": "free_used seen"}})
    text = (tmp_path / robot.REPORT).read_text()
    assert text.count("commit:  ") == 1 and text.count("metric:  ") == 2
    first, second = text.split("metric:  ")[1:]
    assert first.startswith(login) and "seen:    guest_login seen" in first and "median   20.7222 s" in first
    assert "tqm860l.host boot_time/guest_login" in first and "free_used" not in first
    assert second.startswith(used) and "seen:    free_used seen" in second and "median   4096 kB" in second
    assert "4608 kB" in second and "none were measured" in second and "guest_login seen" not in second
    assert text.startswith("boardlab bisect: a ") and f"of {login}; a " in text.splitlines()[0]


def test_the_report_ends_with_the_regzbot_line_and_the_compare_that_reproduces_it(tmp_path):
    """What a maintainer sends to regzbot, last; and the two kernels measured again by
    `boardlab compare` from the images the bisect kept (the whole bisect after it)."""
    b = _state(tmp_path)
    for s in b.steps:
        s.dir = str(tmp_path / f"step-{s.rev[:12]}")
        Path(s.dir).mkdir()
        (Path(s.dir) / f"bisect-{s.rev[:12]}.uImage").write_bytes(b"uImage")
    text = robot.report(b, CHANGE, CONFIRMED, [])
    assert text.rstrip("\n").splitlines()[-1] == f"#regzbot introduced: {CULPRIT[:12]}"
    assert (f"  boardlab compare --board qemu-arm --kernel {tmp_path}/step-{GOOD[:12]}/bisect-{GOOD[:12]}.uImage "
            f"--kernel {tmp_path}/step-{CULPRIT[:12]}/bisect-{CULPRIT[:12]}.uImage --families boot_time --root nfs"
            in text)
    (Path(b.steps[2].dir) / f"bisect-{CULPRIT[:12]}.uImage").unlink()   # an image not kept: no line
    text = robot.report(b, CHANGE, CONFIRMED, [])
    assert "boardlab compare" not in text and "boardlab bisect --tree" in text
