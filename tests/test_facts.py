"""Board facts: the one source of a board's facts, validated with clear errors."""
import json

import pytest
import yaml

from boardlab import envgen
from boardlab.facts.board import Console, FactsError, bootargs, load_board
from boardlab.facts.labhosts import load_lab_host
from paths import ROOT


def write_variant(tmp_path, name="qemu-arm", **changes):
    data = yaml.safe_load((ROOT / "boards" / "qemu-arm.yaml").read_text())
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node[p]
        if value is None:
            del node[last]
        else:
            node[last] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_virtual_board_loads():
    b = load_board("qemu-arm")
    assert b.console == Console(device="ttyAMA0", baud=115200, ser2net_port=5101)
    assert b.images.default_kernel == "armmp"


def test_bootargs_are_filled_from_the_facts():
    b = load_board("qemu-arm")
    assert bootargs(b, "ramdisk").startswith("console=ttyAMA0,115200 ")
    nfs = bootargs(b, "nfs")
    assert "nfsroot=192.168.10.1:/srv/boardlab/nfs/qemu-arm,vers=3,tcp" in nfs
    assert "ip=192.168.10.10::192.168.10.1:255.255.255.0:qemu-arm:eth0:off" in nfs


def test_the_virtual_board_measures_on_the_deterministic_clock():
    from boardlab.vlab.power import qemu_command
    lab = load_lab_host("vlab")
    b = load_board("qemu-arm")
    assert b.qemu.clock == "deterministic" and "norandmaps" in bootargs(b, "ramdisk")
    cmd = qemu_command(b, lab)
    assert cmd[cmd.index("-icount") + 1] == f"shift={b.qemu.icount_shift},sleep=off"
    assert "-icount" not in qemu_command(b, lab, "realtime")   # the switch's realtime setting


def test_the_noisy_board_is_qemu_arm_with_the_deterministic_clock_off():
    """boards/qemu-arm-noisy.yaml, the real board's stand-in: qemu-arm's machine, U-Boot,
    kernels and bootargs on the same lab host, wired apart (its own outlet, console port,
    address, tap, TFTP directory, NFS export and images), QEMU on the host's real time."""
    from boardlab.judge.decide import deterministic_board, host_bound
    from boardlab.measure.clocks import GUEST_REALTIME, HOST, metric_clock
    from boardlab.vlab.power import qemu_command
    arm, noisy = load_board("qemu-arm"), load_board("qemu-arm-noisy")
    assert noisy.qemu.clock == "realtime" and "-icount" not in qemu_command(noisy, load_lab_host("vlab"))
    assert noisy.lab_host == arm.lab_host == "vlab"
    for part in ("uboot", "mkimage", "root", "timeouts"):
        assert getattr(noisy, part) == getattr(arm, part), part
    assert (noisy.qemu.machine, noisy.qemu.cpu, noisy.qemu.bios) == (arm.qemu.machine, arm.qemu.cpu, arm.qemu.bios)
    assert noisy.images.kernels == arm.images.kernels and noisy.ram_mb == arm.ram_mb
    apart = lambda b: (b.power.index, b.console.ser2net_port, b.network.ip, b.network.mac, b.qemu.tap,  # noqa: E731
                       b.tftp.dir, b.tftp.prefix, b.nfs.export, b.images.dir)
    assert all(x != y for x, y in zip(apart(noisy), apart(arm)))
    assert noisy.shell.prompt.startswith("root@qemu-arm-noisy:")   # its images carry its name
    # its figures say the clock they have, and are the host's
    assert metric_clock("lmbench", "lat_pipe_us", "us", noisy) == GUEST_REALTIME
    assert metric_clock("boot_time", "guest_login", "s", noisy) == GUEST_REALTIME
    assert metric_clock("boot_time", "login", "s", noisy) == HOST
    assert not deterministic_board(noisy) and host_bound(GUEST_REALTIME, noisy, "lmbench.lat_pipe_us")


