"""The 6.1 vs 6.12 answer is a page generated from data kept in the repository: the data
a sweep's pair rests on is extracted once, the page is written from it through the judge,
and `boardlab gen --check` says whether the committed page matches its data."""
import json
from pathlib import Path

import pytest

from boardlab.errors import InputError
from boardlab.judge.results import RunResults
from boardlab.kernel import answerpage, neighbours, sweep

A, B = "virt-nfs-6.1.192-2", "virt-nfs-6.12.117-1~deb12u1"


def a_sweep(tmp_path):
    """A sweep of two kernels: one boot each (a size, a guest-deterministic login, a
    jitter maximum), then the pair booted in turn for jitter (3 rounds)."""
    out = tmp_path / "sweep"
    state = sweep._load(out / "sweep.json", ["6.1.192-2", "6.12.117-1~deb12u1"], "virt-nfs")
    for e, (size, login) in zip(state.values(), ((4023380, 1.00319), (4247328, 0.93282))):
        res = RunResults(out / e.name, baselines_root=tmp_path / "none")
        res.record("qemu-arm", e.name, "build", "vmlinux_dec_bytes", size)
        res.record("qemu-arm", e.name, "boot_time", "guest_login", login)
        res.record("qemu-arm", e.name, "jitter", "max_us", 1500, settings={"run_s": 5})
        e.status, e.run_dir = "measured", str(out / e.name)
    sweep._save(out / "sweep.json", state)
    pair_dir = out / "pairs" / f"{A}..{B}"
    res = RunResults(pair_dir, baselines_root=tmp_path / "none")
    for kernel, maxima in ((A, [3489, 3700, 4009]), (B, [36690, 37340, 38136])):
        res.record("qemu-arm", kernel, "jitter", "max_us", sorted(maxima)[1], samples=maxima,
                   settings={"run_s": 180})
    (pair_dir / "compare.json").write_text(json.dumps({"meta": {
        "board": "qemu-arm", "host": "vm-test", "written": "2026-12-01T19:00:00+0000",
        "families": ["jitter"], "rounds": 3}}))
    neighbours.save(out / "sweep.json", {(A, B): neighbours.Pair(A, B, "decided", ("jitter",), dir=str(pair_dir),
                                                                 budget=6)})
    return out


@pytest.fixture
def docs(tmp_path, monkeypatch):
    monkeypatch.setattr(answerpage, "DATA_DIR", tmp_path / "docs" / "data")
    monkeypatch.setattr(answerpage, "PAGES_DIR", tmp_path / "docs")
    return tmp_path / "docs"


def test_the_page_comes_from_the_data_and_holds_every_change_with_sizes(tmp_path, docs):
    data_path, md = answerpage.write(a_sweep(tmp_path), "kernels-6.1-6.12")
    data = json.loads(data_path.read_text())
    assert data["booted"][0]["jitter_s"] == 180 and data["booted"][0]["max_repeats"] == 6
    text = md.read_text()
    assert text.startswith(f"# {B} against {A} on qemu-arm: the whole answer")
    assert "| build.vmlinux_dec_bytes |" in text and "+5.57 %" in text        # the build's size, exact
    assert "| jitter.max_us |" in text and "regressed" in text            # from the 180 s boots
    assert "- boot_time.guest_login: " in text                            # one boot each: unknown, said
    assert "Clocks: guest-deterministic (2), none, sizes (1)" in text   # every row's clock named
    assert answerpage.generated_files() == {md: text}                     # the same page again


def test_notes_survive_a_new_extraction_and_a_stale_page_is_found(tmp_path, docs):
    out = a_sweep(tmp_path)
    data_path, md = answerpage.write(out, "p")
    data = json.loads(data_path.read_text())
    data["notes"] = ["The worst case is one event, 111.5 s into the run."]
    data_path.write_text(json.dumps(data))
    assert answerpage.generated_files()[md] != md.read_text()            # gen --check: stale
    answerpage.write(out, "p")
    assert "one event, 111.5 s" in md.read_text()


def test_a_sweep_without_the_pair_or_its_budget_is_one_line(tmp_path, docs):
    out = a_sweep(tmp_path)
    with pytest.raises(InputError, match="no pair x..y"):
        answerpage.write(out, "p", "x", "y")
    pairs = neighbours.load(out / "sweep.json")
    pairs[(A, B)].budget = 0
    neighbours.save(out / "sweep.json", pairs)
    with pytest.raises(InputError, match="give the sweep's --budget"):
        answerpage.write(out, "p")
    assert answerpage.write(out, "p", budget=6)[0].exists()


