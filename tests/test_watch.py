"""The nightly loop's decisions, as unit tests: which change points `history watch`
bisects, when one counts as handled, what happens when a bisect or a note fails; the
series a bisect's steps land in; the statuses the KCIDB export reports."""
import json
from types import SimpleNamespace


from boardlab.bisect import BisectError, LabFault
from boardlab.bisect import watch as w
from boardlab.history import changes, kcidb, submit
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
        monkeypatch.setattr(changes, "annotate", self.annotate)

    def annotate(self, server, pts, note=""):
        if self.refuse:
            self.refuse -= 1
            raise HistoryError("SQUAD at http://127.0.0.1:1 did not take the note: refused")
        self.notes += [(c.build, note) for c in pts]
        return len(pts)


def test_watch_handles_each_once_goes_on_past_failures_and_loses_no_note(tmp_path, monkeypatch):
    regression, improvement = point(+3.0), point(+2.0, "memory/mem_eat_kb", build="c" * 12)
    crash, lab = point(+2.0, "lmbench/lat_pipe_us"), point(+2.0, "lmbench/lat_unix_us")
    noise = point(+1.0, "boot_time/guest_freeing_init")
    hist = FakeHistory(tmp_path, [crash, lab, noise, regression, improvement], monkeypatch, refuse_notes=1)
    calls = []

    def bisect(tree, good, bad, metric, board):
        calls.append(metric)
        if metric == "lmbench.lat_pipe_us":
            raise RuntimeError("something no one expected")
        if metric == "lmbench.lat_unix_us":
            raise LabFault("power switch refused")
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
    assert (BAD, f"first bad commit {'d' * 12} 'net: sleep' (bisect /r/1)") in hist.notes
    assert any(b == "c" * 12 and "improvement" in n for b, n in hist.notes)
    for _ in range(w.MAX_ATTEMPTS):
        w.watch(hist, tmp_path, progress=said.append, bisect=bisect)
    seen = json.loads((tmp_path / "watched.json").read_text())
    assert seen[f"{crash.metric}@{crash.environment}@{crash.build}"]["attempts"] == w.MAX_ATTEMPTS


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
