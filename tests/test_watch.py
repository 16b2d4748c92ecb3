"""The nightly loop's decisions, as unit tests: which change points `history watch`
bisects, when one counts as handled, what happens when a bisect or a note fails; the
series a bisect's steps land in; the statuses the KCIDB export reports."""
import json
from types import SimpleNamespace


from boardlab.bisect import BisectError, BisectLabFault
from boardlab.bisect import watch as w
from boardlab.history import changes, kcidb, notes, submit
from boardlab.history.server import HistoryError
from boardlab.judge.results import RunResults
from boardlab.facts.board import load_board

GOOD, BAD = "a" * 12, "b" * 12


def point(pct, metric="boot_time/guest_login", env="qemu-arm.guest-deterministic", before=GOOD, build=BAD):
    return changes.ChangePoint(metric, env, build, before, [build], pct, (pct - 0.1, pct + 0.1), 1e-5)


def test_only_regressions_between_two_revisions_are_bisected():
    assert w.decide(point(+1.0)) == (True, "")
    assert w.decide(point(-1.0, "memory/free_free_kb")) == (True, "")        # higher is better
    go, why = w.decide(point(-1.0))
    assert not go and why.startswith("an improvement (-1.00 %)")
    assert w.decide(point(+1.0, before="armmp"))[1] == "not revisions of a kernel tree: not bisected"
    assert w.decide(point(+1.0, env="qemu-arm.bisect.guest-deterministic"))[1].startswith("a bisect's own")
    assert w.revision(f"bisect-{BAD}") is None and w.revision(BAD) == BAD


class FakeHistory:
    def __init__(self, tmp_path, points, monkeypatch, refuse_notes=0):
        self.data, self.points, self.notes, self.refuse = tmp_path, points, [], refuse_notes
        monkeypatch.setattr(changes, "find", lambda server, **k: list(self.points))
        monkeypatch.setattr(changes, "sample_series", lambda server, *a: (self.series, []))
        self.series = {}
        monkeypatch.setattr(changes, "annotate", self.annotate)

    def annotate(self, server, pts):
        if self.refuse:
            self.refuse -= 1
            raise HistoryError("SQUAD at http://127.0.0.1:1 did not take the note: refused")
        self.notes += [c.build for c in pts]
        return len(pts)


def test_watch_handles_each_once_goes_on_past_failures_and_loses_no_note(tmp_path, monkeypatch):
    regression, improvement = point(+3.0), point(+2.0, "memory/mem_eat_kb", build="c" * 12)
    # each over a range of its own: a bisect each (one range's points share one: below)
    crash, lab = point(+2.0, "lmbench/lat_pipe_us", before="1" * 12), point(+2.0, "lmbench/lat_unix_us", before="2" * 12)
    noise = point(+1.0, "boot_time/guest_freeing_init", before="3" * 12)
    hist = FakeHistory(tmp_path, [crash, lab, noise, regression, improvement], monkeypatch, refuse_notes=1)
    calls = []

    def bisect(tree, good, bad, metric, board):
        calls.append(metric)
        if metric == "lmbench.lat_pipe_us":
            raise RuntimeError("something no one expected")
        if metric == "lmbench.lat_unix_us":
            raise BisectLabFault("power switch refused")
        if metric == "boot_time.guest_freeing_init":
            raise BisectError("boot_time.guest_freeing_init did not regress between a and b")
        return SimpleNamespace(first_bad={"rev": "d" * 40, "subject": "net: sleep"}, candidates=[], run_dir="/r/1")
    said = []
    done = w.watch(hist, tmp_path, progress=said.append, bisect=bisect)
    by = {d["change"]: d for d in done}
    assert by[regression.line()]["state"] == w.DONE and by[regression.line()]["first_bad"]["rev"] == "d" * 40
    assert by[improvement.line()]["state"] == w.DONE and "improvement" in by[improvement.line()]["result"]
    assert by[noise.line()]["state"] == w.DONE and "did not regress" in by[noise.line()]["result"]
    assert by[crash.line()]["state"] == w.FAILED and "RuntimeError" in by[crash.line()]["result"]
    assert by[lab.line()]["state"] == w.FAILED and "power switch refused" in by[lab.line()]["result"]
    assert "boot_time.guest_login" in calls and "memory.mem_eat_kb" not in calls   # improvement
    # the first note was refused: kept, said; the others written
    assert any("the note is kept for the next watch" in s for s in said)
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert sum(1 for e in seen.values() if e.get("noted") is False) == 1
    # the next watch: the failed ones tried again, the refused note written, nothing bisected twice
    calls.clear()
    again = w.watch(hist, tmp_path, progress=said.append, bisect=bisect)
    assert sorted(calls) == ["lmbench.lat_pipe_us", "lmbench.lat_unix_us"]
    assert {d["change"] for d in again} == {crash.line(), lab.line()}
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert all(e.get("noted") is not False for e in seen.values())
    assert set(hist.notes) == {BAD, "c" * 12}       # SQUAD: a pointer on each build, once refused
    kept = notes.read(tmp_path)                      # the notes themselves: whole, on disk
    assert kept[notes.key(regression)]["note"] == f"first bad commit {'d' * 12} 'net: sleep' (bisect /r/1)"
    assert kept[notes.key(improvement)]["note"].startswith("an improvement (+2.00 %)")
    assert kept[notes.key(lab)]["note"].endswith("(attempt 2 of 3: tried again on the next watch)")
    for _ in range(w.MAX_ATTEMPTS):
        w.watch(hist, tmp_path, progress=said.append, bisect=bisect)
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert seen[notes.key(crash)]["attempts"] == w.MAX_ATTEMPTS and seen[notes.key(crash)]["state"] == w.GIVEN_UP
    assert notes.read(tmp_path)[notes.key(crash)] == {   # given up: said, with why
        "change": crash.line(), "state": "given up",
        "note": "given up after 3 attempts: bisect failed: RuntimeError: something no one expected"}