@pytest.mark.parametrize("changes, message", [
    ({"qemu__clock": "wallclock"}, r"field 'qemu.clock' must be one of deterministic, realtime"),
    ({"qemu__icount_shift": "4"}, r"field 'qemu.icount_shift' must be int"),
    ({"qemu__bios": None}, r"missing field 'qemu.bios'"),
    ({"qemu__acell": "tcg"}, r"unknown field\(s\) qemu.acell"),
])
def test_the_qemu_facts_are_checked(tmp_path, changes, message):
    with pytest.raises(FactsError, match=message):
        load_board(write_variant(tmp_path, **changes))


@pytest.mark.parametrize("changes, message", [
    ({"root__bootargs__ramdisk": "console={console} root={rootdev}"},
     r"field 'root.bootargs.ramdisk' uses \{rootdev\}, which nothing fills"),
    ({"uboot__load_command": "tftpboot {address} {file}"}, r"field 'uboot.load_command' uses \{address\}"),
    ({"uboot__boot_command": "bootm {kernel} - {dtb}"}, r"field 'uboot.boot_command' uses \{dtb\}"),
    ({"console__speed": 9600}, r"unknown field\(s\) console.speed \(known: console.device"),
    ({"images__kernels": {"armmp": {"uimage": 3}}}, r"field 'images.kernels.armmp.uimage' must be str"),
    ({"timeouts__boot_s": True}, r"field 'timeouts.boot_s' must be float, got True"),
    ({"images__kernels": {"armmp": {"uimage": "a", "config": "kernels/no/such.config"}}},
     r"field 'images.kernels.armmp.config': kernels/no/such.config: not in /"),
    ({"images__kernels": {"armmp": {"uimage": "a", "config": "kernels/virt-nfs/qemu-ppc.config",
                                    "debian_package": "linux-image-armmp"}}},
     r"images.kernels.armmp.config': kernels/virt-nfs/qemu-ppc.config: debian_package is given too"),
])
def test_placeholders_and_unknown_fields_are_checked(tmp_path, changes, message):
    with pytest.raises(FactsError, match=message):
        load_board(write_variant(tmp_path, **changes))


def test_the_facts_are_typed_and_frozen():
    import dataclasses
    b = load_board("qemu-arm")
    assert b.timeouts.boot_s == 120.0 and b.images.kernels["armmp"].nfs_loader
    assert b.kernel("armmp").debian_package == "linux-image-armmp"
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.console.baud = 9600


def test_a_missing_field_names_the_file_and_field(tmp_path):
    path = write_variant(tmp_path, console__baud=None)
    with pytest.raises(FactsError, match=r"qemu-arm\.yaml: missing field 'console\.baud'"):
        load_board(path)


def test_a_wrong_type_names_the_field_and_value(tmp_path):
    path = write_variant(tmp_path, console__baud="fast")
    with pytest.raises(FactsError, match=r"field 'console\.baud' must be int, got 'fast'"):
        load_board(path)


def test_an_unknown_uboot_dialect_is_refused(tmp_path):
    with pytest.raises(FactsError, match="uboot.dialect"):
        load_board(write_variant(tmp_path, uboot__dialect="cisco"))


def test_the_default_kernel_must_exist(tmp_path):
    with pytest.raises(FactsError, match="images.default_kernel.*'nope'"):
        load_board(write_variant(tmp_path, images__default_kernel="nope"))


def test_file_name_and_board_name_agree(tmp_path):
    with pytest.raises(FactsError, match="must agree"):
        load_board(write_variant(tmp_path, name="other"))


def test_not_yaml_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(FactsError, match=r"x\.yaml: not valid YAML"):
        load_board(bad)


def test_the_lab_hosts_load_with_the_boards_that_name_them():
    lab = load_lab_host("vlab")
    assert sorted(lab.boards) == ["qemu-arm", "qemu-arm-noisy"] and lab.management_ip == "10.231.0.11"
    assert load_lab_host("vlab2").boards == ("qemu-ppc",)
    assert load_board("qemu-ppc").power.url == "http://10.231.0.12:8101/outlet/2/value"   # {lab_host}


def test_generated_labgrid_envs_are_up_to_date():
    assert envgen.write_all(check=True) == [], "run `boardlab gen` and commit lab/"


