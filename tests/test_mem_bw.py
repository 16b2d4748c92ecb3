"""The memory-bandwidth family (boardlab/measure/families/mem_bw.py), added as a family is
added (docs/where-to-add.md): its reader on its program's real output, its board-side
runs on both harnesses' paths, its working set from the board's RAM, and its program's
output that is no figure as the test's fault."""
import subprocess

import pytest

from boardlab import errors
from boardlab.images import ownprograms
from boardlab.measure import families, sample, tagged
from boardlab.measure.families import mem_bw
from boardlab.facts.board import load_board
from paths import ROOT

# printed by the armhf build of target/measure/ (bw_mem 1m rd|wr|cp, BL_TRIES=3) under
# QEMU's user mode on this project's host, 2026-12-06: the host's time, not a board's
CAPTURED = """mem_bw: working set 1024k
@raw bw mem_rd bytes=1073741824 ns=446862739
@raw bw mem_wr bytes=2147483648 ns=250062568
@raw bw mem_cp bytes=1073741824 ns=272689751""".splitlines()


def test_the_reader_reads_the_programs_raw_lines():
    got = mem_bw.read(CAPTURED)
    assert got == pytest.approx({"mem_bw.rd_mb_s": 1073741824 / 1e6 / 0.446862739,
                                 "mem_bw.wr_mb_s": 2147483648 / 1e6 / 0.250062568,
                                 "mem_bw.cp_mb_s": 1073741824 / 1e6 / 0.272689751})
    assert families.get("mem_bw").read(CAPTURED) == got


@pytest.mark.parametrize("lines, said", [
    (CAPTURED[:3], "printed no cp figure"),
    (["@raw bw mem_rd bytes=12x ns=5"], "is no figure"),
    (["sh: bw_mem: not found"], "printed no rd figure"),
])
def test_output_that_is_no_figure_is_the_tests_fault(lines, said):
    with pytest.raises(errors.TestFault, match=said):
        mem_bw.read(lines)