def test_a_bisect_step_is_a_series_of_its_own(tmp_path):
    res = RunResults(tmp_path / "step")
    res.record(load_board("qemu-arm"), f"bisect-{BAD}", "memory", "mem_eat_kb", 88832)
    res.record(load_board("qemu-arm"), BAD, "memory", "mem_eat_kb", 88832)
    envs = {s.build: s.environment for s in submit.submissions(tmp_path / "step")}
    assert envs == {f"bisect-{BAD}": "qemu-arm.bisect.none", BAD: "qemu-arm.none"}


def test_what_happened_to_a_nightly_kernel_lands_as_tests(tmp_path):
    from boardlab.bisect.nightly import FAIL, PASS, failed, outcome
    res = RunResults(tmp_path / "night")
    outcome(res, "qemu-arm", BAD, "kernel/checkout", PASS)
    outcome(res, "qemu-arm", BAD, "kernel/build", FAIL, "make: *** [vmlinux] Error 2")
    subs = submit.submissions(tmp_path / "night")
    assert [(s.build, s.environment, s.tests) for s in subs] == [
        (BAD, "qemu-arm.none", {"kernel/checkout": "pass", "kernel/build": "fail"})]
    assert failed(tmp_path / "night") == {"kernel/build": "make: *** [vmlinux] Error 2"}


def test_kcidb_statuses_come_from_what_happened():
    checkout, build = {}, {}
    kcidb._what_happened(checkout, build, {"boot_time/login": "pass"})
    assert checkout == {} and build == {}                       # nothing said: nothing claimed
    kcidb._what_happened(checkout, build, {"kernel/checkout": "pass", "kernel/build": "fail"})
    assert checkout == {"valid": True} and build == {"status": "FAIL"}
    kcidb._what_happened(checkout, build, {"kernel/build": "pass"})   # another board's run
    assert build == {"status": "FAIL"}                          # a failure is not undone
    kcidb._what_happened(checkout, build := {}, {"kernel/build": "pass"})
    assert build == {"status": "PASS"}