def test_the_env_carries_the_facts_without_copies():
    env = envgen.labgrid_env(load_board("qemu-arm"))
    t = env["targets"]["main"]
    assert t["resources"]["NetworkSerialPort"] == {
        "host": "10.231.0.11", "port": 5101, "speed": 115200, "protocol": "rfc2217"}
    assert t["resources"]["NetworkPowerPort"]["model"] == "rest"
    assert t["drivers"]["BoardStrategy"] == {"facts": "../boards/qemu-arm.yaml"}


def test_the_env_loads_in_labgrid_and_its_drivers_bind():
    from labgrid import Environment
    env = Environment(str(ROOT / "lab" / "qemu-arm.yaml"))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    assert type(strategy).__name__ == "BoardStrategy"
    assert strategy.board.name == "qemu-arm"
    assert type(strategy.console).__name__ == "TimestampingSerialDriver"
    env.cleanup()


ALL_ENVS = sorted((ROOT / "lab").glob("*.yaml"))


@pytest.mark.parametrize("envfile", ALL_ENVS, ids=lambda p: p.stem)
def test_every_labgrid_env_loads_and_binds(envfile):
    from labgrid import Environment
    env = Environment(str(envfile))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy", activate=False)
    board = strategy.board
    assert board.name == envfile.stem
    port = target.get_resource("NetworkSerialPort")
    assert (port.port, port.speed) == (board.console.ser2net_port, board.console.baud)
    uboot = strategy.uboot
    assert type(uboot).__name__ == "UBootDriver"
    assert uboot.prompt == board.uboot.prompt
    env.cleanup()


@pytest.mark.parametrize("board", ["tqm860l", "sandpoint", "smdk24a0"])
def test_real_boards_carry_the_studys_facts(board):
    ref = yaml.safe_load((ROOT.parent / "shared/reference/linux-2.4-vs-2.6.yaml").read_text())
    b = load_board(board)
    assert b.ram_mb == ref["boards"][board]["ram_mb"]
    assert b.cpu_mhz == ref["boards"][board]["cpu_mhz"]
    assert ref["boards"][board]["cpu"].split()[0] in b.cpu


def test_a_boards_own_l2_segment_is_a_fact_required_on_a_real_lab_host():
    """A real board's own VLAN or isolated switch port; a virtual board's tap is its own
    port of its host's bridge, so it needs none."""
    real = [load_board(b) for b in ("tqm860l", "sandpoint", "smdk24a0")]
    assert all(b.network.isolation and b.network.isolation.vlan for b in real)
    assert len({b.network.isolation.vlan for b in real}) == len(real)
    assert load_board("qemu-arm").network.isolation is None


def test_a_kernel_can_name_its_console_differently():
    tqm = load_board("tqm860l")
    assert bootargs(tqm, "nfs", "2.4.25").startswith("console=ttyS0,115200 root=/dev/nfs rw ")
    assert bootargs(tqm, "nfs", "2.6.11.7").startswith("console=ttyCPM0,115200 ")
    assert "ip=192.168.20.11:192.168.20.1::255.255.255.0:tqm860l:eth0:off" in bootargs(tqm, "nfs")


def test_adding_a_board_is_one_facts_file_and_one_command(project_copy):
    """The guide's steps on a copy of the project: a facts file, `gen`."""
    from boardlab import lava
    tmp_path = project_copy
    new = yaml.safe_load((tmp_path / "boards/tqm860l.yaml").read_text())
    new.update(name="tqm866m", cpu="MPC866", ram_mb=32)
    new["console"]["ser2net_port"] = 5009
    new["power"]["index"] = 8
    new["network"]["ip"] = "192.168.20.14"
    new["network"]["isolation"] = {"vlan": 104}
    (tmp_path / "boards/tqm866m.yaml").write_text(yaml.safe_dump(new))

    written = envgen.write_all()

    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert {"lab/tqm866m.yaml", "lab/remote/tqm866m.yaml", "places/labhost1/exporter.yaml",
            "places/labhost1/places.yaml", "places/labhost1/ser2net.yaml",
            "places/labhost1/exports", "jobs/device-types/boardlab-tqm866m.jinja2",
            "jobs/devices/tqm866m.jinja2"} <= names
    assert "tcp,127.0.0.1,5009" in (tmp_path / "places/labhost1/ser2net.yaml").read_text()
    assert "board: tqm866m" in (tmp_path / "places/labhost1/places.yaml").read_text()
    assert "telnet 127.0.0.1 5009" in (tmp_path / "jobs/devices/tqm866m.jinja2").read_text()
    assert "boardlab lab power tqm866m on" in lava.render_device(load_board("tqm866m"))   # the guard
    from boardlab.facts import pdu
    from boardlab.facts.labhosts import lab_host_of
    tqm866m = load_board("tqm866m")
    assert "hostname=pdu1.lab&port=8" in pdu.lava_power_commands(tqm866m, lab_host_of(tqm866m))["power_on_command"]
    from labgrid import Environment
    env = Environment(str(tmp_path / "lab/tqm866m.yaml"))
    strategy = env.get_target("main").get_driver("Strategy", activate=False)
    assert strategy.board.ram_mb == 32
    env.cleanup()


