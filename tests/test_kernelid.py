"""A kernel is named by what it is: the board's own `Linux version` line, the package or
the build inputs, the uImage's digest; a run of another kernel under the same short name
is "other kernel", never a verdict; a metric the baseline holds and the run did not
produce is "missing"."""
import pytest
from pathlib import Path
import yaml

from boardlab.measure import baselines as bl
from boardlab.judge import verdict as vd
from boardlab.pages import report
from boardlab.judge.results import RunResults, load_run
from boardlab.measure import clocks, kernelid

HERE = {"kind": "measured", "host_id": clocks.this_host()["id"]}
# as the virtual board printed them (results/20261125-141249, console logs)
ARMMP_176 = ("[    0.000000] Linux version 6.1.0-50-armmp (debian-kernel@lists.debian.org) (gcc-12 "
             "(Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP Debian "
             "6.1.176-1 (2026-07-02)")
VIRT_NFS = ("[    0.000000] Linux version 6.1.192 (boardlab@lab) (arm-linux-gnueabihf-gcc (Debian "
            "12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 Wed Nov 25 14:20:11 UTC 2026")


def test_the_boards_own_line_names_the_kernel():
    ident = kernelid.from_console(["U-Boot 2023.01", ARMMP_176, "Run /init as init process"])
    assert ident["release"] == "6.1.0-50-armmp"
    assert ident["proc_version"].startswith("Linux version 6.1.0-50-armmp (debian-kernel")
    assert ident["proc_version"].endswith("#1 SMP Debian 6.1.176-1 (2026-07-02)")
    assert kernelid.from_console([VIRT_NFS])["release"] == "6.1.192"
    assert kernelid.from_console(["no kernel here"]) == {}


def test_two_identities_are_compared_on_what_both_sides_know():
    a = {"release": "6.1.0-50-armmp", "package": "linux-image-6.1.0-50-armmp", "package_version": "6.1.176-1"}
    moved = {**a, "package_version": "6.1.180-1"}
    assert kernelid.differs(a, a) is None
    assert kernelid.differs(a, moved) == ("6.1.0-50-armmp linux-image-6.1.0-50-armmp 6.1.176-1",
                                          "6.1.0-50-armmp linux-image-6.1.0-50-armmp 6.1.180-1")
    # what the board printed decides over the image's digest (a re-wrapped image is the same kernel)
    printed = kernelid.from_console([ARMMP_176])
    assert kernelid.differs({**printed, "uimage_sha256": "aa"}, {**printed, "uimage_sha256": "bb"}) is None
    assert kernelid.differs(a, None) is None and kernelid.differs({}, a) is None   # unknown: not decided here


def test_two_configs_of_one_reproducible_build_are_two_kernels():
    """kbuild's builds print the same /proc/version whatever their config (a fixed build
    timestamp): the config, where both sides know it, tells them apart."""
    built = {**kernelid.from_console([VIRT_NFS]), "source_version": "linux-source-6.1 6.1.192-2",
             "config_sha256": "23b6", "compiler": "gcc 12.2.0"}
    reconfigured = {**built, "config_sha256": "9f01"}
    assert kernelid.differs(built, reconfigured) == (kernelid.describe(built), kernelid.describe(reconfigured))
    assert "config 23b6" in kernelid.describe(built)
    assert kernelid.differs(built, dict(built)) is None
    printed_only = kernelid.from_console([VIRT_NFS])   # a side that knows only what the board printed
    assert kernelid.differs(built, printed_only) is None and kernelid.differs(printed_only, reconfigured) is None


def test_a_uimage_carries_what_its_maker_knew(tmp_path):
    img = tmp_path / "armmp.uImage"
    img.write_bytes(b"uImage bytes")
    kernelid.write_sidecar(img, {"release": "6.1.0-50-armmp", "package": "linux-image-6.1.0-50-armmp",
                                 "package_version": "6.1.176-1"})
    ident = kernelid.of_image(img)
    assert ident["package_version"] == "6.1.176-1" and ident["uimage_sha256"] == kernelid.sha256(img)
    img.write_bytes(b"another kernel's bytes")          # replaced: the note is not of it
    assert set(kernelid.of_image(img)) == {"uimage_sha256"}


