"""A virtual board's load (boardlab/facts/loads.py, boardlab/vlab/boardload.py): written
one way, refused in one line, carried to the board as a device-tree node QEMU adds at the
power switch, its seed moving on each power-on; none leaves the board's QEMU as it was."""
import dataclasses
import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

import re

import pytest

from boardlab.errors import Bug
from boardlab.facts import loads
from boardlab.facts.board import load_board
from boardlab.facts.labhosts import load_lab_host
from boardlab.vlab import power
from paths import ROOT

RCS = ROOT / "target/rootfs/etc/init.d/rcS"


@pytest.mark.parametrize("text,load", [
    ("none", loads.Load("none")),
    ("steady:10", loads.Load("steady", 10.0)),
    ("bursts:0.5", loads.Load("bursts", 0.5)),
    ("bursts:2@41", loads.Load("bursts", 2.0, 41)),
    ("perboot:1@3", loads.Load("perboot", 1.0, 3)),
    ("hostcpu:50", loads.Load("hostcpu", 50.0)),
    ("lan:1@5", loads.Load("lan", 1.0, 5, 1.0)),
    ("perboot:1@3807+lan:0.5", loads.Load("perboot", 1.0, 3807, 0.5)),
])
def test_a_load_is_read_and_written_back_the_same(text, load):
    assert loads.parse(text) == load and str(load) == text


@pytest.mark.parametrize("text,why", [
    ("steady", "none, steady:PERCENT, bursts:PERCENT"),
    ("heavy:10", "none, steady:PERCENT, bursts:PERCENT"),
    ("perboot:11", "at most 10 %"),
    ("hostcpu:150", "at most 100 % of one host core"),
    ("hostcpu:50@2", "a hostcpu load has no seed"),
    ("steady:0", "more than 0 and at most 90 %"),
    ("bursts:25", "at most 20 %"),
    ("steady:10@3", "a steady load has no seed"),
    ("lan:25", "a LAN's delay takes more than 0 and at most 20 ms"),
    ("steady:10+lan:1", "a delay on the LAN rides a seeded load"),
    ("perboot:1+lan", "written LOAD\\+lan:MS"),
])
def test_a_load_written_wrong_is_one_line_naming_the_board(text, why):
    with pytest.raises(loads.LoadError, match=why) as e:
        loads.parse(text, "qemu-arm")
    assert str(e.value).startswith(f"board qemu-arm: load '{text}': ") and "\n" not in str(e.value)


def test_a_board_whose_machine_builds_its_device_tree_late_takes_no_load():
    with pytest.raises(loads.LoadError, match="ppce500 builds its device tree after its devices"):
        loads.check_board(load_board("qemu-ppc"), loads.parse("steady:10"))
    loads.check_board(load_board("qemu-ppc"), loads.parse("none"))
    loads.check_board(load_board("qemu-ppc"), loads.parse("hostcpu:50"))   # on the host: any board


def test_a_host_cpu_cap_adds_nothing_to_the_boards_qemu_and_caps_a_process(tmp_path, monkeypatch):
    """hostcpu:P puts no node on the board; cap_cpu writes the quota and the process into a
    cgroup of the board's (here a directory standing in for the cpu controller)."""
    import subprocess
    from boardlab.vlab import boardload
    board = load_board("qemu-arm-noisy")
    lab = dataclasses.replace(load_lab_host(board.lab_host), run_dir=str(tmp_path))
    assert power.qemu_command(board, lab, uart_fd=3, load=loads.parse("hostcpu:50")) == \
        power.qemu_command(board, lab, uart_fd=3)
    with pytest.raises(Bug, match="not a load the board runs"):   # the host's cap has no board program
        loads.parse("hostcpu:50").program(0)
    v1 = tmp_path / "cpu"
    v1.mkdir()
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    monkeypatch.setattr(boardload, "CGROUP_V1", v1)
    proc = subprocess.Popen(["sleep", "5"])
    try:
        d = boardload.cap_cpu(board, proc.pid, 50)
        assert d == v1 / "boardlab" / "qemu-arm-noisy"
        assert (d / "cpu.cfs_quota_us").read_text() == "50000\n" and (d / "cpu.cfs_period_us").read_text() == "100000\n"
        assert (d / "cgroup.procs").read_text() == f"{proc.pid}\n"
    finally:
        proc.kill()
        proc.wait()


