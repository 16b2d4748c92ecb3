"""The console timestamper and milestone extraction, on output captured from the
virtual board (tests/data: raw console chunks as read, and the boot logs written
by the strategy for the same boots)."""
import pytest

from boardlab.measure import console as con
from paths import DATA

PATTERNS = con.milestone_patterns("login: ", r"root@qemu-arm:[^ ]*# ")


def test_a_line_is_stamped_with_the_arrival_of_its_first_character():
    ts = con.ConsoleTimestamper()
    ts.feed(b"U-Boot 2023", 1.0)
    ts.feed(b".01\r\nDRAM:  128 MiB\r\nCo", 2.0)
    ts.feed(b"re: 47 devices\r\n", 3.0)
    assert [(ln.t, ln.text) for ln in ts.lines] == [
        (1.0, "U-Boot 2023.01"), (2.0, "DRAM:  128 MiB"), (2.0, "Core: 47 devices")]


def test_an_unfinished_line_is_in_the_snapshot_a_prompt_has_no_newline():
    ts = con.ConsoleTimestamper()
    ts.feed(b"\r\nqemu-arm login: ", 5.5)
    assert ts.lines == [con.TimedLine(5.5, "")]
    assert ts.snapshot()[-1] == con.TimedLine(5.5, "qemu-arm login: ")


def test_escapes_and_the_autoboot_countdown_are_cleaned():
    assert con.clean(b"root@qemu-arm:~# \x1b[6n") == "root@qemu-arm:~# "
    assert con.clean(b"Hit any key to stop autoboot:  2\x08\x08\x08 1\x08\x08\x08 0 \r") \
        .startswith("Hit any key to stop autoboot")
    assert con.clean(b"\x1b[1;32mOK\x1b[0m\r") == "OK"


def test_captured_chunks_give_the_lines_and_times_of_the_saved_boot_log():
    chunks = con.read_raw_chunks(DATA / "qemu-arm-armmp-ramdisk.raw.jsonl")
    ts = con.ConsoleTimestamper()
    for t, data in chunks:
        ts.feed(data, t)
    fed = [ln for ln in ts.snapshot() if ln.text]
    saved = [ln for ln in con.parse_log((DATA / "qemu-arm-armmp-ramdisk.boot.log").read_text())
             if ln.kind == con.RX and ln.text]
    # the log was saved at the shell prompt; the capture went on (the test's commands)
    n = len(saved)
    assert [ln.text for ln in fed[:n - 1]] == [ln.text for ln in saved[:-1]]
    assert fed[n - 1].text.startswith(saved[-1].text)
    # the same intervals between lines (the saved log is relative to the load command)
    offset = fed[0].t - saved[0].t
    for a, b in zip(fed[:n], saved):
        assert a.t - offset == pytest.approx(b.t, abs=2e-4)


@pytest.mark.parametrize("log, expected", [
    ("qemu-arm-armmp-ramdisk.boot.log", "6.1.0-50-armmp"),
    ("qemu-arm-armmp-nfs.boot.log", "6.1.0-50-armmp"),
    ("qemu-arm-rt-armmp-ramdisk.boot.log", "6.1.0-50-rt-armmp"),
])
def test_milestones_of_captured_boots_come_in_boot_order(log, expected):
    lines = con.parse_log((DATA / log).read_text())
    ms = con.find_milestones(lines, PATTERNS)
    assert list(ms) == ["starting_kernel", "linux_version", "freeing_init", "login", "shell"]
    assert 0 < ms["starting_kernel"] < ms["linux_version"] < ms["freeing_init"] \
        < ms["login"] <= ms["shell"]
    banner = next(ln.text for ln in lines if "Linux version" in ln.text)
    assert expected in banner


def test_milestone_time_is_the_line_start_relative_to_the_load_command():
    lines = [con.TimedLine(10.0, "power on", con.MARK),
             con.TimedLine(10.3, "=> tftpboot"),
             con.TimedLine(10.5, "load", con.MARK),
             con.TimedLine(11.2, "Starting kernel ..."),
             con.TimedLine(13.25, "[    0.000000] Linux version 2.6.11.7 (wd@denx)"),
             con.TimedLine(14.0, "Freeing unused kernel memory: 88k init")]
    ms = con.find_milestones(lines, PATTERNS)
    assert ms == {"starting_kernel": 0.7, "linux_version": 2.75, "freeing_init": 3.5}
    assert con.last_milestone(ms, PATTERNS) == "freeing_init"