def test_a_later_compare_decides_what_the_sweeps_pair_left_unknown(tmp_path, docs):
    """mem_eat, one boot each in the sweep, measured again by a compare of the two kernels:
    its figures replace the one boot's, and the page says that step."""
    out = a_sweep(tmp_path)
    for e, kb in zip(json.loads((out / "sweep.json").read_text())["kernels"], (109888, 108736)):
        RunResults(Path(e["run_dir"]), baselines_root=tmp_path / "none").record("qemu-arm", e["name"], "memory",
                                                                                  "mem_eat_kb", kb)
    _, md = answerpage.write(out, "p")
    assert "- memory.mem_eat_kb: " in md.read_text()          # one boot each: unknown
    later = tmp_path / "compare-memory"
    res = RunResults(later, baselines_root=tmp_path / "none")
    for kernel, kb in ((A, 109888), (B, 108736)):
        res.record("qemu-arm", kernel, "memory", "mem_eat_kb", kb, samples=[kb] * 5)
    (later / "compare.json").write_text(json.dumps({"meta": {
        "board": "qemu-arm", "host": "vm-test", "written": "2026-12-01T21:00:00+0000",
        "families": ["memory"], "rounds": 5, "max_repeats": 10}}))
    _, md = answerpage.add_stage("p", later)
    text = md.read_text()
    assert "| memory.mem_eat_kb | 1.0989e+05 kB (n=5) | 1.0874e+05 (n=5) | -1.05 % | exact |" in text, text
    assert "- memory: boardlab compare, the kernels booted in turn: the families left unknown" in text
    assert "| jitter.max_us |" in text                          # the sweep's pair's figures stay
    assert answerpage.generated_files()[md] == text
    _, md = answerpage.add_stage("p", later, why="measured again with the seed credited")   # the same run again: replaced
    assert "- memory: boardlab compare, the kernels booted in turn: measured again with the seed credited" \
        in md.read_text() and "the families left unknown" not in md.read_text()
    with pytest.raises(InputError, match="no such answer"):
        answerpage.add_stage("nope", later)


def test_the_committed_answer_pages_are_their_data_byte_for_byte_on_any_host(monkeypatch):
    """docs/kernels-6.1-6.12.md from docs/data/kernels-6.1-6.12.json, as `boardlab gen
    --check` sees it, on a host that is not the one that measured it."""
    from boardlab.measure import clocks
    real = clocks.this_host
    monkeypatch.setattr(clocks, "this_host", lambda: {**real(), "id": "vm-another-host"})
    pages = answerpage.generated_files()
    assert answerpage.PAGES_DIR / "kernels-6.1-6.12.md" in pages
    for path, text in pages.items():
        assert path.read_text() == text, f"{path}: not its data's page: run boardlab gen"


def test_a_page_beside_the_study_shows_each_change_the_study_measured_with_its_boards():
    """The study's 2.4.25 -> 2.6.11.7 changes beside a pair's: changes only, each column
    naming its boards and clock; only metrics both measured."""
    import json
    from boardlab.kernel import answerpage
    data = json.loads((answerpage.DATA_DIR / "kernels-6.1-6.12.json").read_text())
    plain = answerpage.page("kernels-6.1-6.12", data)
    beside = answerpage.page("kernels-6.1-6.12", {**data, "beside_study": True})
    assert beside.startswith(plain) and "## Beside the study" not in plain
    section = beside[len(plain):]
    assert "TQM860L (MPC860T, 50 MHz) and Sandpoint (MPC8240, 132 MHz)" in section
    row = next(line for line in section.splitlines() if line.startswith("| lmbench.lat_pipe_us |"))
    assert "+6.8 %, regressed, guest-deterministic" in row and "latency +80 %" in row
    row = next(line for line in section.splitlines() if line.startswith("| build.uimage_data_bytes |"))
    assert "tqm860l +43 %" in row and "sandpoint +27 %" in row
    assert "| jitter." not in section and "| hackbench." not in section   # the study measured neither


def _latest_figures(page_data: dict) -> dict:
    """A stage holding each metric's figures as the page judges them: a later stage's
    replace an earlier one's."""
    import copy
    stages = page_data["booted"]
    out = copy.deepcopy(stages[0])
    for st in stages[1:]:
        for side in ("a", "b"):
            out[side]["metrics"].update(copy.deepcopy(st[side]["metrics"]))
    return out