def test_the_seed_is_the_boards_and_moves_on_each_power_on():
    a = loads.seeded(loads.parse("bursts:1"), "qemu-arm")
    assert a == loads.seeded(loads.parse("bursts:1"), "qemu-arm") and a.seed is not None
    assert loads.seeded(loads.parse("bursts:1@7"), "qemu-arm").seed == 7
    assert [a.seed_of(n) for n in (0, 1)] == [a.seed, a.seed + 1]
    assert f"RANDOM={a.seed + 1}\n" in a.program(1)
    steady = loads.parse("steady:10").program(5)
    assert steady.startswith("# boardlab.load=steady:10 power-on 5\n")
    assert "while :; do x=100; spin $((c * x / 1000)); w=$((1100 - x / 10)); read -t 0.${w#1} _ <&3; done" in steady


def test_a_per_boot_level_is_drawn_on_the_host_with_the_spread_it_states():
    """perboot:L: each power-on's busy share uniform over 0..2 sqrt(3) L %, so its standard
    deviation over power-ons is L % (the model; what it does to figures is measured by
    bench/noise.py, docs/virtual-lab.md)."""
    import statistics
    load = loads.seeded(loads.parse("perboot:2"), "qemu-arm")
    shares = [load.share(n) for n in range(4000)]
    assert 0 <= min(shares) and max(shares) <= 6.93
    assert statistics.pstdev(shares) == pytest.approx(2.0, rel=0.05)
    assert statistics.mean(shares) == pytest.approx(3.46, rel=0.05)
    assert load.share(7) == load.share(7)                         # a rerun repeats it
    program = load.program(7)
    assert f"x={round(load.share(7) * 10)}; spin" in program and f"share {load.share(7):g} %" in program


@pytest.mark.parametrize("setting", ["steady:10", "bursts:2@9", "perboot:1@4"])
def test_the_load_loop_runs_builtins_only(setting):
    """A fork costs the board milliseconds, load of its own: the loop, and the functions
    it calls, name no program (the live count is tests/test_vlab_load.py's)."""
    lines = loads.parse(setting).program(0).splitlines()
    loop = [ln for ln in lines if ln.startswith("while :; do")]
    functions = [ln for ln in lines if ln.startswith(("spin()", "zero()"))]
    assert len(loop) == 1 and len(functions) == 2
    words = set()
    for line in loop + functions:
        body = re.sub(r"^\w+\(\) \{|\}$", "", line)
        assert "$(" not in body.replace("$((", "")   # no command substitution: a subshell
        for command in re.split(r";|\bdo\b|\bthen\b|\belse\b", body):
            command = command.strip()
            if command and not re.match(r"\w+=", command):   # an assignment
                words.add(command.split()[0])
    assert words <= {"while", "if", "[", "spin", "zero", "read", "printf", "fi", "done"}, words


@pytest.mark.parametrize("setting", ["steady:10", "bursts:0.5@9", "bursts:2", "perboot:0.5"])
def test_the_load_program_is_a_shell_program(setting):
    import subprocess
    program = loads.seeded(loads.parse(setting), "qemu-arm").program(0)
    assert subprocess.run(["sh", "-n", "-c", program]).returncode == 0


def test_the_load_rides_a_guest_loader_node_and_none_adds_nothing(tmp_path):
    board = load_board("qemu-arm")
    lab = dataclasses.replace(load_lab_host(board.lab_host), run_dir=str(tmp_path))
    plain = power.qemu_command(board, lab, uart_fd=3)
    assert not any("guest-loader" in a for a in plain)
    assert power.qemu_command(board, lab, uart_fd=3, load=loads.parse("none")) == plain
    cmd = power.qemu_command(board, lab, uart_fd=3, load=loads.parse("steady:10"), power_on=2)
    assert cmd[:len(plain)] == plain
    device = cmd[len(plain) + 1]
    assert device.startswith("guest-loader,addr=0x47f00000,kernel=")   # 128 MB: 1 MB under its top
    program = device.split(",bootargs=", 1)[1]
    assert program.replace(",,", ",") == loads.parse("steady:10").program(2)
    assert "," not in program.replace(",,", "")   # QEMU's option syntax: every comma doubled
    assert (tmp_path / "load.blob").read_bytes() == b"\0"


def test_a_facts_file_with_a_load_its_board_cannot_take_is_refused(tmp_path):
    from boardlab.facts.checks import check_board
    from boardlab.facts.typedyaml import FactsError
    board = load_board("qemu-ppc")
    bad = dataclasses.replace(board, qemu=dataclasses.replace(board.qemu, load="steady:10"))
    with pytest.raises(FactsError, match=r"qemu-ppc.yaml: field 'qemu.load': board qemu-ppc: QEMU machine ppce500"):
        check_board(bad, board.path)