def test_what_another_watch_wrote_meanwhile_is_kept(tmp_path, monkeypatch):
    """watched.json is read, changed and written whole under its lock: an entry another
    watch wrote while this one was bisecting is still there after this one writes."""
    from boardlab.files import update_json
    hist = FakeHistory(tmp_path, [point(+3.0)], monkeypatch)
    path = tmp_path / "watched.json"

    def bisect(tree, good, bad, metric, board):
        update_json(path, lambda seen: seen.__setitem__("other", {"state": w.DONE}))
        return SimpleNamespace(first_bad=None, candidates=[], run_dir="/r/2")
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    seen = json.loads(path.read_text())
    assert set(seen) == {"other", f"{point(+3.0).metric}@{point(+3.0).environment}@{BAD}"}
    assert (tmp_path / "watched.json.lock").exists()


def test_a_range_all_skipped_is_noted_with_the_revisions_its_culprit_is_among(tmp_path, monkeypatch):
    hist = FakeHistory(tmp_path, [point(+3.0)], monkeypatch)
    among = [{"rev": "e" * 40, "subject": "mm: tidy", "why": "build failed: Error 2"},
             {"rev": BAD + "0" * 28, "subject": "net: more", "why": "bad"}]
    done, = w.watch(hist, tmp_path, progress=lambda *_: None,
                    bisect=lambda *a, **k: SimpleNamespace(first_bad=None, candidates=among, run_dir="/r/3"))
    assert done["result"] == ("no first bad commit: skipped revisions only, it is one of "
                              f"{'e' * 12} 'mm: tidy' (build failed: Error 2), {BAD} 'net: more' (bad)")
    assert done["note"].startswith(done["result"])


def test_five_change_points_at_one_build_keep_their_notes_whole_on_the_page(tmp_path, monkeypatch):
    """SQUAD keeps 1024 characters a build: five notes there lost the culprit's. Now SQUAD
    gets a short pointer, and the page shows each change point's note whole, a given-up
    one with why."""
    from boardlab.history import charts
    metrics = ["build/bss_bytes", "memory/free_kb", "memory/used_kb", "boot_time/guest_login",
               "lmbench/lat_pipe_us"]
    points = [point(+3.0, m) for m in metrics]
    for n, c in enumerate(points):
        note = ("given up after 3 attempts: bisect failed: " if n == 4 else
                f"first bad commit {'d' * 12} 'mm: a subject of some length, number {n}' ") + "x" * 300
        notes.keep(tmp_path, notes.key(c), {"change": c.line(), "state": "done", "note": note})
    sent = []
    monkeypatch.setattr(changes, "api_list", lambda server, path: [] if "annotations" in path else
                        [{"version": BAD, "id": 7, "url": "http://squad/api/builds/7/"}])
    monkeypatch.setattr(changes, "_send", lambda server, path, method, doc: sent.append(doc))
    assert changes.annotate(SimpleNamespace(project="vlab", url="http://squad"), points) == 1
    assert [d["description"] for d in sent] == [notes.POINTER] and len(notes.POINTER) < 200
    series = {(c.metric, c.environment): [(GOOD, [1.0, 1.0]), (BAD, [1.03, 1.03])] for c in points}
    page = charts.render(tmp_path / "page", "history.html", "t", "series", series, points,
                         notes.read(tmp_path)).read_text()
    for c in points:
        assert notes.read(tmp_path)[notes.key(c)]["note"].replace("'", "&#x27;") in page
    assert "mm: a subject of some length, number 0" in page and "given up after 3 attempts" in page


def test_a_rebased_branch_is_bisected_from_the_merge_base(tmp_path):
    """The last good night was on the branch before it was rebased: not an ancestor of the
    first bad one (git bisect refuses), so the range starts at their merge base; with no
    merge base it says so."""
    import subprocess
    repo = tmp_path / "tree"
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True,  # noqa: E731
                                    text=True).stdout.strip()
    repo.mkdir()
    git("init", "-q", "-b", "main")

    def commit(msg):
        (repo / "f").write_text(msg)
        git("add", "f")
        git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", msg)
        return git("rev-parse", "HEAD")
    base = commit("base")
    old = commit("old branch head")          # the last good night
    git("checkout", "-q", "--detach", base)
    new = commit("rebased branch head")       # the first bad night
    assert w.bisect_from(repo, base, new) == (base, "")
    good, said = w.bisect_from(repo, old, new)
    assert good == base and said.startswith(f"bisected from their merge base {base[:12]}: {old} is not "
                                            f"an ancestor of {new} (the branch was rebased)")
    git("checkout", "-q", "--orphan", "other")
    alone = commit("unrelated")
    assert w.bisect_from(repo, old, alone) == (None, f"not bisected: {old} is not an ancestor of {alone} "
                                                     f"and they have no merge base")
    calls = []
    entry = w.handle(point(+3.0, before=old, build=new), repo, None,
                     bisect=lambda tree, good, bad, metric, board: calls.append(good) or
                     SimpleNamespace(first_bad=None, candidates=[], run_dir="/r/4"))
    assert calls == [base] and entry["note"].startswith("bisected from their merge base")


