"""Parsers on output captured from the virtual board (tests/data/captured, made by
tests/data/capture.py) and on the 2005 study's own lines."""
import pytest

from boardlab.measure import parsers as p
from boardlab.measure.families import lmbench_output as lo
from paths import DATA

CAP = DATA / "captured"


def cap(name, kernel="armmp"):
    return (CAP / f"{kernel}.{name}.txt").read_text()


def test_free_busybox_columns():
    assert p.parse_free(cap("free")) == {"total": 112196, "used": 6140, "free": 90020,
                                         "shared": 10236, "buff_cache": 16036, "available": 92216}


def test_free_procps_2005_columns():
    text = ("             total       used       free     shared    buffers     cached\n"
            "Mem:         15032       7112       7920          0        108       2764\n")
    assert p.parse_free(text)["buffers"] == 108
    assert p.parse_free(text)["total"] == 15032


def test_kernel_memory_line_of_linux_6():
    m = p.parse_kernel_memory(cap("kernel-memory"))
    assert m["available_kb"] == 83744 and m["total_kb"] == 131072
    assert (m["code_kb"], m["rwdata_kb"], m["rodata_kb"], m["init_kb"]) == (11264, 1700, 3732, 2048)
    assert m["code_data_kb"] == 11264 + 1700 + 3732


@pytest.mark.parametrize("line, code, data, init, code_data", [
    ("Memory: 13396k available (892k kernel code, 252k data, 52k init, 0k highmem)", 892, 252, 52, 1144),
    ("Memory: 12980k available (1240k kernel code, 288k data, 88k init, 0k highmem)", 1240, 288, 88, 1528),
    ("Memory: 59648KB available (826K code, 134K data, 64K init)", 826, 134, 64, 960),
])
def test_kernel_memory_line_of_the_study(line, code, data, init, code_data):
    m = p.parse_kernel_memory(line)
    assert (m["code_kb"], m["data_kb"], m["init_kb"], m["code_data_kb"]) == (code, data, init, code_data)


def test_mem_eat_last_total_survives_the_oom_kill():
    assert p.parse_mem_eat(cap("mem_eat")) == {"bytes": 90963968, "kb": 88832, "ended_by": "killed"}
    assert p.parse_mem_eat("Got total = 9240576 = 9024kB\n")["kb"] == 9024


def test_lmbench_lines():
    text = "\n".join(cap(n) for n in ("lat_syscall", "lat_proc", "lat_pipe", "lat_unix",
                                      "lat_udp", "lat_tcp", "lat_connect", "lat_select",
                                      "lat_pagefault", "bw_pipe", "bw_unix"))
    r = lo.parse_lines(text)
    assert r["lat_syscall_null_us"] == 13.2252
    assert r["lat_proc_fork_us"] == 3882.4444
    assert r["lat_udp_us"] == 576.3255
    assert r["lat_connect_us"] == 2497.3171
    assert r["lat_select_100fd_us"] == 64.7857
    assert r["lat_pagefault_us"] == 4.7496
    assert r["bw_pipe_mb_s"] == 67.95
    assert {"lat_pipe_us", "lat_unix_us", "lat_tcp_us", "bw_unix_mb_s"} <= set(r)


def test_lmbench_runs_by_label():
    """runs.sh's output (jobs/testdefs/lmbench): each run's lines, as the programs printed
    them on the board, under the label of the figure they give."""
    text = "\n".join(["@lm-group connect", *(f"@lm lat_connect_us\n{cap('lat_connect')}" for _ in range(2)),
                      "@lm-group file_create_delete", "@lm lat_fs_0k", cap("lat_fs"),
                      "@lm-failed 1: lat_fs -s 0 /tmp"])
    r = lo.parse_runs(text)
    assert r["groups"] == ["connect", "file_create_delete"] and r["failed"] == ["1: lat_fs -s 0 /tmp"]
    assert [lo.parse_lines(t)["lat_connect_us"] for t in r["runs"]["lat_connect_us"]] == [2497.3171] * 2
    assert lo.parse_lat_fs(r["runs"]["lat_fs_0k"][0])[0] == {"create_per_s": 4959.0, "delete_per_s": 8601.0}


def test_a_familys_figures_by_their_patterns():
    patterns = (("udp_us", r"UDP latency using \S+:\s*([\d.]+) micro"), ("pipe_mb_s", r"^Pipe bandwidth:\s*([\d.]+)"))
    assert p.parse_figures(cap("lat_udp") + "\n" + cap("bw_pipe"), patterns) == {"udp_us": 576.3255, "pipe_mb_s": 67.95}
    with pytest.raises(p.ParseError, match="no pipe_mb_s"):
        p.parse_figures(cap("lat_udp"), patterns)


