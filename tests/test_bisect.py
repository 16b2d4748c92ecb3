"""boardlab bisect: the decisions as pure code, the refusals before anything is built, and
three real bisects over a kernel tree made from Debian's linux-source-6.1 (tests/kerneltree.py),
each finding the commit that caused its regression: size (the build decides), boot and
syscall (measured on the virtual board)."""
import json
import os
import subprocess

import pytest

from boardlab.measure import catalogue
from paths import ROOT
from boardlab.bisect import BAD, GOOD, SKIP, Bisect, BisectError, BisectLabFault, Step, check_tree
from boardlab.bisect import run as bisect_run
from boardlab.bisect.step import _enough, judge
from boardlab.sharing.boardlock import BoardBusy
from boardlab.sharing.placehold import PlaceBusy
from boardlab.boot.bootlog import KernelBootError, LabBootError
from boardlab.boot.powerctl import PowerError
from boardlab.boot.staging import StagingError
from boardlab.cli import main as boardlab_main


def _bisect(tmp_path, metric="boot_time.guest_login", good=(20.7218, 20.7228, 20.7222)) -> Bisect:
    b = Bisect("/tree", "g", "b", metric, "qemu-arm", "/env", "/cfg", str(tmp_path))
    b.steps.append(Step("a" * 40, "good one", "good", "good", samples={metric: list(good)}))
    return b


def _step(b: Bisect, *samples, role="step") -> Step:
    """A step of b's single metric with these samples."""
    return Step("s" * 40, "", role, samples={b.metric: list(samples)})


def test_an_exact_metric_needs_one_boot_a_step_once_the_good_revision_shows_it(tmp_path):
    """The good revision boots until three samples show the figure repeats; then a step
    is decided by one boot when that boot decides."""
    b = _bisect(tmp_path)
    good = _step(b, 20.7218, role="good")
    assert not _enough(b, good, None)
    good.samples[b.metric].append(20.7228)
    assert not _enough(b, good, None)      # two samples do not show exactness
    good.samples[b.metric].append(20.7222)
    assert _enough(b, good, None)
    assert _enough(b, _step(b, 21.02), b.good_samples())


def test_a_step_near_the_floor_takes_more_boots_and_is_decided_not_skipped(tmp_path):
    """Exact samples whose differences reach across the floor (+0.98..+1.03 %): one boot
    is not enough, and the step is not skipped: more boots, up to --max-repeats, until
    the rank test names it (the culprit found instead of skipped)."""
    good = [20.0000, 20.0020, 20.0040, 20.0010, 20.0030]
    b = _bisect(tmp_path, good=good)
    near = _step(b, 20.2040)      # +1.0 %: the floor is 0.2 m
    assert not _enough(b, near, b.good_samples())
    near.samples[b.metric] += [20.2060, 20.2080, 20.2050, 20.2070]
    assert _enough(b, near, b.good_samples())
    assert judge(b, near) == BAD and near.verdict == "regressed"


def test_a_skipped_step_says_what_would_decide_it(tmp_path):
    n = _bisect(tmp_path, "jitter.p99_us", good=[100, 104, 98, 110, 101])
    wide = _step(n, 90, 140, 100, 125, 105)
    assert judge(n, wide) == SKIP and "skipped: " in wide.why and "would" in wide.why


def test_a_noisy_metric_takes_repeats_then_more_while_unknown(tmp_path):
    b = _bisect(tmp_path, "jitter.p99_us", good=[100, 104, 98, 110, 101])
    step = _step(b, 100, 120, 95, 130)
    assert not _enough(b, step, b.good_samples())           # fewer than --repeats
    step.samples[b.metric].append(99)
    # unknown, and no 10 samples drawn from this spread would decide: stop, say why
    assert _enough(b, step, b.good_samples())
    near = _step(b, 101, 103, 99, 104, 100)
    near.samples[b.metric][1:1] = [140]                     # one wild boot: in reach, more boots
    assert not _enough(b, near, b.good_samples())
    near.samples[b.metric] += [97] * 4
    assert _enough(b, near, b.good_samples())               # --max-repeats reached


def test_regressed_is_bad_same_is_good_unknown_is_skip(tmp_path):
    b = _bisect(tmp_path)
    later = _step(b, 21.0228)    # +1.45 %: beyond the 1 % floor
    assert judge(b, later) == BAD and later.verdict == "regressed"
    same = _step(b, 20.7301)
    assert judge(b, same) == GOOD and same.verdict == "same"
    n = _bisect(tmp_path, "jitter.p99_us", good=[100, 104, 98, 110, 101])
    wide = _step(n, 90, 140, 100, 125, 105)
    assert judge(n, wide) == SKIP and wide.verdict == "unknown"