def test_the_metrics_one_range_moved_are_bisected_once_each_noted(tmp_path, monkeypatch):
    """bss, free and used moved between the same two nightly builds on one board: one
    bisect judges all three; each change point keeps its own note pointing to it, with its
    own metric's verdict there, or why it was not bisected (it did not regress at the bad
    end). Another board's points over that range, and an improvement, are not in it."""
    bss, free = point(+3.0, "build/vmlinux_bss_bytes", env="qemu-arm.none"), point(-1.0, "memory/free_free_kb", env="qemu-arm.none")
    used, better = point(+2.0, "memory/free_used_kb", env="qemu-arm.none"), point(-2.0, "memory/kernel_code_kb", env="qemu-arm.none")
    other = point(+2.0, "memory/free_used_kb", env="tqm860l.none")
    hist = FakeHistory(tmp_path, [bss, free, used, better, other], monkeypatch)
    calls = []

    def bisect(tree, good, bad, metric, board):
        calls.append((board, good, bad, metric))
        metrics = metric.split(",")
        at = {m: {"verdict": "regressed", "good": 100.0, "bad": 103.0, "change_pct": 3.0} for m in metrics}
        dropped = {}
        if "memory.free_free_kb" in metrics:    # it did not regress at the bad end after all
            dropped = {"memory.free_free_kb": f"did not regress between {good} and {bad}: same"}
            at["memory.free_free_kb"] = {"verdict": "dropped", "why": dropped["memory.free_free_kb"],
                                         "good": 9.0, "bad": None, "change_pct": None}
        return SimpleNamespace(first_bad={"rev": "d" * 40, "subject": "mm: grow", "metrics": at},
                               candidates=[], run_dir=f"/r/{board}", dropped=dropped)
    done = w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    assert sorted(calls) == [
        ("qemu-arm", GOOD, BAD, "build.vmlinux_bss_bytes,memory.free_free_kb,memory.free_used_kb"),
        ("tqm860l", GOOD, BAD, "memory.free_used_kb")]
    assert len(done) == 5
    kept = notes.read(tmp_path)
    assert kept[notes.key(bss)]["note"] == (f"first bad commit {'d' * 12} 'mm: grow' (bisect /r/qemu-arm); "
                                            "build.vmlinux_bss_bytes: regressed, good 100 bytes -> 103 bytes (+3.00 %)")
    assert kept[notes.key(used)]["note"].startswith(f"first bad commit {'d' * 12} 'mm: grow' (bisect /r/qemu-arm); "
                                                    "memory.free_used_kb: regressed")
    assert kept[notes.key(free)]["note"] == (
        f"not bisected: memory.free_free_kb did not regress between {GOOD} and {BAD}: same; the bisect of "
        "build.vmlinux_bss_bytes, memory.free_used_kb over the range went on without it (bisect /r/qemu-arm)")
    assert kept[notes.key(better)]["note"].startswith("an improvement")
    assert kept[notes.key(other)]["note"].endswith("(bisect /r/tqm860l); memory.free_used_kb: regressed, "
                                                   "good 100 kB -> 103 kB (+3.00 %)")
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert seen[notes.key(bss)]["bisected_with"] == ["memory.free_free_kb", "memory.free_used_kb"]
    assert seen[notes.key(free)]["first_bad"] is None and seen[notes.key(used)]["first_bad"]["rev"] == "d" * 40
    assert all(seen[notes.key(c)]["regression"] for c in (bss, free, used, other))
    from boardlab.history import charts
    assert charts.culprit(bss, kept) == f"first bad commit {'d' * 12} 'mm: grow'"
    assert charts.culprit(free, kept) == ""        # not its culprit: it did not regress there
    calls.clear()
    assert w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect) == [] and calls == []