def test_a_real_lab_host_offers_nothing_unauthenticated_to_the_lan():
    """Consoles (root shells) and pdudaemon on 127.0.0.1, reached through the isolated
    exporter's SSH proxy; each NFS root (rw, no_root_squash) to its own board only."""
    files = envgen.lab_host_files(load_lab_host("labhost1"))
    d = ROOT / "places" / "labhost1"
    ser2net = files[d / "ser2net.yaml"]
    assert ser2net.count("tcp,127.0.0.1,") == 3 and "0.0.0.0" not in ser2net
    assert json.loads(files[d / "pdudaemon.conf"])["daemon"]["hostname"] == "127.0.0.1"
    assert "labgrid-exporter --isolated" in files[d / "exporter.yaml"]
    exports = [ln.split() for ln in files[d / "exports"].splitlines() if not ln.startswith("#")]
    by_dir = {e[0]: [c.split("(")[0] for c in e[1:]] for e in exports}
    for name in ("tqm860l", "sandpoint", "smdk24a0"):
        assert by_dir[load_board(name).nfs.export] == [load_board(name).network.ip]
    assert "/" not in " ".join(sum(by_dir.values(), []))    # no network ranges


@pytest.mark.parametrize("host", sorted(p.parent.name for p in (ROOT / "places").glob("*/lab-host.yaml")))
def test_every_lab_host_file_loads(host):
    from labgrid.remote.config import ResourceConfig
    d = ROOT / "places" / host
    exported = ResourceConfig(str(d / "exporter.yaml")).data   # Jinja2 + YAML, as the exporter reads it
    places = yaml.safe_load((d / "places.yaml").read_text())
    assert set(exported) == set(places)
    for name, place in places.items():
        group = place["matches"][0].split("/")[1]
        assert group in exported and "NetworkSerialPort" in exported[group]
        remote = yaml.safe_load((ROOT / "lab/remote" / f"{name}.yaml").read_text())
        assert remote["targets"]["main"]["resources"]["RemotePlace"]["name"] == name
    if (d / "ser2net.yaml").exists():   # ser2net 4 YAML: one 'connection' per board
        text = (d / "ser2net.yaml").read_text()
        assert yaml.safe_load(text)["connection"]["accepter"].startswith("telnet(rfc2217),tcp,")
        assert text.count("connection: &") == len(places)


def test_every_error_boardlab_explains_has_one_base():
    """One except clause catches them all (boardlab.errors.BoardlabError)."""
    import importlib
    import pkgutil

    import boardlab
    from boardlab.errors import BoardlabError
    errors = []
    for mod in pkgutil.walk_packages(boardlab.__path__, "boardlab."):
        m = importlib.import_module(mod.name)
        errors += [c for c in vars(m).values() if isinstance(c, type) and issubclass(c, Exception)
                   and c.__module__ == mod.name and c is not BoardlabError]
    assert len(errors) >= 12
    assert all(issubclass(c, BoardlabError) for c in errors), [c for c in errors
                                                               if not issubclass(c, BoardlabError)]