def test_hackbench_time_by_its_familys_pattern():
    """rt-tests' hackbench prints its settings, then its time (the format of hackbench's
    source; no board's capture yet)."""
    from boardlab.measure import families
    out = ("Running in process mode with 4 groups using 40 file descriptors each (== 160 tasks)\n"
           "Each sender will pass 100 messages of 100 bytes\nTime: 0.123\n")
    assert p.parse_figures(out, families.get("hackbench").figures) == {"time_s": 0.123}
    with pytest.raises(p.ParseError, match="no time_s"):
        p.parse_figures("hackbench: not found", families.get("hackbench").figures)


def test_lat_ctx_blocks():
    r = lo.parse_lat_ctx(cap("lat_ctx"))
    assert r[0] == {"ovr": 65.54, 2: 64.50, 4: 65.89, 8: 85.78, 16: 112.57}
    assert r[16][2] == 94.31


def test_lat_fs_creates_and_deletes_per_second():
    r = lo.parse_lat_fs(cap("lat_fs"))
    assert r[0] == {"create_per_s": 4959.0, "delete_per_s": 8601.0}
    assert set(r) == {0, 1, 4, 10}


def test_size_value_programs():
    assert lo.parse_size_value(cap("lat_mmap")) == (1.048576, 612.0)
    assert lo.parse_size_value(cap("bw_tcp")) == (0.065536, 110.27)
    assert lo.parse_size_value(cap("bw_file_rd")) == (1.05, 266.57)


def test_cyclictest_json_keys_lose_their_trailing_colon():
    j = p.parse_cyclictest_json(cap("cyclictest-json"))
    assert j["rt_test_version"] == "2.40"
    assert j["cmdline"].startswith("cyclictest -q")
    assert j["thread"]["0"]["max"] == 5083


def reduce_cycles(text: str, per_slice: int = 0) -> dict:
    """The board's reduction of a run's per-cycle lines, run here in sh (awk as the board's)."""
    import subprocess
    from boardlab.measure import target_load
    lib = str(target_load.LIB / "cycles.sh")
    r = subprocess.run(["sh", "-c", target_load.cycles_reduction("/dev/stdin", per_slice, lib=lib)], input=text,
                       capture_output=True, text=True, check=True)
    return p.parse_cycles_reduction(r.stdout.splitlines())


def test_the_histogram_is_made_from_every_cycles_latency():
    """cyclictest -v's lines ('thread:cycle:us', after its banner), captured under the
    suite's load: the board's one-pass reduction counts every cycle once, into the
    histogram or its overflows, and gives the max of each slice."""
    text = cap("cyclictest-verbose")
    values = [int(ln.split(":")[2]) for ln in text.splitlines() if ln.count(":") == 2]
    r = reduce_cycles(text, per_slice=100)
    assert r["cycles"] == len(values) == 999 and r["overflows"] == 0
    assert sum(r["histogram"].values()) == 999
    assert r["histogram"] == {v: values.count(v) for v in set(values)}
    assert r["slices"] == [(n, max(values[n - 100:n])) for n in range(100, 1000, 100)]
    over = reduce_cycles(text + "       0:     999:   25000\n")    # 25 ms: beyond the histogram
    assert over["overflows"] == 1 and over["histogram"] == r["histogram"]
    assert p.percentile_from_histogram(over["histogram"], 100, over["overflows"]) == max(values)


def test_a_reduction_without_its_count_is_a_parse_error():
    with pytest.raises(p.ParseError, match="no 'N cycles overflows' line"):
        p.parse_cycles_reduction(["H 80 3", "awk: not found"])


def test_percentile_from_histogram():
    counts = {10: 50, 20: 40, 100: 9, 500: 1}
    assert p.percentile_from_histogram(counts, 50) == 10
    assert p.percentile_from_histogram(counts, 99) == 100
    assert p.percentile_from_histogram(counts, 100) == 500


def test_size_of_vmlinux():
    text = ("   text\t   data\t    bss\t    dec\t    hex\tfilename\n"
            "1838116\t 125624\t 172708\t2136448\t 209a80\tvmlinux\n")
    assert p.parse_size(text) == {"text": 1838116, "data": 125624, "bss": 172708, "dec": 2136448}