def _baseline(root, identity, metrics):
    (root / "armmp").mkdir(parents=True)
    (root / "armmp" / "qemu-arm.yaml").write_text(yaml.safe_dump(
        {"board": "qemu-arm", "kernel": "armmp", "identity": identity, "metrics": metrics}))


def test_a_moved_package_is_another_kernel_not_a_verdict(tmp_path):
    pinned = {"release": "6.1.0-50-armmp", "package": "linux-image-6.1.0-50-armmp", "package_version": "6.1.176-1"}
    _baseline(tmp_path / "k", pinned, {"memory.mem_eat_kb": {
        "value": 88832, "unit": "kB", "direction": "higher", "samples": [88832] * 3, "source": HERE}})
    same = RunResults(tmp_path / "same", baselines_root=tmp_path / "k")
    assert same.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 88832, identity=pinned).verdict == "same"
    moved = RunResults(tmp_path / "moved", baselines_root=tmp_path / "k")
    m = moved.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 80000,
                     identity={**pinned, "package_version": "6.1.180-1"})
    assert m.verdict == vd.OTHER_KERNEL                    # far lower, yet not "regressed"
    assert m.comparison["why"] == ("the baseline's kernel is 6.1.0-50-armmp linux-image-6.1.0-50-armmp "
                                   "6.1.176-1, this run's 6.1.0-50-armmp linux-image-6.1.0-50-armmp 6.1.180-1")
    assert moved.meta["kernels"]["qemu-arm/armmp"]["package_version"] == "6.1.180-1"
    md = report.markdown(str(tmp_path / "moved"), with_summary=True)
    assert md.startswith("1 other kernel, not judged | of 1 metrics\n")


def test_baselines_record_the_kernel_they_were_measured_with(tmp_path):
    pinned = {"release": "6.1.0-50-armmp", "package": "linux-image-6.1.0-50-armmp", "package_version": "6.1.176-1"}
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 88832, identity=pinned)
    res.record("qemu-arm", "armmp", "memory", "free_total_kb", 112196, identity=pinned)
    res.update_baselines()
    assert bl.load_identity("armmp", "qemu-arm", tmp_path / "k") == pinned
    # a new kernel under the name: its figures replace the old kernel's, none are kept
    other = RunResults(tmp_path / "run2", baselines_root=tmp_path / "k")
    other.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 88000, identity={**pinned, "package_version": "6.1.180-1"})
    other.update_baselines()
    assert set(bl.load("armmp", "qemu-arm", tmp_path / "k")) == {"memory.mem_eat_kb"}


def test_a_metric_the_run_did_not_produce_is_missing_and_counted(tmp_path):
    _baseline(tmp_path / "k", {}, {
        "memory.mem_eat_kb": {"value": 88832, "unit": "kB", "direction": "higher", "samples": [88832] * 3, "source": HERE},
        "memory.free_total_kb": {"value": 112196, "unit": "kB", "samples": [112196] * 3, "source": HERE},
        "lmbench.lat_pipe_us": {"value": 300, "unit": "us", "samples": [300] * 3, "source": HERE}})
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "k")
    res.record("qemu-arm", "armmp", "memory", "mem_eat_kb", 88832)
    missing = res.mark_missing("qemu-arm", "armmp", {"memory"})     # lmbench did not run: not missing
    assert [m.key for m in missing] == ["memory.free_total_kb"]
    assert missing[0].verdict == vd.MISSING and missing[0].value is None
    assert "missing (the baseline holds 112196 kB; this run did not produce it)" in missing[0].describe()
    md = report.markdown(str(tmp_path / "run"), with_summary=True)
    assert md.startswith("1 same | 1 missing | of 2 metrics\n")
    assert "| qemu-arm memory.free_total_kb | kB | - | 112196 | - |" in md


def test_a_version_changes_options_and_the_change_is_listed(tmp_path):
    from boardlab.kernelbuilds import registry
    before, after = tmp_path / "a.config", tmp_path / "b.config"
    before.write_text("CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_D=16\n")
    after.write_text("CONFIG_A=y\nCONFIG_C=y\nCONFIG_D=32\nCONFIG_E=m\n")
    assert registry.config_changes(before, after) == ["+ CONFIG_E=m", "- CONFIG_B", "~ CONFIG_C: n -> y",
                                                      "~ CONFIG_D: 16 -> 32"]