def test_a_step_is_judged_once_for_its_last_samples(tmp_path, monkeypatch):
    """The boots stop when the judge decides; the step's verdict is that same answer, not
    the figures judged a second time."""
    from boardlab.bisect import step as step_module
    b = _bisect(tmp_path)
    later = _step(b, 21.0228)
    calls = []
    real = step_module.decide
    monkeypatch.setattr(step_module, "decide", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    step_module._decided.cache_clear()
    assert _enough(b, later, b.good_samples())
    assert judge(b, later) == BAD and len(calls) == 1


def test_the_state_survives_the_step_processes(tmp_path):
    b = _bisect(tmp_path)
    b.save()
    again = Bisect.load(tmp_path)
    assert again == b and again.good_samples() == {b.metric: [20.7218, 20.7228, 20.7222]}
    assert "| 0 | aaaaaaaaaaaa (good) | good one |" in bisect_run.table(again)
    from boardlab.measure.clocks import this_host
    assert (f"clocks: {b.metric} guest-deterministic; build s the host clock ({this_host()['id']})"
            in bisect_run.summary(again))


# ---- several metrics, one bisect ---------------------------------------------------------

USED, FREE, LOGIN = "memory.free_used_kb", "memory.free_free_kb", "boot_time.guest_login"


def _several(tmp_path, metrics=(USED, FREE, LOGIN)) -> Bisect:
    """A bisect of three metrics; the good revision's exact samples of each."""
    b = Bisect("/tree", "g", "b", ",".join(metrics), "qemu-arm", "/env", "/cfg", str(tmp_path))
    good = {USED: [20000.0] * 3, FREE: [90000.0] * 3, LOGIN: [20.7218, 20.7228, 20.7222],
            "jitter.p99_us": [100, 104, 98, 110, 101]}
    b.steps.append(Step("a" * 40, "good one", "good", "good", samples={m: good[m] for m in metrics}))
    return b


def _at(b, used, free, login, role="step", rev="s" * 40) -> Step:
    return Step(rev, "", role, samples={USED: [used], FREE: [free], LOGIN: [login]})


def test_a_step_is_bad_when_any_metric_regressed_good_when_none_did(tmp_path):
    """Used memory regresses at the culprit and free memory moves with it; the boot time
    never moves: each is judged on its own, the step is bad for either, good for none."""
    from boardlab.bisect.step import answer, combined
    b = _several(tmp_path)
    assert b.metrics == [USED, FREE, LOGIN] and b.metric == f"{USED},{FREE},{LOGIN}"
    assert b.families == ["boot_time", "memory"] and b.needs_boot
    before = _at(b, 20000, 90000, 20.7230)
    assert _enough(b, before, b.good_samples())
    assert judge(b, before) == GOOD and before.verdict == "same"
    assert before.verdicts == {USED: "same", FREE: "same", LOGIN: "same"}
    culprit = _at(b, 20512, 89488, 20.7225)
    assert judge(b, culprit) == BAD and culprit.verdict == "regressed"
    assert culprit.verdicts == {USED: "regressed", FREE: "regressed", LOGIN: "same"}
    assert f"{USED}: " in culprit.why and f"{LOGIN}: " in culprit.why   # each named
    alone = _at(b, 20512, 90000, 20.7225)        # one of them is enough
    assert judge(b, alone) == BAD and alone.verdicts[FREE] == "same"
    assert answer({USED: "same", FREE: "improved"}) == GOOD and combined({USED: "same", FREE: "improved"}) == "same"
    assert answer({USED: "same", FREE: "unknown"}) == SKIP and combined({USED: "same", FREE: "unknown"}) == "unknown"
    assert answer({USED: "unknown", FREE: "regressed"}) == BAD
    assert answer({}) == SKIP


def test_a_step_with_one_metric_undecided_is_skipped_naming_it(tmp_path):
    """A noisy metric still unknown after --max-repeats: the step says which metric stood
    and what would decide it; one that regressed makes it bad all the same."""
    b = _several(tmp_path, (USED, "jitter.p99_us"))
    wide = Step("s" * 40, "", "step", samples={USED: [20000.0], "jitter.p99_us": [90, 140, 100, 125, 105]})
    assert _enough(b, wide, b.good_samples())     # the size decided, the noisy one out of reach
    assert judge(b, wide) == SKIP and wide.verdicts == {USED: "same", "jitter.p99_us": "unknown"}
    assert "jitter.p99_us: " in wide.why and "skipped: " in wide.why and "would" in wide.why
    assert f"{USED}: " in wide.why and "skipped" not in wide.why.split("jitter.p99_us: ")[0]
    worse = Step("s" * 40, "", "step", samples={USED: [20512.0], "jitter.p99_us": [90, 140, 100, 125, 105]})
    assert judge(b, worse) == BAD
    assert "skipped" not in worse.why           # not skipped: nothing to decide for a bad step
    missing = Step("s" * 40, "", "step", samples={USED: [20000.0]})
    assert not _enough(b, missing, b.good_samples())
    assert judge(b, missing) == SKIP and "no samples of jitter.p99_us" in missing.why


def test_every_metric_is_enough_before_a_step_stops_booting(tmp_path):
    """One metric decided does not stop the boots while another is still in reach."""
    from boardlab.bisect.step import metric_enough
    b = _several(tmp_path, (USED, "jitter.p99_us"))
    good = b.good_samples()
    step = Step("s" * 40, "", "step", samples={USED: [20000.0], "jitter.p99_us": [101, 103]})
    assert metric_enough(b, USED, step.samples[USED], good[USED])
    assert not metric_enough(b, "jitter.p99_us", step.samples["jitter.p99_us"], good["jitter.p99_us"])
    assert not _enough(b, step, good)
    assert metric_enough(b, "build.vmlinux_bss_bytes", [1.0], None)   # a size: the build decides


def test_the_bad_end_drops_a_metric_it_does_not_regress_and_the_result_names_each(tmp_path):
    from boardlab.bisect.run import at_first_bad, endpoint_metrics
    b = _several(tmp_path)
    bad = _at(b, 20512, 89488, 20.7225, role="bad", rev="b" * 40)
    assert judge(b, bad) == BAD
    kept, dropped = endpoint_metrics(bad.verdicts, b.metrics)
    assert kept == [USED, FREE] and dropped == [LOGIN]
    assert endpoint_metrics({}, b.metrics) == (b.metrics, [])    # a failed boot counted bad: all kept
    b.steps.append(bad)
    b.metrics, b.dropped = kept, {LOGIN: "did not regress between g and b: same"}
    culprit = Step("c" * 40, "mm: leak", "step", samples={USED: [20512.0], FREE: [89488.0]})
    assert judge(b, culprit) == BAD and culprit.verdicts == {USED: "regressed", FREE: "regressed"}
    b.steps.append(culprit)
    b.first_bad = {"rev": "c" * 40, "subject": "mm: leak", "metrics": at_first_bad(b, "c" * 40)}
    at = b.first_bad["metrics"]
    assert at[USED] == {"verdict": "regressed", "good": 20000.0, "bad": 20512.0, "change_pct": 2.56}
    assert at[FREE]["verdict"] == "regressed" and at[FREE]["change_pct"] == -0.569
    assert at[LOGIN]["verdict"] == "dropped"
    panicked = Step("e" * 40, "mm: panic", "step", "bad", why="boot failed: kernel panic")
    b.steps.append(panicked)                  # --failed-boot bad: the culprit has no figures
    assert at_first_bad(b, "e" * 40)[USED]["verdict"] == "not measured (boot failed: kernel panic)"
    b.steps.pop()
    said = bisect_run.summary(b)
    assert f"first bad commit for {USED},{FREE}: {'c' * 40}\n    mm: leak\n" in said
    assert f"    {USED}: regressed, good 20000 kB -> 20512 kB (+2.56 %)\n" in said
    assert f"    {FREE}: regressed, good 90000 kB -> 89488 kB (-0.57 %)\n" in said
    assert f"    {LOGIN}: not bisected: did not regress between g and b: same\n" in said
    assert f"| {USED} (kB) | {FREE} (kB) | {LOGIN} (s) |" in said
    b.save()
    assert Bisect.load(tmp_path) == b


def test_a_state_of_one_metric_written_before_still_loads(tmp_path):
    (tmp_path / "bisect.json").write_text(json.dumps({
        "tree": "/t", "good": "g", "bad": "b", "metric": LOGIN, "board": "qemu-arm", "env": "/e",
        "config": "/c", "run_dir": str(tmp_path),
        "steps": [{"rev": "a" * 40, "subject": "", "role": "good", "samples": [20.7]}]}))
    b = Bisect.load(tmp_path)
    assert b.metrics == [LOGIN] and b.good_samples() == {LOGIN: [20.7]}
    assert Bisect("/t", "g", "b", [USED, FREE, USED], "qemu-arm", "", "", "").metrics == [USED, FREE]


def test_a_revision_is_built_once_and_each_boot_measures_the_families_still_undecided(tmp_path, monkeypatch):
    """Used memory and the login time (exact) and cyclictest's p99 (noisy) of the good
    revision: one build; the first three boots measure every family, then the exact ones
    have shown they repeat and the last two boots run the jitter alone (--repeats 5)."""
    import contextlib

    import boardlab.boot.session as session
    from boardlab.bisect import step as bisect_step
    from boardlab.measure import sample
    b = _several(tmp_path, (USED, LOGIN, "jitter.p99_us"))
    builds, measured = [], []
    monkeypatch.setattr(bisect_step, "build_tree", lambda *a: builds.append(a) or
                        type("Built", (), {"figures": lambda self: {}})())

    class Strategy:
        last_boot = type("Rec", (), {"qemu_clock": None})()

        def select(self, **k):
            pass

        def reboot(self):
            measured.append([])
            return None

    @contextlib.contextmanager
    def board_session(env, log_dir, **_):
        yield Strategy(), lambda: None
    monkeypatch.setattr(session, "board_session", board_session)
    jitter = iter([100, 104, 98, 110, 101])

    def family(name, shell, rec, metric=None, tools=None):
        measured[-1].append(name)
        if name == "jitter":
            return {"jitter.p99_us": next(jitter)}
        return {"boot_time": {LOGIN: 20.7220, "boot_time.guest_freeing_init": 3.1},
                "memory": {USED: 20000.0}}[name]
    monkeypatch.setattr(sample, "family", family)
    good = Step("a" * 40, "", "good", dir=str(tmp_path / "good"))
    bisect_step.measure_revision(b, good, None)
    assert len(builds) == 1
    assert measured == [["boot_time", "memory", "jitter"]] * 3 + [["jitter"]] * 2
    assert {m: len(v) for m, v in good.samples.items()} == {LOGIN: 3, USED: 3, "jitter.p99_us": 5}
    assert len(good.boot_s) == 5


def _sizes_repo(tmp_path, commits=6):
    """A tree of `commits` commits whose 'build' reads the commit's number from f."""
    repo = tmp_path / "sizes"
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    for n in range(commits):
        (repo / "f").write_text(str(n))
        run("add", "f")
        run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", f"c{n}")
    return repo


def test_one_bisect_judges_every_metric_and_names_each_at_the_first_bad_commit(tmp_path, monkeypatch):
    """Three sizes over one range, one bisect: bss grows at c3, data with it, text never
    moves (dropped at the bad end, said). Each step builds once and judges both."""
    repo = _sizes_repo(tmp_path)
    monkeypatch.setattr(bisect_run, "default_config", lambda board: repo / "f")
    sizes = ("import pathlib\n"
             "class Built:\n"
             "    def __init__(self, n): self.n = n\n"
             "    def figures(self):\n"
             "        big = self.n >= 3\n"
             "        return {'vmlinux_bss_bytes': 200000 if big else 100000,\n"
             "                'vmlinux_data_bytes': 300000 if big else 290000, 'vmlinux_text_bytes': 500000}\n"
             "def build_tree(board, tree, build_dir, config, uimage):\n"
             "    return Built(int((pathlib.Path(tree) / 'f').read_text()))\n")
    here = {}
    exec(sizes, here)                           # the endpoints, built in this process
    from boardlab.bisect import step as bisect_step
    monkeypatch.setattr(bisect_step, "build_tree", here["build_tree"])
    hook = tmp_path / "hook"                    # the steps, in git bisect run's processes
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(sizes + "import boardlab.kernelbuilds.kbuild\n"
                                           "boardlab.kernelbuilds.kbuild.build_tree = build_tree\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), str(ROOT),
                                                                   os.environ.get("PYTHONPATH")])))
    metrics = "build.vmlinux_bss_bytes,build.vmlinux_data_bytes,build.vmlinux_text_bytes"
    b = bisect_run.start(repo, "HEAD~5", "HEAD", metrics, out=tmp_path / "run")
    c3 = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD~2"], capture_output=True,
                        text=True).stdout.strip()
    assert b.first_bad and b.first_bad["rev"] == c3, bisect_run.summary(b)
    assert b.metrics == ["build.vmlinux_bss_bytes", "build.vmlinux_data_bytes"]
    assert list(b.dropped) == ["build.vmlinux_text_bytes"]
    at = b.first_bad["metrics"]
    assert at["build.vmlinux_bss_bytes"]["change_pct"] == 100.0
    assert at["build.vmlinux_data_bytes"]["verdict"] == "regressed"
    assert at["build.vmlinux_text_bytes"]["verdict"] == "dropped"
    steps = [s for s in b.steps if s.role == "step"]
    assert steps and all(set(s.samples) == set(b.metrics) for s in steps)   # one build: both
    said = bisect_run.summary(b)
    assert "build.vmlinux_text_bytes: not bisected: did not regress" in said