def test_a_range_whose_bisect_fails_is_tried_again_for_each_of_its_points(tmp_path, monkeypatch):
    a, b = point(+3.0, "memory/free_used_kb", env="qemu-arm.none"), point(+3.0, "build/vmlinux_bss_bytes", env="qemu-arm.none")
    hist = FakeHistory(tmp_path, [b, a], monkeypatch)      # changes.find: by environment, metric
    calls = []

    def bisect(tree, good, bad, metric, board):
        calls.append(metric)
        raise BisectLabFault("power switch refused")
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    assert calls == ["build.vmlinux_bss_bytes,memory.free_used_kb"]
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert {e["state"] for e in seen.values()} == {w.FAILED} and {e["attempts"] for e in seen.values()} == {1}
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    assert calls == ["build.vmlinux_bss_bytes,memory.free_used_kb"] * 2      # once a watch, together
    assert all(n["note"].endswith("(attempt 2 of 3: tried again on the next watch)")
               for n in notes.read(tmp_path).values())


def test_metrics_of_two_clocks_moving_over_one_range_are_one_bisect(tmp_path, monkeypatch):
    """guest_login (guest-deterministic) and free_used (none) over the same two builds: the
    clock is in SQUAD's environment name, and they made two bisects over the same commits
    (issue 'Answers without holes'); now one."""
    login = point(+3.0, "boot_time/guest_login", env="qemu-arm.guest-deterministic")
    used = point(+2.0, "memory/free_used_kb", env="qemu-arm.none")
    assert w.same_range(login, used)
    assert not w.same_range(login, point(+2.0, "memory/free_used_kb", env="tqm860l.none"))
    hist = FakeHistory(tmp_path, [login, used], monkeypatch)
    calls = []

    def bisect(tree, good, bad, metric, board):
        calls.append(metric)
        at = {m: {"verdict": "regressed", "good": 100.0, "bad": 103.0, "change_pct": 3.0} for m in metric.split(",")}
        return SimpleNamespace(first_bad={"rev": "d" * 40, "subject": "x", "metrics": at}, candidates=[],
                               run_dir="/r/qemu-arm", dropped={})
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    assert calls == ["boot_time.guest_login,memory.free_used_kb"]


def test_a_regression_on_a_drifting_board_names_no_culprit_and_says_the_board_changed(tmp_path, monkeypatch):
    """The board, not the kernel: while qemu-arm drifts from its own level (its health
    history, judge.boardhealth) a change point on it is not bisected; it is tried again
    after `boardlab lab accept`, and a run measured meanwhile says the board drifted."""
    from boardlab.judge import boardhealth as bh
    monkeypatch.setattr(bh, "HEALTH_DIR", tmp_path / "health")
    board = load_board("qemu-arm")
    for i in range(8):
        bh.record(board, "armmp", {"boot_time.guest_login": 20.729278 * (1.10 if i == 7 else 1.0),
                                   "memory.free_total_kb": 112196.0}, at=f"2026-12-06T00:0{i}:00")
    hist = FakeHistory(tmp_path, [point(+10.0)], monkeypatch)
    calls = []
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=lambda *a, **k: calls.append(a))
    [entry] = json.loads((tmp_path / "watched.json").read_text()).values()
    assert calls == [] and entry["state"] == w.FAILED and entry["attempts"] == 0
    assert entry["result"].startswith("the board changed, not the kernel: qemu-arm is drifting since "
                                      "2026-12-06T00:07:00: boot_time.guest_login +10.0 %")
    res = RunResults(tmp_path / "run")
    res.record(board, "armmp", "memory", "free_total_kb", 112196)
    assert res.meta["board_drifting"] == {"qemu-arm": "drifting since 2026-12-06T00:07:00: boot_time.guest_login +10.0 %"}
    bh.accept("qemu-arm", "throttling fixed: fan replaced")

    def bisect(*a, **k):
        calls.append(a)
        raise BisectLabFault("the power switch refused")
    w.watch(hist, tmp_path, progress=lambda *_: None, bisect=bisect)
    assert len(calls) == 1                                  # bisected once the level is accepted