def test_the_project_s_programs_beside_an_answer_page_say_per_metric_whether_the_verdict_is_the_same(tmp_path):
    import json
    from boardlab.kernel import answerpage, sensitivity
    from boardlab.measure import families
    debian = json.loads((answerpage.DATA_DIR / "kernels-6.1-6.12.json").read_text())
    own = _latest_figures(debian)      # the same figures: every verdict the same
    for side in (own["a"], own["b"]):
        side["metrics"] = {k: {**m, "settings": {**(m.get("settings") or {}), "tools": families.OWN}}
                           for k, m in side["metrics"].items() if k.startswith(("lmbench.", "hackbench."))}
    text = sensitivity.page("kernels-6.1-6.12", {"page": "kernels-6.1-6.12", "own": own})
    n = len(own["a"]["metrics"])
    assert f"**{n} of {n} metrics get the same verdict with either set.**" in text
    own["b"]["metrics"]["lmbench.lat_pipe_us"]["samples"] = own["a"]["metrics"]["lmbench.lat_pipe_us"]["samples"]
    text = sensitivity.page("kernels-6.1-6.12", {"page": "kernels-6.1-6.12", "own": own})
    assert f"**{n - 1} of {n} metrics get the same verdict" in text
    row = next(line for line in text.splitlines() if line.startswith("| lmbench.lat_pipe_us |"))
    assert row.startswith("| lmbench.lat_pipe_us | regressed (+6.8 %") and "| same (+0.0 %" in row and "**no**" in row


def test_some_figures_measured_again_replace_only_theirs_and_the_page_says_when():
    import copy
    import json
    from boardlab.kernel import answerpage, sensitivity
    from boardlab.measure import families
    debian = json.loads((answerpage.DATA_DIR / "kernels-6.1-6.12.json").read_text())
    own = _latest_figures(debian)
    for side in (own["a"], own["b"]):
        side["metrics"] = {k: {**m, "settings": {**(m.get("settings") or {}), "tools": families.OWN}}
                           for k, m in side["metrics"].items() if k.startswith("lmbench.")}
    again = copy.deepcopy(own)     # lat_pipe again, with B's figures A's: now the same
    for side in (again["a"], again["b"]):
        side["metrics"] = {"lmbench.lat_pipe_us": side["metrics"]["lmbench.lat_pipe_us"]}
    again["b"]["metrics"]["lmbench.lat_pipe_us"] = copy.deepcopy(again["a"]["metrics"]["lmbench.lat_pipe_us"])
    again.update(families=["lmbench:lat_pipe_us"], measured="2026-12-07")
    data = {"page": "kernels-6.1-6.12", "own": own, "again": [again]}
    rows = sensitivity.rows(data)
    assert [k for k, _, _ in rows] == [k for k, _, _ in sensitivity.rows({**data, "again": []})]   # order kept
    pipe = next(o for k, _, o in rows if k == "lmbench.lat_pipe_us")
    assert pipe.cmp.outcome == "same"
    unix = next(o for k, _, o in rows if k == "lmbench.lat_unix_us")
    assert unix.cmp.outcome == "regressed"                                   # the first stage's still
    assert "lmbench:lat_pipe_us measured again (2026-12-07" in sensitivity.page("kernels-6.1-6.12", data)


def test_only_a_compare_with_the_project_s_programs_is_kept_beside_a_page(tmp_path):
    import json
    from boardlab.errors import InputError
    from boardlab.kernel import sensitivity
    (tmp_path / "compare.json").write_text(json.dumps({"meta": {"tools": None, "sides": ["a", "b"]}}))
    with pytest.raises(InputError, match="not a compare with the project's programs"):
        sensitivity.keep("kernels-6.1-6.12", tmp_path)
    with pytest.raises(InputError, match="no such answer page"):
        sensitivity.keep("no-such-page", tmp_path)


def test_each_page_names_whose_programs_measured_it():
    from boardlab.kernel import answerpage
    assert "- Programs: Debian's programs for hackbench, jitter, lmbench." in \
        (answerpage.PAGES_DIR / "kernels-6.1-6.12.md").read_text()
    ppc = (answerpage.PAGES_DIR / "kernels-6.1-6.12-ppc.md").read_text()
    assert "- Programs: the project's programs for hackbench, jitter, lmbench." in ppc
    assert "## Beside the study" in ppc


def test_a_compare_of_fewer_families_than_the_kept_one_is_a_later_stage():
    from boardlab.kernel import sensitivity
    kept = ["boot_time", "hackbench", "jitter", "lmbench", "memory"]
    assert sensitivity._narrower(["lmbench"], kept)                  # one family again
    assert sensitivity._narrower(["lmbench:lat_udp_us"], kept)       # some figures again
    assert not sensitivity._narrower(kept, kept)                     # the whole compare again
    assert not sensitivity._narrower(kept + ["mem_bw"], kept)