@pytest.mark.parametrize("mem_kb, size", [(16384, "1024k"), (131072, "8192k"), (2048, "256k")])
def test_the_working_set_is_sized_from_the_boards_ram(tmp_path, mem_kb, size):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal:       {mem_kb} kB\nMemFree:        1000 kB\n")
    out = subprocess.run(["sh", "-c", f". {ROOT}/jobs/testdefs/mem_bw/runs.sh && echo $(mb_size_kb)k"],
                         env={"MB_MEMINFO": str(meminfo), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == size


def test_both_harnesses_run_the_same_runs_and_read_every_figure(tmp_path, monkeypatch):
    """LAVA's definition and the pytest side, bw_mem the armhf build under QEMU's user mode:
    each gives the family's three figures through its one reader."""
    from testdefs import LocalShell, run_testdef, stub_commands
    from boardlab.measure import target_load
    binary = ownprograms.build("armhf")
    scripts = {"bw_mem": f'exec qemu-arm {binary} bw_mem "$@"'}
    (tmp_path / "lava").mkdir()
    (tmp_path / "pytest").mkdir()
    reported, lines = run_testdef(tmp_path / "lava", "mem_bw", scripts, TOOLS="own", QUICK="true")
    assert reported == [("measured", "pass")]
    (section, rc), = tagged.sections(lines).values()
    assert rc == 0 and set(mem_bw.read(section)) == {m.key for m in mem_bw.METRICS}
    monkeypatch.setitem(target_load.ON_BOARD, "mem_bw/runs.sh", str(tmp_path / "runs.sh"))
    shell = LocalShell(stub_commands(tmp_path / "pytest", scripts))
    assert set(sample.family("mem_bw", shell, None, tools=families.OWN)) == {m.key for m in mem_bw.METRICS}


def test_on_a_root_with_debian_s_set_lava_s_definition_brings_the_programs_for_the_board_s_cpu(tmp_path):
    """qemu-arm's root carries Debian's programs; LAVA's mem_bw job (TOOLS=own, OWN_ISA=armhf)
    finds the project's in its own test definitions' tarball (own/armhf/), the suites' reader
    reads every figure. The binary runs under QEMU's user mode here (a wrapper in its place)."""
    import tarfile
    from testdefs import stub_commands
    from boardlab.lava import jobs
    job = jobs.render_job(load_board("qemu-arm"), "armmp", ["mem_bw"], root="ramdisk", testdefs_url="file:///x")
    params = next(d for a in job["actions"] if "test" in a for d in a["test"]["definitions"])["parameters"]
    assert params["TOOLS"] == families.OWN and params["OWN_ISA"] == "armhf"
    assert jobs.own_isas_of(load_board("qemu-arm"), ["mem_bw"]) == ("armhf",)
    assert jobs.own_isas_of(load_board("qemu-arm"), ["memory", "lmbench"]) == ()    # its overlay stays as it was
    assert jobs.own_isas_of(load_board("qemu-ppc"), ["mem_bw"]) == ()               # its root has them
    tarball = jobs.testdefs_tarball(tmp_path / "testdefs.tar.gz", own_isas=("armhf",))
    defs = tmp_path / "lava"
    with tarfile.open(tarball) as tar:
        tar.extractall(defs)
        assert tar.getmember("own/armhf/blmeasure").mode & 0o111
    real = tmp_path / "blmeasure.armhf"
    (defs / "own/armhf/blmeasure").rename(real)
    (defs / "own/armhf/blmeasure").write_text(f'#!/bin/sh\nexec qemu-arm {real} "$(basename "$0")" "$@"\n')
    (defs / "own/armhf/blmeasure").chmod(0o755)
    (defs / "lib/load.sh").write_text("load_start() { :; }\nload_stop() { :; }\n")
    stubs = stub_commands(tmp_path, {})
    (stubs / "bw_mem").unlink()                # the root has none of the project's programs
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "TOOLS": "own", "OWN_ISA": "armhf", "QUICK": "true",
           "OWN_BIN_DIR": str(tmp_path / "board-bin")}
    r = subprocess.run(["sh", "./mem_bw.sh"], cwd=defs / "mem_bw", env=env, capture_output=True, text=True,
                       timeout=300)
    assert "the project's programs for armhf from the test definitions" in r.stdout, r.stdout + r.stderr
    (section, rc), = tagged.sections(r.stdout.splitlines()).values()
    assert rc == 0 and set(mem_bw.read(section)) == {m.key for m in mem_bw.METRICS}
    assert (tmp_path / "reported").read_text().split() == ["measured", "pass"]


def test_without_the_projects_programs_the_definition_fails_and_runs_no_debian_namesake(tmp_path):
    """A job whose definitions came without own/<cpu>/ (a tarball made without the job's
    CPUs) on a root of Debian's set: the case fails, saying what is missing, and Debian's
    bw_mem (lmbench's, another output) never runs in the project's program's place."""
    import tarfile
    from testdefs import stub_commands
    from boardlab.lava import jobs
    defs = tmp_path / "lava"
    with tarfile.open(jobs.testdefs_tarball(tmp_path / "testdefs.tar.gz")) as tar:
        tar.extractall(defs)
    stubs = stub_commands(tmp_path, {"bw_mem": f"echo ran >> {tmp_path}/debian-bw_mem"})   # Debian's, lmbench's
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "TOOLS": "own", "OWN_ISA": "armhf", "QUICK": "true"}
    r = subprocess.run(["sh", "./mem_bw.sh"], cwd=defs / "mem_bw", env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and "neither on the root" in r.stdout and "own/armhf" in r.stdout, r.stdout
    assert "@boardlab-raw" not in r.stdout and not (tmp_path / "debian-bw_mem").exists()
    assert (tmp_path / "reported").read_text().split() == ["measured", "fail"]