@pytest.fixture
def project_copy(tmp_path, monkeypatch):
    """boards/, lab/, places/ and jobs/ copied, and `boardlab gen` pointed at the copy."""
    import shutil

    from boardlab import lava
    from boardlab.facts import board as facts
    from boardlab.lava import devices, health
    for d in ("boards", "lab", "places", "jobs"):
        shutil.copytree(ROOT / d, tmp_path / d)
    for mod in (facts, envgen, lava):
        monkeypatch.setattr(mod, "BOARDS_DIR", tmp_path / "boards", raising=False)
        monkeypatch.setattr(mod, "PLACES_DIR", tmp_path / "places", raising=False)
    monkeypatch.setattr(envgen, "LAB_DIR", tmp_path / "lab")
    monkeypatch.setattr(devices, "BOARDS_DIR", tmp_path / "boards")
    monkeypatch.setattr(devices, "DEVICE_TYPES_DIR", tmp_path / "jobs/device-types")
    monkeypatch.setattr(devices, "DEVICES_DIR", tmp_path / "jobs/devices")
    monkeypatch.setattr(health, "HEALTH_CHECKS_DIR", tmp_path / "jobs/health-checks")
    # the docs pages `gen` also writes (from docs/data and kernels/) are not the copy's: left
    # out, never written into the checkout (a stale one there would be rewritten by a test)
    every = envgen.generated_files
    monkeypatch.setattr(envgen, "generated_files",
                        lambda: {p: text for p, text in every().items() if tmp_path in p.parents})
    return tmp_path


def _edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _snapshot(root):
    return {p: p.read_bytes() for d in ("lab", "places", "jobs") for p in (root / d).rglob("*")
            if p.is_file()}


def _set(dotted, value):
    def change(data):
        *parents, last = dotted.split(".")
        node = data
        for p in parents:
            node = node[p]
        node[last] = value
    return change


BAD_FACTS = [
    ("tqm860l", _set("network.ip", "*"), "field 'network.ip' must be one IPv4 address"),
    ("tqm860l", _set("network.ip", "192.168.20.0/24"), "field 'network.ip' must be one IPv4 address"),
    ("tqm860l", _set("network.ip", "tqm860l.lab"), "field 'network.ip' must be one IPv4 address"),
    ("tqm860l", _set("network.server_ip", "labhost1"), "field 'network.server_ip' must be one IPv4"),
    ("tqm860l", _set("console.ser2net_port", 70000), "field 'console.ser2net_port' must be 1..65535"),
    ("tqm860l", _set("console.ser2net_port", 0), "field 'console.ser2net_port' must be 1..65535"),
    ("tqm860l", _set("console.baud", 0), "field 'console.baud' must be a positive rate"),
    ("tqm860l", _set("console.baud", -9600), "field 'console.baud' must be a positive rate"),
    ("tqm860l", _set("console.serial_adapter", None), "field 'console.serial_adapter' is needed"),
    ("tqm860l", _set("nfs.export", "/"), "field 'nfs.export' must be an absolute directory below /"),
    ("tqm860l", _set("nfs.export", "/srv/nfs/tqm 860l"), "field 'nfs.export' must be an absolute"),
    ("tqm860l", _set("nfs.export", "/srv/../etc"), "field 'nfs.export' must be an absolute"),
    ("sandpoint", _set("console.ser2net_port", 5001), "boards sandpoint and tqm860l of lab host labhost1 have the same ser2net port"),
    ("sandpoint", _set("network.ip", "192.168.20.11"), "have the same IP address"),
    ("sandpoint", _set("power.index", 1), "boards sandpoint and tqm860l of lab host labhost1 have the same power outlet"),
    ("sandpoint", _set("lab_host", "vlab"), "field 'lab_host' is 'vlab', a virtual lab host, but the board has no 'qemu'"),
    ("sandpoint", _set("lab_host", "nosuchhost"), "field 'lab_host' is 'nosuchhost', but no "),
    ("qemu-arm", _set("power.host", "http://admin:secret@127.0.0.1:8101/outlet/{index}/value"),
     "field 'power.host' holds credentials"),
    ("qemu-arm", _set("power.host", "http://127.0.0.1:8101/outlet/{index}/value; reboot"),
     "field 'power.host' must be an http(s) URL"),
    ("tqm860l", _set("power.host", "pdu1.lab$(reboot)"), "field 'power.host' must be a host name"),
    ("tqm860l", _set("network.isolation", None), "field 'network.isolation' is needed: lab host labhost1 is a real one"),
    ("tqm860l", _set("network.isolation", {"vlan": 5, "switch_port": "sw1/3"}), "field 'network.isolation' needs one of vlan"),
    ("tqm860l", _set("network.isolation", {}), "field 'network.isolation' needs one of vlan"),
    ("tqm860l", _set("network.isolation.vlan", 4095), "field 'network.isolation.vlan' must be 2..4094"),
    ("sandpoint", _set("network.isolation.vlan", 101), "boards sandpoint and tqm860l of lab host labhost1 have the same VLAN"),
]