def test_a_registered_kernel_boots_by_its_name(tmp_path, monkeypatch):
    from boardlab.boot import bootplan
    from boardlab.kernelbuilds import registry
    from boardlab.facts.board import load_board
    monkeypatch.setattr(registry, "REGISTRY_DIR", tmp_path)
    img = registry.uimage("qemu-arm", "virt-nfs-6.12.117-1~deb12u1")
    img.parent.mkdir(parents=True)
    img.write_bytes(b"uImage")
    kernelid.write_sidecar(img, {"release": "6.12.117", "source_version": "linux-source-6.12 6.12.117-1~deb12u1"},
                           nfs_root="built-in")
    k = bootplan.resolve_kernel(load_board("qemu-arm"), "virt-nfs-6.12.117-1~deb12u1")
    assert (k.name, k.local, k.nfs_loader) == ("virt-nfs-6.12.117-1~deb12u1", img, False)


def test_a_version_this_host_cannot_get_is_one_line_exit_2(capsys):
    from boardlab.cli import main
    assert main(["kernel", "build", "6.1.999-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "linux-source-6.1 6.1.999-1: not installed" in err and "it serves: " in err
    assert main(["kernel", "pin", "armmp", "6.1.999-1", "--why", "a test"]) == 2
    assert "linux-image-6.1.0-50-armmp 6.1.999-1: not in the cache and apt does not serve it" in capsys.readouterr().err
    assert main(["kernel", "build", "six"]) == 2
    assert "'six' is not a Debian kernel source version" in capsys.readouterr().err


def test_the_sweep_orders_versions_and_resumes_where_it_stopped(tmp_path):
    from boardlab.kernel import sweep
    served = ["6.12.117-1~deb12u1", "6.1.192-2", "6.12.107-1~deb12u1", "6.1.170-3", "6.1.192-1"]
    assert sorted(served, key=sweep.version_key) == ["6.1.170-3", "6.1.192-1", "6.1.192-2",
                                                     "6.12.107-1~deb12u1", "6.12.117-1~deb12u1"]
    run = tmp_path / "virt-nfs-6.1.170-3"
    RunResults(run).record("qemu-arm", "virt-nfs-6.1.170-3", "boot_time", "guest_login", 1.0032)
    state = sweep._load(tmp_path / "sweep.json", ["6.1.170-3", "6.1.192-2"], "virt-nfs")
    state["6.1.170-3"].status, state["6.1.170-3"].run_dir = "measured", str(run)
    state["6.1.192-2"].status, state["6.1.192-2"].why = "failed", "build: no space left"
    sweep._save(tmp_path / "sweep.json", state)
    again = sweep._load(tmp_path / "sweep.json", ["6.1.170-3", "6.1.192-2", "6.12.117-1~deb12u1"], "virt-nfs")
    assert [e.status for e in again.values()] == ["measured", "failed", "pending"]   # a failed one is tried again
    table = sweep.summary(again)
    assert "| virt-nfs-6.1.170-3 | measured | - | - | 1.0032 | - | - | - |" in table
    assert "| virt-nfs-6.1.192-2 | failed: build: no space left |" in table


def test_the_sweep_builds_the_study_boards_at_the_series_ends_and_remembers_them(tmp_path):
    from boardlab.kernel import sweep
    versions = ["6.1.192-2", "6.12.117-1~deb12u1", "6.1.170-3", "6.12.107-1~deb12u1"]
    assert sweep.series_ends(versions) == ["6.1.170-3", "6.12.117-1~deb12u1"]
    assert sweep.series_ends(["6.1.170-3"]) == ["6.1.170-3"]
    assert sweep.study_boards() == ["sandpoint", "tqm860l"]   # kernels/6.1/<board>.config
    state = sweep._load(tmp_path / "sweep.json", versions, "virt-nfs")
    study = sweep._load_study(tmp_path / "sweep.json", versions)
    assert sorted(study) == [("sandpoint", "6.1.170-3"), ("sandpoint", "6.12.117-1~deb12u1"),
                             ("tqm860l", "6.1.170-3"), ("tqm860l", "6.12.117-1~deb12u1")]
    study[("tqm860l", "6.1.170-3")].status = "measured"
    sweep._save(tmp_path / "sweep.json", state, study)
    again = sweep._load_study(tmp_path / "sweep.json", versions)
    assert [b.status for b in again.values()].count("measured") == 1


def test_a_kernel_whose_suites_failed_is_failed_with_the_test_named(tmp_path, monkeypatch):
    """pytest's exit code counts: a boot time alone is not 'measured'; what the suites did
    measure stays in the run."""
    import io
    from types import SimpleNamespace

    from boardlab.facts.board import load_board
    from boardlab.kernel import sweep
    e = sweep.Entry("6.1.192-2", "virt-nfs-6.1.192-2")
    RunResults(tmp_path / e.name).record("qemu-arm", e.name, "boot_time", "guest_login", 1.0032)
    lines = ("testsuites/test_boot_time.py::test_milestones PASSED\n"
             "testsuites/test_jitter.py::test_cyclictest_under_load FAILED\n")

    class Proc:
        def __init__(self, *a, **k):
            self.stdout, self.returncode = io.StringIO(lines), None

        def wait(self):
            self.returncode = 1
    monkeypatch.setattr(sweep.subprocess, "Popen", Proc)
    monkeypatch.setattr(sweep, "source_date", lambda v: "2026-07-02")
    built = SimpleNamespace(built=SimpleNamespace(figures=lambda timed: {"vmlinux_dec_bytes": 4023380}))
    with pytest.raises(sweep.SuitesFailed, match=r"test_jitter::test_cyclictest_under_load failed"):
        sweep._measure(load_board("qemu-arm"), e, tmp_path, built)
    kept = {m["name"] for m in load_run(tmp_path / e.name)["metrics"]}
    assert kept == {"guest_login", "vmlinux_dec_bytes"}


def test_neighbours_are_decided_by_booting_only_what_one_boot_left_unknown(tmp_path, monkeypatch):
    from boardlab.facts.board import load_board
    from boardlab.ab import compare
    from boardlab.judge import verdict as vd
    from boardlab.kernel import neighbours
    board = load_board("qemu-arm")
    runs = {}
    for name, free, avg in (("k1", 100000, 86.0), ("k2", 99000, 90.0), ("k3", 99000, 90.0)):
        res = RunResults(tmp_path / name)
        res.record(board, name, "memory", "free_free_kb", free, samples=[free] * 3)   # shown to repeat
        if name != "k3":
            res.record(board, name, "jitter", "avg_us", avg)
        runs[name] = str(tmp_path / name)
    booted = []

    def fake_compare(env, kernels, families, **kw):
        booted.append((tuple(kernels), tuple(families), kw["max_repeats"]))
        row = compare.Row(compare.catalogue.spec("jitter.avg_us"),
                          vd.compare([86.0] * 5, [86.1] * 5, compare.catalogue.spec("jitter.avg_us")))
        return None, [row], {"markdown": Path(kw["out_dir"]) / "compare.md"}
    monkeypatch.setattr(compare, "compare", fake_compare)
    pairs = neighbours.decide_all(board, [("k1", runs["k1"]), ("k2", runs["k2"]), ("k3", runs["k3"])],
                                  tmp_path, budget=7)
    # k1..k2: memory decided from three boots each that repeat, jitter unknown: booted;
    # k2..k3 only memory
    assert booted == [(("k1", "k2"), ("jitter",), 7)]
    assert pairs[("k2", "k3")].status == "decided" and pairs[("k2", "k3")].counts[vd.SAME] == 1
    assert pairs[("k1", "k2")].status == "decided"
    assert ("k1", "k3") in pairs                                   # the two ends
    again = neighbours.decide_all(board, [("k1", runs["k1"]), ("k2", runs["k2"]), ("k3", runs["k3"])],
                                  tmp_path, budget=7)
    assert len(booted) == 1 and set(again) == set(pairs)           # decided once, remembered
    assert "| k1 | k2 | decided |" in neighbours.summary(again)
    answer = (tmp_path / "pairs" / "k1..k2" / "answer.md").read_text()   # both sources, one page
    assert "memory.free_free_kb" in answer.split("largest first")[1] and "1 regressed" in answer