def test_a_stray_match_does_not_erase_the_other_milestones():
    """U-Boot 1.1 prints no 'Starting kernel'; ELDK's init prints 'Starting kernel
    logger' 36 s in (the independent TQM860L console of #12). That line is no hand-over:
    starting_kernel is absent, Linux version and the rest are found."""
    lines = [con.TimedLine(0.0, "load", con.MARK),
             con.TimedLine(0.9, "   Uncompressing Kernel Image ... OK"),
             con.TimedLine(1.94, "Linux version 2.4.25 (wd@denx.de) (gcc version 3.3.3)"),
             con.TimedLine(3.7, "Freeing unused kernel memory: 52k init"),
             con.TimedLine(36.0, "Starting kernel logger:  [  OK  ]"),
             con.TimedLine(49.7, "tqm860l login: "),
             con.TimedLine(50.2, "# ")]
    patterns = con.milestone_patterns("login: ", "^# $")
    ms = con.find_milestones(lines, patterns)
    assert ms == {"linux_version": 1.94, "freeing_init": 3.7, "login": 49.7, "shell": 50.2}
    # the board's own hand-over message (the facts' uboot.kernel_message) finds all five
    own = (("starting_kernel", "Uncompressing Kernel Image"),) + patterns[1:]
    assert con.find_milestones(lines, own)["starting_kernel"] == 0.9


def test_no_load_mark_means_no_milestones():
    assert con.find_milestones([con.TimedLine(1.0, "Linux version 6.1")], PATTERNS) == {}


def test_boot_log_round_trip():
    lines = [con.TimedLine(99.0, "power on", con.MARK), con.TimedLine(100.0, "load", con.MARK),
             con.TimedLine(100.0, "tftpboot 0x1 f", con.TX),
             con.TimedLine(101.25, "Linux version 6.1")]
    text = con.format_log(lines, header=["board x"])
    assert text.startswith("# board x\n")
    back = con.parse_log(text)
    assert [(round(ln.t, 4), ln.text, ln.kind) for ln in back] == [
        (-1.0, "power on", con.MARK), (0.0, "load", con.MARK),
        (0.0, "tftpboot 0x1 f", con.TX), (1.25, "Linux version 6.1", con.RX)]


def test_freeing_init_memory_of_each_era():
    for line in ("Freeing unused kernel memory: 52k init",
                 "[    2.28] Freeing unused kernel image (initmem) memory: 2048K",
                 "Freeing init memory: 64K"):
        lines = [con.TimedLine(0.0, "load", con.MARK), con.TimedLine(1.0, line)]
        assert "freeing_init" in con.find_milestones(lines, PATTERNS), line
    lines = [con.TimedLine(0.0, "load", con.MARK), con.TimedLine(1.0, "Freeing initrd memory: 10020K")]
    assert "freeing_init" not in con.find_milestones(lines, PATTERNS)


def test_guest_milestones_come_from_the_kernels_own_log():
    """dmesg as the board prints it (captured boot), and the stamp of the root file
    system's getty wrapper; Linux 2.4's log has no printk times: no guest milestones."""
    log = [ln.text for ln in con.parse_log((DATA / "qemu-arm-armmp-ramdisk.boot.log").read_text())]
    dmesg = [t for t in log if t.startswith("[")] + ["[    3.104211] boardlab: login prompt on ttyAMA0"]
    assert con.guest_milestones(dmesg) == {"freeing_init": 2.502582, "login": 3.104211}
    assert con.guest_milestones(["<5>[   20.466800] Freeing unused kernel memory: 1024K"]) == \
        {"freeing_init": 20.4668}
    assert con.guest_milestones(["Linux version 2.4.25 (wd@denx.de)", "Freeing unused kernel memory: 56k init"]) == {}