@pytest.mark.parametrize("board, change, message", BAD_FACTS, ids=[m[2][:40] + f"-{i}" for i, m in enumerate(BAD_FACTS)])
def test_bad_board_facts_do_not_pass_gen(project_copy, capsys, board, change, message):
    """Each: exit 2, one line naming file and field, no file written."""
    from boardlab.cli import main
    path = project_copy / "boards" / f"{board}.yaml"
    if "ser2net port" in message:
        tqm = yaml.safe_load((project_copy / "boards/tqm860l.yaml").read_text())
        change = _set("console.ser2net_port", tqm["console"]["ser2net_port"])
    _edit(path, change)
    before = _snapshot(project_copy)
    assert main(["gen"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    assert _snapshot(project_copy) == before


def test_a_lab_host_lists_no_boards_its_boards_name_it(project_copy, capsys):
    """Moving a board is one line of its own facts: a list in the lab host's file could
    disagree with them, so there is none."""
    from boardlab.cli import main
    host = project_copy / "places/labhost1/lab-host.yaml"
    host.write_text(host.read_text() + "boards: [tqm860l]\n")
    assert main(["gen"]) == 2
    assert f"{host}: field 'boards': a lab host's boards are those whose facts name it" in capsys.readouterr().err


def test_moving_a_board_to_another_lab_host_is_one_line(project_copy):
    board = project_copy / "boards/qemu-ppc.yaml"
    board.write_text(board.read_text().replace("lab_host: vlab2 ", "lab_host: vlab  "))
    written = {p.relative_to(project_copy).as_posix() for p in envgen.write_all()}
    assert {"lab/qemu-ppc.yaml", "places/vlab/exporter.yaml", "places/vlab2/exporter.yaml",
            "places/vlab/places.yaml", "jobs/devices/qemu-ppc.jinja2"} <= written
    assert "host: 10.231.0.11" in (project_copy / "lab/qemu-ppc.yaml").read_text()
    assert "vlab/qemu-ppc/*" in (project_copy / "places/vlab/places.yaml").read_text()


@pytest.mark.parametrize("content, message", [
    (b"name: \xff\xfe tqm\n", "not UTF-8 text"),
    (None, "a directory, not a facts file"),
])
def test_an_unreadable_facts_file_is_a_message(tmp_path, content, message):
    path = tmp_path / "tqm860l.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(FactsError, match=message):
        load_board(path)


def test_the_virtual_labs_tftpd_retransmits_in_real_time():
    """A board on the deterministic clock counts U-Boot's TFTP timeout in guest time (7 x
    real time here): tftpd must not take the board's 5 s as its retransmit, or one lost
    data packet costs U-Boot ~5 of its 10 retries (docs/powerpc.md). A real lab host's
    boards run on real time: tftpd-hpa's own behaviour stays."""
    from boardlab.facts.hostconfigs import tftpd_retransmit_args
    from boardlab.vlab.host import VirtualLabHost
    vlab = load_lab_host("vlab")
    assert vlab.tftp_retransmit_ms == 100
    tftpd = next(cmd for name, cmd, _, _ in VirtualLabHost("vlab").services() if name == "tftpd")
    assert tftpd[-5:-1] == ["--refuse", "timeout", "--retransmit", "100000"]
    assert tftpd_retransmit_args(load_lab_host("labhost1")) == []


def test_the_labs_tftpd_resends_a_lost_block_fast_and_keeps_on(tmp_path):
    """What docs/powerpc.md says tftpd does with the lab's arguments, measured on this
    host's tftpd-hpa (on 127.0.0.1, a port of its own): to a client that never
    acknowledges, block 1 again after 0.1, 0.3, 0.7 and 1.5 s of real time (doubling: it
    goes on to 3.1 s and gives up at 6.3), well inside U-Boot's first 5 s timeout."""
    import getpass
    import socket
    import struct
    import subprocess
    import time
    from boardlab.facts.hostconfigs import tftpd_retransmit_args
    (tmp_path / "f.bin").write_bytes(b"x" * 4096)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    srv = subprocess.Popen(["/usr/sbin/in.tftpd", "--foreground", "--listen", "--address", f"127.0.0.1:{port}",
                            "--secure", "--user", getpass.getuser(),   # (it reads tmp_path as its user)
                            *tftpd_retransmit_args(load_lab_host("vlab")), str(tmp_path)])
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(0.02)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:   # until tftpd listens
                s.sendto(b"\x00\x01f.bin\x00octet\x00", ("127.0.0.1", port))
                try:
                    s.recvfrom(2048)
                    break
                except (socket.timeout, ConnectionRefusedError):
                    time.sleep(0.05)
            t0, resends = time.monotonic(), []
            while time.monotonic() - t0 < 2.0:
                try:
                    data, _ = s.recvfrom(2048)
                except socket.timeout:
                    continue
                if struct.unpack("!HH", data[:4]) == (3, 1):
                    resends.append(time.monotonic() - t0)
    finally:
        srv.terminate()
        srv.wait()
    # its timer is real time: late under load, never early (a margin for a busy CI host)
    assert len(resends) == 4 and all(due - 0.02 <= t <= due + 0.3 for t, due in zip(resends, (0.1, 0.3, 0.7, 1.5))), \
        resends


def test_a_boot_on_a_virtual_board_whose_lab_host_is_down_is_refused(monkeypatch):
    """Down, a lab host's addresses route off this machine, where a stranger answers its
    power switch (404): said as the cause instead, before any power action."""
    from dataclasses import replace
    from boardlab.errors import InputError
    from boardlab.facts import labhosts
    from boardlab.vlab import host
    real = labhosts.load_lab_host("vlab")
    monkeypatch.setattr(labhosts, "load_lab_host", lambda name: replace(real, netns="boardlab-no-such-ns"))
    monkeypatch.setattr(host.VirtualLabHost, "prepare", lambda self, board: pytest.fail("images built"))
    with pytest.raises(InputError, match=r"^board qemu-arm: its lab host vlab is down \(boardlab vlab up\)$"):
        host.prepare_if_virtual(load_board("qemu-arm"))


def test_the_default_board_is_a_fact_of_the_lab(tmp_path, monkeypatch, capsys):
    """places/lab.yaml names the board a command uses when none is named (the main job's,
    the tests' own session); a board it does not know is one line and exit 2."""
    from boardlab.cli import main
    from boardlab.facts import labfacts
    assert labfacts.default_board() == "qemu-arm"
    lab = yaml.safe_load((ROOT / "places" / "lab.yaml").read_text())
    (tmp_path / "lab.yaml").write_text(yaml.safe_dump({**lab, "default_board": "qemu-x"}))
    monkeypatch.setattr(labfacts, "PLACES_DIR", tmp_path)
    with pytest.raises(FactsError, match=r"lab.yaml: field 'default_board' names 'qemu-x', but there is no"):
        labfacts.default_board()
    assert main(["compare", "--kernel", "a", "--kernel", "b"]) == 2
    err = capsys.readouterr().err.strip()
    assert "field 'default_board' names 'qemu-x'" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("value, said", [(0, "got 0"), (-2, "got -2"), ("two", "")])
def test_a_lab_hosts_boots_at_once_is_a_whole_number_of_boards(tmp_path, value, said):
    """How many boards LAVA boots at once on a lab host (its worker's job limit)."""
    text = (ROOT / "places" / "vlab" / "lab-host.yaml").read_text().replace("boots_at_once: 1",
                                                                          f"boots_at_once: {value}")
    (tmp_path / "lab-host.yaml").write_text(text)
    with pytest.raises(FactsError) as e:
        load_lab_host(tmp_path / "lab-host.yaml")
    assert "boots_at_once" in str(e.value) and said in str(e.value)
    assert load_lab_host("vlab").boots_at_once == load_lab_host("vlab2").boots_at_once == 1