@pytest.fixture
def small_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    for n in range(3):
        (repo / "f").write_text(str(n))
        run("add", "f")
        run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", f"c{n}")
    return repo


@pytest.mark.parametrize("failure, failed_boot, answer", [
    (KernelBootError("kernel panic: VFS"), "skip", "skip"),
    (KernelBootError("kernel panic: VFS"), "bad", "bad"),
    (LabBootError("no answer from the TFTP server 192.168.10.1"), "bad", "stop"),
    (LabBootError("no answer from the TFTP server 192.168.10.1"), "skip", "stop"),
    (BoardBusy("board qemu-arm is in use by pid 4242"), "bad", "stop"),
    (PlaceBusy("board qemu-arm is shared with LAVA: held by vm/alice"), "bad", "stop"),
    (StagingError("copying uImage to lab host lab1 failed"), "skip", "stop"),
    (PowerError("power switch 127.0.0.1:8101 did not answer"), "bad", "stop"),
])
def test_only_the_kernels_own_failure_is_a_failed_boot(small_repo, tmp_path, monkeypatch,
                                                         failure, failed_boot, answer):
    """A lab fault (busy board, ser2net or power down, TFTP, staging) never answers for a
    revision: with --failed-boot bad it would name the wrong commit, with skip an outage
    would skip every revision. The kernel's own failure follows --failed-boot."""
    from boardlab.bisect import step as bisect_step

    def fail(b, step, against):
        raise failure
    monkeypatch.setattr(bisect_step, "measure_revision", fail)
    b = _bisect(tmp_path)
    b.tree, b.failed_boot = str(small_repo), failed_boot
    step = bisect_step.run_revision(b, "HEAD", "step")
    assert step.answer == answer, step.why
    assert step.why.startswith("lab fault" if answer == "stop" else "boot failed")
    assert Bisect.load(tmp_path).steps[-1].answer == answer   # kept in the state


