"""lmbench, the results the study reports. lmbench writes its results to stderr (the
console carries both). Quick mode (--quick) shortens lmbench's timing loops
(boardlab.measure.workloads.LMBENCH_QUICK: 1-5 s a program instead of 30 s under emulation)."""
import pytest

from boardlab.measure import parsers, workloads

pytestmark = pytest.mark.workload   # its runs leave sockets, files and slab behind

@pytest.fixture
def lm(shell, quick, require_package):
    require_package("lmbench")
    env = workloads.lmbench_env(quick)

    def run(cmd, timeout=600):
        out, _, rc = shell.run(f"{env}{cmd} 2>&1", timeout=timeout)
        text = "\n".join(out)
        assert rc == 0, f"{cmd} failed ({rc}):\n{text}"
        return text
    return run


@pytest.fixture
def not_small(board_facts):
    if workloads.small_board(board_facts.ram_mb):
        pytest.skip(f"{board_facts.name} has {board_facts.ram_mb} MB RAM: this lmbench "
                    f"test ran out of memory there in the study")


def server(lm, prog, *args):
    """Client/server programs: start the server, measure, stop it."""
    return lm(f"{prog} -s; sleep 0.2; {prog} {' '.join(args)} 127.0.0.1; {prog} -S 127.0.0.1")


def test_latencies(lm, gate):
    text = "\n".join([
        lm("lat_syscall null"), lm("lat_proc fork"), lm("lat_pipe"), lm("lat_unix"),
        server(lm, "lat_udp"), server(lm, "lat_tcp"),
        lm("lat_select -n 100 file"),
        lm("dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null; lat_pagefault /tmp/lmfile"),
    ])
    r = parsers.parse_lmbench(text)
    for name in ("lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us",
                 "lat_udp_us", "lat_tcp_us", "lat_select_100fd_us",
                 "lat_pagefault_us"):
        assert name in r, f"{name} missing in lmbench output:\n{text}"
        gate.record("lmbench", name, r[name])
    _, mmap_us = parsers.parse_size_value(lm("lat_mmap 1m /tmp/lmfile"))
    gate.record("lmbench", "lat_mmap_1m_us", mmap_us)
    # loopback TCP connect follows the host's timing of the virtual NIC: sampled
    gate.sample("lmbench", lambda: {"lat_connect_us": parsers.parse_lmbench(
        server(lm, "lat_connect"))["lat_connect_us"]})
    gate.check()


def test_file_create_delete(lm, gate):
    fs = parsers.parse_lat_fs(lm("lat_fs -s 0 /tmp"))
    gate.record("lmbench", "lat_fs_create_0k_per_s", fs[0]["create_per_s"])
    gate.record("lmbench", "lat_fs_delete_0k_per_s", fs[0]["delete_per_s"])
    gate.check()


def test_context_switch(lm, gate, not_small):
    for size in (0, 1, 16):
        ctx = parsers.parse_lat_ctx(lm(f"lat_ctx -s {size} 2 4 8 16"))[size]
        for nproc in (2, 4, 8, 16):
            gate.record("lmbench", f"lat_ctx_{size}k_{nproc}p_us", ctx[nproc])
    gate.check()


def test_bandwidth(lm, gate, not_small):
    r = parsers.parse_lmbench(lm("bw_pipe") + "\n" + lm("bw_unix"))
    gate.record("lmbench", "bw_pipe_mb_s", r["bw_pipe_mb_s"])
    gate.record("lmbench", "bw_unix_mb_s", r["bw_unix_mb_s"])
    gate.sample("lmbench", lambda: {"bw_tcp_mb_s": parsers.parse_size_value(lm(
        "bw_tcp -s; sleep 0.2; bw_tcp -m 65536 127.0.0.1; bw_tcp -S 127.0.0.1"))[1]})
    _, reread = parsers.parse_size_value(lm(
        "dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null; "
        "bw_file_rd 1m io_only /tmp/lmfile; rm -f /tmp/lmfile"))
    gate.record("lmbench", "bw_file_reread_mb_s", reread)
    gate.check()
