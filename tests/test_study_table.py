"""The study's table with a third column: kernels configured over a defconfig the
fragment names, and `boardlab report --study` beside the study's 2.4.25 and 2.6.11.7."""
import pytest

from boardlab.kernelbuilds import kbuild
from boardlab.pages import study_table
from boardlab.judge.results import RunResults
from paths import ROOT


def test_a_fragment_names_its_base_config_or_gets_allnoconfig(tmp_path):
    assert kbuild.base_config(ROOT / "kernels/6.1/tqm860l.config") == "tqm8xx_defconfig"
    assert kbuild.base_config(ROOT / "kernels/6.1/sandpoint.config") == "linkstation_defconfig"
    assert kbuild.base_config(ROOT / "kernels/virt-nfs/qemu-arm.config") == "allnoconfig"
    bad = tmp_path / "bad.config"
    bad.write_text("# base: ../../etc/passwd\n")
    with pytest.raises(kbuild.KernelBuildError, match="bad.config: '# base: ../../etc/passwd'"):
        kbuild.base_config(bad)


def test_the_report_says_which_config_stands_in_for_the_sandpoints():
    how = kbuild.describe_config(ROOT / "kernels/6.1/sandpoint.config")
    assert how.startswith("linkstation_defconfig + 6.1/sandpoint.config (")
    assert "MPC8241" in how


def test_both_powerpc_boards_are_built_with_the_powerpc_cross_compiler():
    assert kbuild.ARCH["ppc"].cross == "powerpc-linux-gnu-"
    assert kbuild.ARCH["ppc"].target_is_uimage


def _run_with_61(tmp_path):
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "none")
    res.meta["kernel_configs"] = {"tqm860l 6.1": "tqm8xx_defconfig + 6.1/tqm860l.config"}
    for name, value in (("uimage_data_bytes", 1400000), ("vmlinux_text_bytes", 3000000),
                        ("real_s", 300.0)):
        res.record("tqm860l", "6.1", "build", name, value)
    return str(tmp_path / "run")


def test_the_study_table_puts_6_1_beside_2_4_and_2_6(tmp_path):
    head, rows, notes = study_table.study_table(_run_with_61(tmp_path))
    assert head == ["metric", "unit", "2.4.25", "2.6.11.7", "6.1", "2.6.11.7 -> 6.1", "clock"]
    by = {r[0]: r for r in rows}
    assert by["tqm860l build.uimage_data_bytes"][2:6] == ["507688", "723718", "1400000", "+93.4 %"]
    assert by["tqm860l build.vmlinux_text_bytes"][2:5] == ["1025524", "1497745", "3000000"]
    assert notes == ["tqm860l 6.1: tqm8xx_defconfig + 6.1/tqm860l.config"]


def _build_run(path, kernel, sizes):
    res = RunResults(path, baselines_root=path.parent / "none")
    for name, value in sizes.items():
        res.record("tqm860l", kernel, "build", name, value)
    return str(path)


def test_two_ends_of_a_series_are_judged_beside_the_study(tmp_path):
    """As the DENX page set 2.4 against 2.6: the sweep's oldest 6.1 and newest 6.12 build,
    columns in the order given, their change and its verdict (sizes are exact)."""
    a = _build_run(tmp_path / "a", "6.1.170-3", {"uimage_data_bytes": 2615537, "vmlinux_bss_bytes": 162512})
    b = _build_run(tmp_path / "b", "6.12.117-1~deb12u1", {"uimage_data_bytes": 2771000,
                                                          "vmlinux_bss_bytes": 162512})
    head, rows, _ = study_table.study_table([a, b])
    assert head == ["metric", "unit", "2.4.25", "2.6.11.7", "6.1.170-3", "6.12.117-1~deb12u1",
                    "2.6.11.7 -> 6.12.117-1~deb12u1", "6.1.170-3 -> 6.12.117-1~deb12u1",
                    "verdict", "clock"]
    by = {r[0]: r for r in rows}
    assert by["tqm860l build.uimage_data_bytes"][2:9] == [
        "507688", "723718", "2615537", "2771000", "+282.9 %", "+5.9 %", "regressed"]
    assert by["tqm860l build.vmlinux_bss_bytes"][7:9] == ["+0.0 %", "same"]
    assert "| 6.1.170-3 -> 6.12.117-1~deb12u1 | verdict |" in study_table.markdown([a, b])


def test_build_times_of_2005_hosts_and_this_one_are_shown_never_compared(tmp_path):
    _, rows, _ = study_table.study_table(_run_with_61(tmp_path))
    real = {r[0]: r for r in rows}["tqm860l build.real_s"]
    assert real[2:6] == ["50.3", "72.2", "300", "other hosts"]
    assert real[6].startswith("host: 2.4.25, 2.6.11.7 on the study's 2005 build hosts; 6.1 on vm-")


def test_a_run_of_a_board_the_study_never_measured_is_a_clear_error(tmp_path):
    res = RunResults(tmp_path / "run", baselines_root=tmp_path / "none")
    res.record("qemu-arm", "virt-nfs", "build", "real_s", 200.0)
    with pytest.raises(ValueError, match="qemu-arm.*tqm860l and sandpoint"):
        study_table.study_table(str(tmp_path / "run"))


@pytest.fixture(scope="module")
def powerpc_config_dir(tmp_path_factory):
    """One build directory for both boards: kconfig's own programs are compiled once
    (each `make <base>_defconfig` writes its .config anew)."""
    return tmp_path_factory.mktemp("powerpc-config")


@pytest.mark.parametrize("board, option", [("tqm860l", "CONFIG_TQM8XX=y"),
                                           ("sandpoint", "CONFIG_LINKSTATION=y")])
def test_the_powerpc_configs_resolve_with_the_cross_compiler(powerpc_config_dir, board, option):
    """Configure only (seconds): the base defconfig exists in the 6.1 source the kernel is
    pinned to (the virtual boards' too: one unpacked tree) and every option the fragment
    asks for survives; the build itself is the suite's."""
    from boardlab.kernelbuilds import sources
    from boardlab.facts.board import load_board
    xa = kbuild._arch(load_board(board))
    out = powerpc_config_dir
    kbuild._configure(kbuild.source_tree(sources.of_kernel("6.1")), out, xa, ROOT / f"kernels/6.1/{board}.config",
                      out / f"{board}.log")
    config = (out / ".config").read_text().splitlines()
    assert option in config and "CONFIG_PPC32=y" in config