def _every_step_raises(tmp_path, monkeypatch, imports: str, error: str):
    """The step processes (git bisect run's) meet `error` where they build."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        f"import boardlab.kernelbuilds.kbuild\n{imports}\n"
        f"def build_tree(*a, **k):\n    raise {error}\n"
        "boardlab.kernelbuilds.kbuild.build_tree = build_tree\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), str(ROOT),
                                                                   os.environ.get("PYTHONPATH")])))


def _endpoints_measured(monkeypatch, small_repo, calls=None):
    """good 1000, bad 2000 (a size: the build decides), without a build."""
    from boardlab.bisect import step as bisect_step
    monkeypatch.setattr(bisect_run, "default_config", lambda board: small_repo / "f")
    calls = [] if calls is None else calls

    def measure(b, step, against):
        calls.append(step.role)
        step.samples = {b.metric: [1000.0 if step.role == "good" else 2000.0]}
    monkeypatch.setattr(bisect_step, "measure_revision", measure)


def test_a_range_all_skipped_names_the_revisions_its_culprit_is_among(small_repo, tmp_path, monkeypatch):
    """Every step's build fails: git is left with skipped revisions only. The result names
    them, each with why it was skipped, not bisect.log alone."""
    _endpoints_measured(monkeypatch, small_repo)
    _every_step_raises(tmp_path, monkeypatch, "from boardlab.kernelbuilds.kbuild import KernelBuildError as E",
                       "E('make: *** [vmlinux] Error 2')")
    b = bisect_run.start(small_repo, "HEAD~2", "HEAD", "build.vmlinux_dec_bytes", out=tmp_path / "run")
    revs = subprocess.run(["git", "-C", str(small_repo), "rev-parse", "HEAD", "HEAD~1"], capture_output=True,
                          text=True).stdout.split()
    assert b.first_bad is None
    assert [(c["rev"], c["subject"]) for c in b.candidates] == [(revs[0], "c2"), (revs[1], "c1")]
    assert b.candidates[1]["why"].startswith("build failed: make: *** [vmlinux] Error 2")
    assert b.candidates[0]["why"] == "bad"
    said = bisect_run.summary(b)
    assert f"skipped revisions only; it is one of\n    {revs[0][:12]} c2 (bad)\n    {revs[1][:12]} c1 (build" in said
    assert Bisect.load(tmp_path / "run").candidates == b.candidates


def test_a_lab_fault_stops_the_whole_bisect_and_says_so(small_repo, tmp_path, monkeypatch):
    """git bisect run aborts on the step's exit code; the bisect names the fault, finds no
    commit and leaves the tree as found."""
    calls = []
    _endpoints_measured(monkeypatch, small_repo, calls)
    # the step processes (git bisect run's) meet a lab fault: ser2net gone
    _every_step_raises(tmp_path, monkeypatch, "from boardlab.boot.bootlog import LabBootError as E",
                       "E('the console (ser2net 127.0.0.1 port 5101) failed: EOF')")
    head = subprocess.run(["git", "-C", str(small_repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    with pytest.raises(BisectLabFault, match=r"stopped at [0-9a-f]{12} .*lab fault: .*ser2net"):
        bisect_run.start(small_repo, "HEAD~2", "HEAD", "build.vmlinux_dec_bytes",
                         out=tmp_path / "run")
    assert calls == ["good", "bad"]
    now = subprocess.run(["git", "-C", str(small_repo), "rev-parse", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    assert now == head and not (small_repo / ".git" / "BISECT_START").exists()


def test_a_tree_that_cannot_be_bisected_is_refused_naming_why(small_repo, tmp_path):
    head = subprocess.run(["git", "-C", str(small_repo), "rev-parse", "HEAD", "HEAD~2"],
                          capture_output=True, text=True).stdout.split()
    # names relative to HEAD are resolved once: the checkouts of a bisect move HEAD
    assert check_tree(small_repo, "HEAD~2", "HEAD") == ("main", head[1], head[0])
    with pytest.raises(BisectError, match="no revision 'v9'"):
        check_tree(small_repo, "v9", "HEAD")
    with pytest.raises(BisectError, match="not an ancestor"):
        check_tree(small_repo, "HEAD", "HEAD~2")
    (small_repo / "f").write_text("edited")
    with pytest.raises(BisectError, match="uncommitted changes"):
        check_tree(small_repo, "HEAD~2", "HEAD")
    with pytest.raises(BisectError, match="not a git work tree"):
        check_tree(tmp_path, "a", "b")


def test_the_command_names_bad_input_before_building(small_repo, tmp_path, capsys):
    args = ["bisect", "--tree", str(small_repo), "--good", "HEAD~2", "--bad", "HEAD",
            "--out", str(tmp_path / "run")]
    assert boardlab_main(args + ["--metric", "boot_time.nonsense"]) == 2
    assert "not in the catalogue" in capsys.readouterr().err
    assert boardlab_main(args + ["--metric", "build.real_s"]) == 2
    assert "incremental build's time says nothing" in capsys.readouterr().err
    assert boardlab_main(args + ["--metric", "build.vmlinux_text_bytes", "--config", "/nonexistent"]) == 2
    assert "/nonexistent not found" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


# ---- real bisects over a kernel tree ------------------------------------------------------

@pytest.fixture(scope="module")
def kernel_tree():
    from kerneltree import make_tree
    return make_tree()


def _found(b: Bisect, tree, culprit: str):
    assert b.first_bad, bisect_run.summary(b)
    assert b.first_bad["rev"] == tree.culprits[culprit], bisect_run.summary(b)
    head = subprocess.run(["git", "-C", str(tree.path), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert head == tree.head and not (tree.path / ".git" / "BISECT_START").exists()   # left as found
    run = b.run_dir
    assert "# first bad commit" in open(f"{run}/bisect.log").read()
    steps = [s for s in b.steps if s.role == "step"]
    assert steps and all((json.load(open(f"{s.dir}/results.json"))["metrics"]) for s in steps if s.samples)
    return steps


@pytest.mark.slow
@pytest.mark.vlab   # no daemon, but the lab host's shared kernel tree and build cache
def test_bisect_of_a_size_metric_finds_the_table_without_a_boot(kernel_tree, tmp_path):
    b = bisect_run.start(kernel_tree.path, kernel_tree.base, kernel_tree.head,
                         "build.vmlinux_dec_bytes", out=tmp_path / "run")
    steps = _found(b, kernel_tree, "size")
    assert all(not s.boot_s for s in b.steps)
    assert len(steps) <= 5    # 18 commits: log2 steps


@pytest.mark.slow
@pytest.mark.vlab
@pytest.mark.parametrize("metric, culprit", [("boot_time.guest_login", "boot"),
                                             ("lmbench.lat_syscall_null_us", "syscall")])
def test_bisect_on_the_board_finds_the_commit(kernel_tree, qemu, tmp_path, metric, culprit):
    assert catalogue.spec(metric).exact
    qemu.transition("off")      # the bisect's own sessions take the board
    b = bisect_run.start(kernel_tree.path, kernel_tree.base, kernel_tree.head, metric,
                         out=tmp_path / "run")
    steps = _found(b, kernel_tree, culprit)
    assert all(len(v) == 1 for s in steps for v in s.samples.values()), "one boot a step for an exact metric"
    if culprit == "boot":   # said before the bisect began: the initcall the commit slowed
        assert b.hint.startswith("initcall.virtio_net_driver_init +3"), b.hint
    assert qemu.power.get() is False     # the board is off after the bisect


@pytest.mark.slow
@pytest.mark.vlab
def test_a_bisect_on_the_powerpc_board_names_the_commit_that_slows_an_lmbench_figure(kernel_tree, ppc, tmp_path):
    """Issue 'The study whole on PowerPC': bisect works on qemu-ppc for an lmbench metric,
    measured with the project's programs (its record's set for the e500mc): the tree built
    for the board with its own config, one boot a step (the figure is exact)."""
    metric = "lmbench.lat_syscall_null_us"
    ppc.transition("off")
    b = bisect_run.start(kernel_tree.path, kernel_tree.base, kernel_tree.head, metric, board="qemu-ppc",
                         out=tmp_path / "run")
    steps = _found(b, kernel_tree, "syscall")
    assert all(len(v) == 1 for s in steps for v in s.samples.values()), "one boot a step for an exact metric"
    figures = json.load(open(f"{steps[0].dir}/results.json"))["metrics"]
    assert {(m["settings"] or {}).get("tools") for m in figures if m["suite"] == "lmbench"} == {"own"}
    assert ppc.power.get() is False


@pytest.mark.slow
@pytest.mark.vlab
def test_one_commit_moving_three_metrics_on_two_clocks_is_one_bisect_one_report(kernel_tree, qemu, tmp_path,
                                                                                monkeypatch):
    """Issue 'Answers without holes', its goal: the boot commit sleeps in virtio-net's
    initcall and adds a 128 KiB bss array, so guest_freeing_init and guest_login (the
    board's deterministic clock) and vmlinux_bss_bytes (a size: no clock) move at once.
    The watch, given the three change points the history would hold over one range, runs
    ONE real bisect on the board, names the commit for all three, and writes one report
    with a section per metric, each with its own figures."""
    from test_watch import FakeHistory
    from boardlab.bisect import robot, watch as w
    from boardlab.history.changes import ChangePoint
    culprit = kernel_tree.culprits["boot"]
    after = subprocess.run(["git", "-C", str(kernel_tree.path), "rev-list", "--reverse", f"{culprit}..master"],
                           capture_output=True, text=True, check=True).stdout.split()
    good, bad = kernel_tree.culprits["size"][:12], after[3][:12]     # the boot commit inside, syscall's not
    moved = [("boot_time/guest_freeing_init", "qemu-arm.guest-deterministic"),
             ("boot_time/guest_login", "qemu-arm.guest-deterministic"),
             ("build/vmlinux_bss_bytes", "qemu-arm.none")]
    hist = FakeHistory(tmp_path, [ChangePoint(m, env, bad, good, [bad], 4.0, (3.9, 4.1), 1e-6)
                                  for m, env in moved], monkeypatch)
    qemu.transition("off")
    calls = []

    def bisect(*a, **k):
        calls.append(a[3])
        return bisect_run.start(*a, out=tmp_path / "run", **k)
    done = w.watch(hist, kernel_tree.path, progress=lambda *_: None, bisect=bisect)
    assert calls == ["boot_time.guest_freeing_init,boot_time.guest_login,build.vmlinux_bss_bytes"]
    assert [e["first_bad"]["rev"] for e in done] == [culprit] * 3, [e["result"] for e in done]
    assert {e["report"] for e in done} == {str(tmp_path / "run" / robot.REPORT)}
    text = (tmp_path / "run" / robot.REPORT).read_text()
    assert text.count("commit:  ") == 1 and text.rstrip().endswith(f"#regzbot introduced: {culprit[:12]}")
    sections = text.split("metric:  ")[1:]
    assert [s.split(" ", 1)[0] for s in sections] == [m.replace("/", ".") for m, _ in moved]

    def medians(section):   # the section's own good and first bad medians
        row = next(ln for ln in section.splitlines() if ln.startswith("median"))
        return [float(x) for x in row.split()[1::2]]
    for section, (metric, _) in zip(sections, moved):
        good_median, bad_median = medians(section)
        if metric.startswith("build/"):
            assert bad_median - good_median == 131072, section
        else:
            # the 300 ms msleep read +91 ms on this board's deterministic clock (measured, not
            # reasoned); what matters here: each section shows its own metric's move
            assert 0.05 < bad_median - good_median < 0.4, section
    assert qemu.power.get() is False


def test_a_board_bisects_with_its_own_kernel_config_by_default(tmp_path):
    from boardlab.bisect.run import default_config
    assert default_config("qemu-arm") == ROOT / "kernels/virt-nfs/qemu-arm.config"
    assert default_config("tqm860l") == ROOT / "kernels/6.1/tqm860l.config"
    with pytest.raises(BisectError, match="board smdk24a0: no kernel config .*--config"):
        default_config("smdk24a0")


def test_a_second_bisect_of_the_same_tree_waits_its_turn_up_to_a_bound(small_repo, tmp_path, capsys,
                                                                       monkeypatch):
    """Two bisects on one tree would reset each other's `git bisect` (seen when two test
    runs shared the kernel tree in /var/cache/boardlab): the second waits, and past its
    bound is refused naming the holder, before anything is written."""
    import boardlab.bisect as bisect_pkg
    from boardlab.bisect import tree_lock
    monkeypatch.setattr(bisect_pkg, "TREE_WAIT_S", 0.3)
    monkeypatch.setattr(bisect_pkg, "TREE_POLL_S", 0.05)
    with tree_lock(small_repo, "bisect of x"):
        code = boardlab_main(["bisect", "--tree", str(small_repo), "--good", "HEAD~2", "--bad",
                              "HEAD", "--metric", "build.vmlinux_dec_bytes", "--config",
                              str(small_repo / "f"), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and f"still held after 0 s by pid {os.getpid()}, bisect of x since" in err, err
    assert not (tmp_path / "run").exists()


def test_a_nightly_during_a_bisect_waits_then_runs(small_repo, monkeypatch):
    """A bisect still running at the night's hour: the nightly says who holds the tree,
    waits, and takes it once the bisect lets go."""
    import threading

    import boardlab.bisect as bisect_pkg
    from boardlab.bisect import tree_lock
    monkeypatch.setattr(bisect_pkg, "TREE_POLL_S", 0.05)
    held, release = threading.Event(), threading.Event()

    def bisect():
        with tree_lock(small_repo, "bisect of build.bss_bytes a..b"):
            held.set()
            release.wait(5)
    t = threading.Thread(target=bisect)
    t.start()
    held.wait(5)
    said = []
    threading.Timer(0.3, release.set).start()
    with tree_lock(small_repo, "nightly of main", wait_s=10, say=said.append):
        assert release.is_set()                       # it waited for the bisect
        holder = (small_repo / ".git" / "boardlab-bisect.lock").read_text()
        assert holder.startswith(f"pid {os.getpid()}, nightly of main since")
    t.join()
    assert len(said) == 1 and "held by pid" in said[0] and "bisect of build.bss_bytes a..b" in said[0]


def test_a_nightly_of_no_branch_says_so_in_one_line_and_leaves_nothing(small_repo, tmp_path, capsys):
    before = sorted(p.name for p in (small_repo / ".git").iterdir())
    code = boardlab_main(["nightly", "--tree", str(small_repo), "--branch", "nope", "--families", "",
                          "--config", str(small_repo / "f"), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no branch or revision 'nope'" in err, err
    assert sorted(p.name for p in (small_repo / ".git").iterdir()) == before
    assert not (tmp_path / "run").exists()


def test_a_step_hours_after_the_good_side_is_judged_with_the_drift_rule(tmp_path):
    """Every step was judged as boots in turn, so the host's drift between the good side
    (measured hours before) and a step read as the kernel's (issue 'Answers without
    holes'): a host-bound figure's change is unknown then, as against a stored side."""
    from boardlab.bisect import step as bstep
    b = _bisect(tmp_path, "boot_time.login", good=(7.0, 7.05, 6.98, 7.02, 7.01))
    b.steps[0].measured_at = 1_000_000.0
    near = _step(b, 7.9, 7.95, 7.92, 7.91, 7.93)
    near.measured_at = 1_000_000.0 + 600
    late = _step(b, 7.9, 7.95, 7.92, 7.91, 7.93)
    late.measured_at = 1_000_000.0 + 3 * 3600
    assert bstep.interleaved(b, near) and not bstep.interleaved(b, late)
    good = b.good_samples()[b.metric]
    assert bstep._verdict(b, b.metric, good, near.samples[b.metric], near).outcome == "regressed"
    v = bstep._verdict(b, b.metric, good, late.samples[b.metric], late)
    assert v.outcome == "unknown" and "drifts between sessions" in v.why
    old = _step(b, 7.9, 7.95, 7.92, 7.91, 7.93)   # a bisect of an older boardlab: no times kept
    assert bstep.interleaved(b, old)
