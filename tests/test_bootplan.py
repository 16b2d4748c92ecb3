"""The boot plan: what a boot stages, sends and waits for, from the facts alone (no board)."""
import re
from pathlib import Path

import pytest

from boardlab.boot import bootplan
from boardlab.facts.board import load_board


@pytest.fixture(scope="module")
def qemu_arm():
    return load_board("qemu-arm")


def test_a_ramdisk_boot_of_the_default_kernel(qemu_arm):
    plan = bootplan.plan_boot(qemu_arm)
    images = Path(qemu_arm.images.dir)
    assert plan.kernel.name == "armmp" and plan.root == "ramdisk"
    assert plan.stage == ((images / "armmp.uImage", "qemu-arm/armmp.uImage"),
                          (images / "rootfs.uImage", "qemu-arm/rootfs.uImage"))
    assert plan.setup_commands[:4] == ("setenv -f ethaddr 52:54:00:10:00:0a",   # its own, not U-Boot's 52:52:...
                                       "setenv ipaddr 192.168.10.10",
                                       "setenv serverip 192.168.10.1",
                                       "setenv netmask 255.255.255.0")
    assert plan.setup_commands[4].startswith("setenv bootargs console=ttyAMA0,115200 rdinit=/init")
    assert [ld.command for ld in plan.loads] == [
        "tftpboot ${kernel_addr_r} qemu-arm/armmp.uImage",
        "tftpboot ${ramdisk_addr_r} qemu-arm/rootfs.uImage"]
    assert plan.boot_command == "bootm ${kernel_addr_r} ${ramdisk_addr_r} ${fdtcontroladdr}"
    assert [name for name, _ in plan.milestones] == [
        "starting_kernel", "linux_version", "freeing_init", "login", "shell"]


def test_the_phase_log_is_on_the_command_line_only_when_asked(qemu_arm):
    """initcall_debug moves the milestones: never on a boot that measures them."""
    from boardlab.measure.phases import BOOT_ARGS
    plain = bootplan.plan_boot(qemu_arm).setup_commands[-1]
    logged = bootplan.plan_boot(qemu_arm, phase_log=True)
    assert "initcall_debug" not in plain and logged.phase_log
    assert logged.setup_commands[-1] == f"{plain} {BOOT_ARGS}"
    both = bootplan.plan_boot(qemu_arm, phase_log=True, kernel_args="boardlab_delay_us=2000")
    assert both.setup_commands[-1] == f"{plain} {BOOT_ARGS} boardlab_delay_us=2000"
    with pytest.raises(bootplan.PlanError, match="may not hold ';'"):
        bootplan.plan_boot(qemu_arm, kernel_args="quiet; reset")


def test_an_nfs_root_with_a_loader_ramdisk(qemu_arm):
    plan = bootplan.plan_boot(qemu_arm, "rt-armmp", "nfs")
    assert plan.kernel.nfs_loader and plan.ramdisk == "qemu-arm/rootfs.uImage"
    assert "root=/dev/nfs" in plan.setup_commands[-1]


def test_a_kernel_on_the_tftp_server_is_not_staged(qemu_arm):
    plan = bootplan.plan_boot(qemu_arm, "tftp:qemu-arm/other.uImage", ramdisk="tftp:qemu-arm/rd.img")
    assert plan.stage == ()
    assert plan.kernel.local is None and plan.kernel.name == "qemu-arm/other.uImage"
    assert plan.loads[1].file == "qemu-arm/rd.img"


@pytest.mark.parametrize("kernel, ramdisk, says", [
    ("tftp:qemu-arm/my kernel", None, "may not hold whitespace"),
    ("tftp:qemu-arm/k;reset", None, "may not hold whitespace, ';'"),
    ("tftp:qemu-arm/${bootcmd}", None, "may not hold whitespace, ';', '$'"),
    ("tftp:qemu-arm/../tqm860l/uImage-2.4.25", None, "'..' or an absolute path"),
    ("tftp:/etc/passwd", None, "'..' or an absolute path"),
    ("tftp:tqm860l/uImage-2.4.25", None, "outside the board's TFTP directory: name it qemu-arm/<file>"),
    ("tftp:", None, "the kernel name is empty"),
    ("", None, "the kernel name is empty"),
    (None, "tftp:qemu-arm/rd;reset", "ramdisk 'qemu-arm/rd;reset'"),
    (None, "tftp:../rd", "'..' or an absolute path"),
    (None, "/tmp/my ramdisk.img", "ramdisk 'my ramdisk.img'"),
])
def test_names_that_reach_uboot_and_tftp_are_refused_before_power_on(qemu_arm, kernel, ramdisk, says):
    with pytest.raises(bootplan.PlanError, match=re.escape(says)):
        bootplan.plan_boot(qemu_arm, kernel, "ramdisk", ramdisk)


def test_a_uimage_whose_file_name_uboot_cannot_take_is_refused(qemu_arm, tmp_path):
    own = tmp_path / "my;uImage"
    own.write_bytes(b"x")
    with pytest.raises(bootplan.PlanError, match="my;uImage"):
        bootplan.plan_boot(qemu_arm, str(own))


@pytest.mark.parametrize("kernel", ["../../etc", "/etc", "a/../../b", ""])
def test_a_baseline_path_stays_under_kernels(kernel):
    from boardlab.measure import baselines as bl
    with pytest.raises(bl.BaselineError, match="must stay under"):
        bl.baseline_path(kernel, "qemu-arm")