def test_the_switch_keeps_a_load_for_the_next_power_on_and_refuses_a_bad_one():
    board = load_board("qemu-arm")
    outlet = power.Outlet(board, load_lab_host(board.lab_host))
    server = ThreadingHTTPServer(("127.0.0.1", 0), power.make_handler({1: outlet}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/outlet/1/load"

    def ask(body=None):
        req = urllib.request.Request(url, data=body, method="PUT" if body else "GET")
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read().decode().strip()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode().strip()
    try:
        assert ask() == (200, "none")
        status, said = ask(b"bursts:1")
        assert status == 200 and said.startswith("bursts:1@") and ask() == (200, said)
        assert ask(b"steady:10") == (200, "steady:10") and outlet.power_ons == 0
        assert ask(b"steady:95") == (400, "board qemu-arm: load 'steady:95': steady takes more than 0 "
                                          "and at most 90 % of the board's time")
        assert ask() == (200, "steady:10")   # the refused one changed nothing
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/", timeout=5) as r:
            assert json.loads(r.read())["1"]["load"] == "steady:10"
    finally:
        server.shutdown()
        server.server_close()


def test_the_boards_start_up_runs_the_node_and_a_real_board_has_none(tmp_path):
    """rcS runs the node's program only where the node is (no fork otherwise): its root is
    the same for every board (a file of the load's own in the root cost qemu-ppc's buffers
    8 kB, beyond their floor)."""
    import subprocess
    rcs = RCS.read_text()
    hook = rcs[rcs.index("for f in /sys/firmware/devicetree/base/chosen/module@*/bootargs; do"):rcs.index("stamp done")]
    assert """if [ -r "$f" ]; then sh -c "$(tr '\\0' ' ' < "$f")" > /dev/null 2>&1 & fi""" in hook
    node = tmp_path / "chosen" / "module@0x47f00000"
    node.mkdir(parents=True)
    (node / "bootargs").write_bytes(b"echo ran > " + str(tmp_path / "out").encode() + b"\0")
    script = hook.replace("/sys/firmware/devicetree/base", str(tmp_path)) + "wait\n"
    subprocess.run(["sh", "-c", script], check=True, timeout=10)
    assert (tmp_path / "out").read_text() == "ran\n"


@pytest.mark.parametrize("argv,why", [
    (["vlab", "load", "steady:10", "--board", "tqm860l"], "board tqm860l: its lab host labhost1 is not a virtual one here"),
    (["vlab", "load", "steady:10", "--board", "qemu-ppc"], "board qemu-ppc: QEMU machine ppce500"),
    (["vlab", "load", "heavy:1", "--board", "qemu-arm"], "board qemu-arm: load 'heavy:1': none, steady:PERCENT"),
    (["vlab", "clock", "fast"], "boardlab vlab clock fast: deterministic or realtime"),
])
def test_a_load_or_clock_the_lab_cannot_set_is_one_line_exit_2(argv, why):
    """Said before the power switch is asked (no switch need run)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "boardlab.cli", *argv], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_delay_on_the_lan_is_a_filter_on_the_boards_netdev_in_its_own_time(tmp_path):
    """lan:MS: QEMU's filter-buffer on the board's netdev (its timer on the virtual clock:
    the board's own time), its period drawn per power-on from the seed, 0.5 to 1.5 x MS;
    beside a load, its node is there as before."""
    board = load_board("qemu-arm")
    lab = dataclasses.replace(load_lab_host(board.lab_host), run_dir=str(tmp_path))
    plain = power.qemu_command(board, lab, uart_fd=3)
    lan = loads.parse("lan:2@7")
    cmd = power.qemu_command(board, lab, uart_fd=3, load=lan, power_on=1)
    assert cmd[:len(plain)] == plain and cmd[len(plain)] == "-object"
    assert cmd[len(plain) + 1] == f"filter-buffer,id=lan-delay,netdev=lan,queue=all,interval={lan.lan_period_us(1)}"
    assert f"tap,id=lan,ifname={board.qemu.tap},script=no,downscript=no" in plain
    periods = [lan.lan_period_us(i) for i in range(200)]
    assert 1000 <= min(periods) and max(periods) <= 3000 and len(set(periods)) > 150
    assert periods == [loads.parse("lan:2@7").lan_period_us(i) for i in range(200)]   # a rerun repeats it
    both = power.qemu_command(board, lab, uart_fd=3, load=loads.parse("perboot:1@3807+lan:1"), power_on=0)
    assert any(a.startswith("guest-loader,") for a in both) and any(a.startswith("filter-buffer,") for a in both)
    loads.check_board(load_board("qemu-ppc"), loads.parse("lan:1"))   # any board's netdev takes it
    assert loads.parse("perboot:1@3807").lan_period_us(0) is None