def test_mkimage_list():
    r = p.parse_mkimage_list(cap("mkimage-l"))
    assert r == {"name": "Linux-6.1.0-50-armmp", "type": "ARM Linux Kernel Image (uncompressed)",
                 "data_size": 5448192, "load_addr": 0x40008000, "entry": 0x40008000}


def test_bad_output_is_a_parse_error_not_a_zero():
    with pytest.raises(p.ParseError):
        p.parse_mem_eat("sh: mem_eat: not found")
    with pytest.raises(p.ParseError):
        p.parse_cyclictest_json("cyclictest: invalid option -- 'n'")


@pytest.mark.parametrize("name, functions", [("load.sh", ("load_start", "load_stop")),
                                             ("cycles.sh", ("cycles_reduce",)),
                                             ("lmbench/runs.sh", ("lm_groups", "lm_context_switch"))])
def test_the_board_side_scripts_reach_the_board_whole(tmp_path, monkeypatch, name, functions):
    """The install lines write jobs/testdefs/lib/<name> or jobs/testdefs/<name> (less
    comments) and it parses; the command under load reports its own exit status last."""
    import subprocess

    from boardlab.measure import target_load
    monkeypatch.setitem(target_load.ON_BOARD, name, str(tmp_path / "on-board.sh"))
    cmds = target_load.install_commands(name)
    assert len(cmds) == 1 or "/" in name   # the jitter suite's libraries: one line each
    for cmd in cmds:
        assert len(cmd) < 900       # busybox's line editor: 1024 characters with labgrid's markers
        subprocess.run(["sh", "-c", cmd], check=True)
    written = (tmp_path / "on-board.sh").read_text()
    assert written.splitlines() == [ln.strip() for ln in (target_load.TESTDEFS / (name if "/" in name else f"lib/{name}"))
                                    .read_text().splitlines() if ln.strip() and not ln.strip().startswith("#")]
    subprocess.run(["sh", "-n", str(tmp_path / "on-board.sh")], check=True)
    assert all(f"{f}() {{" in written for f in functions)
    assert target_load.under_load("false").endswith("; false; rc=$?; load_stop; echo rc=$rc")
    if name == "cycles.sh":     # the installed copy reduces as the tree's does
        lines = "banner\n 0:      1:     80\n 0:      2:     95\n"
        got = subprocess.run(["sh", "-c", target_load.cycles_reduction("/dev/stdin", lib=str(tmp_path / "on-board.sh"))],
                             input=lines,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        assert sorted(got[:2]) == ["H 80 1", "H 95 1"] and got[2] == "N 2 0 80 95 175"


def test_userland_manifest_of_a_cross_built_image():
    text = ("# what this image's user land was built from (boardlab/images/crossbuild.py)\n"
            "busybox: 1:1.35.0-4+deb12u1\n"
            "lmbench: missing: apt-get source lmbench=3.0-a9+debian.1-6 failed: E: Failed to "
            "fetch http://deb.debian.org/debian/pool/non-free/l/lmbench/lmbench_3.0-a9%2bdebian"
            ".1.orig.tar.gz  404  Not Found\n")
    got = p.parse_userland_manifest(text)
    assert got["busybox"] is None
    assert got["lmbench"].startswith("apt-get source lmbench=3.0-a9+debian.1-6 failed: E: ")
    assert p.parse_userland_manifest("") == {}


def test_benches_leave_out_the_families_a_board_image_lacks():
    from boardlab.measure import sample

    class Shell:   # what `cat /etc/boardlab-userland` prints on qemu-ppc, or on an image without one
        def __init__(self, out, rc):
            self.out, self.rc = out, rc

        def run(self, cmd):
            return self.out, [], self.rc
    ppc = Shell(["busybox: 1:1.35.0-4+deb12u1", "lmbench: missing: sources 404",
                 "rt-tests: missing: sources 404"], 0)
    fams, why = sample.measurable(ppc, sample.FAMILIES)
    assert fams == ["boot_time", "memory", "mem_bw"]   # the project's program: its own check
    assert why == {"lmbench": "its image has no lmbench: sources 404",
                   "jitter": "its image has no rt-tests: sources 404",
                   "hackbench": "its image has no rt-tests: sources 404"}
    # an image without the list: Debian's packages all there, the project's programs not
    assert sample.measurable(Shell([], 1), sample.FAMILIES) == (
        [f for f in sample.FAMILIES if f != "mem_bw"],
        {"mem_bw": "its image has no /usr/lib/boardlab/bin/blmeasure (the project's programs)"})