def test_a_uimage_file_is_staged_under_the_providers_prefix(qemu_arm, tmp_path):
    own = tmp_path / "my.uImage"
    own.write_bytes(b"x")
    plan = bootplan.plan_boot(qemu_arm, str(own), tftp_prefix="elsewhere/")
    assert plan.kernel.name == "my.uImage" and plan.stage[0] == (own, "elsewhere/my.uImage")


def test_an_old_uboot_board_boots_without_ramdisk_in_its_own_words():
    """TQM860L, U-Boot 1.1: NFS root straight from the kernel, bootm of the kernel only,
    Linux 2.4's console name, and U-Boot's own hand-over message as the first milestone."""
    tqm = load_board("tqm860l")
    plan = bootplan.plan_boot(tqm, "2.4.25")
    assert plan.root == "nfs" and plan.ramdisk is None
    assert [ld.command for ld in plan.loads] == ["tftpboot 200000 tqm860l/uImage-2.4.25"]
    assert plan.boot_command == "bootm 200000"
    assert "console=ttyS0,115200" in plan.setup_commands[-1]
    assert dict(plan.milestones)["starting_kernel"] == r"Uncompressing\ Kernel\ Image\ \.\.\.\ OK"
    assert dict(plan.milestones)["shell"] == tqm.shell.prompt


@pytest.mark.parametrize("kernel, root, message", [
    ("4.4", None, r"kernel '4.4': neither a kernel of board qemu-arm \(armmp, rt-armmp, virt-nfs\)"),
    (None, "usb", r"board qemu-arm has no root mode 'usb' \(known: ramdisk, nfs\)"),
])
def test_a_selection_the_board_cannot_boot_is_named(qemu_arm, kernel, root, message, tmp_path, monkeypatch):
    from boardlab.kernelbuilds import registry
    monkeypatch.setattr(registry, "REGISTRY_DIR", tmp_path)   # none built here: the facts' kernels only
    with pytest.raises(bootplan.PlanError, match=message):
        bootplan.plan_boot(qemu_arm, kernel, root)


@pytest.mark.parametrize("output, category", [
    ("TFTP error: 'File not found' (1)\nStarting again", "tftp"),
    ("ARP Retry count exceeded; starting again", "network"),
    ("   Verifying Checksum ... Bad Data CRC", "image"),
])
def test_uboot_faults_are_named_by_category(output, category):
    faults = [f for f in bootplan.LOAD_FAULTS if f.category == category]
    meaning = bootplan.uboot_fault(output, faults, "qemu-arm/k", "192.168.10.1")
    assert meaning and "[U-Boot: " in meaning
    assert bootplan.uboot_fault("Bytes transferred = 1234", bootplan.LOAD_FAULTS, "k", "s") is None


def test_the_boot_watches_image_faults_only():
    assert {f.category for f in bootplan.BootPlan.__dataclass_fields__["boot_faults"].default} \
        == {"image"}


def test_a_file_nothing_has_built_yet_is_named_with_what_makes_it(qemu_arm, tmp_path):
    """Before the board is powered on: each missing file of a plan says what makes it (the
    images step, the build-size suite) or where it belongs."""
    import dataclasses
    board = dataclasses.replace(qemu_arm, images=dataclasses.replace(qemu_arm.images, dir=str(tmp_path)))
    for kernel, says in (("armmp", "`boardlab vlab build --board qemu-arm` makes it"),
                         ("virt-nfs", "the build-size suite builds it")):
        plan = bootplan.plan_boot(board, kernel)
        with pytest.raises(bootplan.PlanError, match=re.escape(f"{plan.stage[0][0]} is not there yet: {says}")):
            bootplan.require_files(board, plan.stage)
    plan = bootplan.plan_boot(board, "armmp")
    plan.stage[0][0].write_bytes(b"x")    # the kernel there, the ramdisk not
    with pytest.raises(bootplan.PlanError, match=r"rootfs.uImage is not there yet: `boardlab vlab build"):
        bootplan.require_files(board, plan.stage)
    own = bootplan.plan_boot(board, "armmp", ramdisk=str(tmp_path / "elsewhere" / "rootfs.uImage"))
    with pytest.raises(bootplan.PlanError, match=r"elsewhere/rootfs.uImage is not there yet: no such file"):
        bootplan.require_files(board, own.stage)
    tqm = load_board("tqm860l")
    tqm = dataclasses.replace(tqm, images=dataclasses.replace(tqm.images, dir=str(tmp_path)))
    with pytest.raises(bootplan.PlanError, match=re.escape(f"belongs in the board's images ({tmp_path})")):
        bootplan.require_files(tqm, bootplan.plan_boot(tqm, "2.4.25").stage)


def test_each_virtual_boards_uboot_sends_as_the_board_and_no_two_alike():
    """Debian's U-Boot gives every virtual board 52:52:52:52:52:52 (a modern virtio-net
    device's first address byte, six times): two boards in U-Boot at once then took each
    other's TFTP frames at the lab's bridge. Each virtual board's U-Boot is given its own
    address, the one its QEMU device has, on both paths (labgrid's plan, LAVA's device
    dictionary); a real board's U-Boot keeps its own."""
    from boardlab.facts.board import BOARDS_DIR, load_board
    from boardlab.lava.devices import device_dictionary
    macs = {}
    for board in (load_board(p.stem) for p in sorted(BOARDS_DIR.glob("*.yaml"))):
        first = bootplan.ethaddr_commands(board)
        if board.qemu is None:
            assert first == ()
            continue
        assert first == (f"setenv -f ethaddr {board.network.mac}",)
        assert first[0] in device_dictionary(board)
        macs.setdefault(board.network.mac.lower(), []).append(board.name)
    assert len(macs) >= 3 and all(len(names) == 1 for names in macs.values()), macs
