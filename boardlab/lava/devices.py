"""Device types and device dictionaries, generated from the board facts (`boardlab gen`).

A device type `jobs/device-types/boardlab-<board>.jinja2` extends LAVA's own
base-uboot.jinja2 with the board's U-Boot (prompt, load addresses, console, mkimage
arch, tftp and bootm commands); the device dictionary `jobs/devices/<board>.jinja2` adds
the instance: connection command to its ser2net port, power commands to the power
switch labgrid drives (same URL, same protocol), its IP."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2

from boardlab.boot.bootplan import ethaddr_commands
from boardlab.facts import pdu
from boardlab.facts.board import BOARDS_DIR, Board, bootargs, load_board
from boardlab.facts.labhosts import lab_host_of
from boardlab.lava.errors import LavaFault
from boardlab.lava.files import DEVICE_TYPES_DIR, DEVICES_DIR, GENERATED, LAVA_DEVICE_TYPES, device_type_name
from boardlab.lava.limits import SPAWN_MAXREAD
from boardlab.measure import console

def _kernel_args(board: Board) -> tuple[str, str, str]:
    """Split the facts' command lines into what base-uboot composes itself (console,
    root, nfsroot) and the rest: (kernel args, extra nfsroot options, ip= args)."""
    extra, ip_args, nfs_opts = [], "", ""
    for root in board.root.bootargs:
        for tok in bootargs(board, root).split():
            key = tok.split("=", 1)[0]
            if key == "ip":
                ip_args = tok
            elif key == "nfsroot":
                opts = [o for o in tok.split(",")[1:] if o not in ("tcp", "hard")]
                nfs_opts = "".join("," + o for o in opts)
            elif key not in ("console", "root", "rw", "ro") and tok not in extra:
                extra.append(tok)
    return " ".join(extra), nfs_opts, ip_args


def _uboot_placeholders(text: str) -> str:
    return text.format(kernel="{KERNEL_ADDR}", ramdisk="{RAMDISK_ADDR}", fdt="{DTB_ADDR}")


def device_type_template(board: Board) -> str:
    ub, con, mk = board.uboot, board.console, board.mkimage
    load = ub.load_command
    kernel_args, nfs_opts, ip_args = _kernel_args(board)
    tftp = [load.format(addr="{KERNEL_ADDR}", file="{KERNEL}"),
            load.format(addr="{RAMDISK_ADDR}", file="{RAMDISK}")]
    sets = {
        "console_device": con.device,
        "baud_rate": con.baud,
        "bootloader_prompt": ub.prompt.strip(),
        "interrupt_prompt": ub.autoboot,
        "uboot_autoboot_prompt": ub.autoboot,
        "uboot_mkimage_arch": mk.arch,
        "bootm_kernel_addr": ub.kernel_addr,
        "bootm_ramdisk_addr": ub.ramdisk_addr or "-",
        "bootm_dtb_addr": ub.fdt_addr or "-",
        "base_kernel_args": kernel_args,
        "extra_nfsroot_args": nfs_opts,
        "base_ip_args": ip_args,
        "kernel_start_message": console.KERNEL_MILESTONES[1][1],
        "spawn_maxread": str(SPAWN_MAXREAD),   # see LAVA_SEARCH_WINDOW
        # U-Boot's last words before the kernel ("Starting kernel" since about 2008)
        "uboot_final_message": re.sub(r"([.*+?^$()\[\]{}|\\])", r"\\\1",
                                      ub.kernel_message or "Starting kernel"),
        # the key that stops autoboot, alone: LAVA's default adds a newline, whose empty
        # command line prints a second prompt, and LAVA then types each command on the
        # prompt of the one before. A `setenv bootargs` typed while tftpboot still ran
        # was read by its Ctrl-C poll and lost: qemu-ppc booted with no command line
        # (fresh host, 2026-11-24, 3 of 3 jobs)
        "uboot_interrupt_newline": False,
    }
    lines = [GENERATED.format(name=board.name),
             f"{{# LAVA device type {device_type_name(board)}: {board.description} #}}\n",
             "{% extends 'base-uboot.jinja2' %}\n"]
    for key, value in sets.items():
        lines.append(f"{{% set {key} = {key}|default({json.dumps(value)}) %}}\n")
    # the board's own load and boot commands (base-uboot would also load a DTB)
    lines.append(f"{{% set uboot_tftp_commands = {json.dumps(tftp)} %}}\n")
    lines.append(f"{{% set uboot_bootx_cmd = {json.dumps(_uboot_placeholders(ub.boot_command))} %}}\n")
    # U-Boot 1.x of the real boards has no initrd_high/fdt_high; an e500 kernel needs them
    # placed by bootm (boot_data_in_place: false)
    if ub.dialect == "old" or not ub.boot_data_in_place:
        lines.append("{% set base_high_limits = false %}\n")
    return "".join(lines)


def power_commands(board: Board) -> dict:
    """The device's power commands: boardlab's guard on the worker (`boardlab lab power`,
    boardlab.lab.powerguard), which runs the board's own (facts.pdu: pdudaemon or the PDU)
    only while the board's place is LAVA's, with the job's NFS root exported to it alone."""
    cmd = {a: f"boardlab lab power {board.name} {a}" for a in ("on", "off")}
    return {"power_on_command": cmd["on"], "power_off_command": cmd["off"],
            "hard_reset_command": [cmd["off"], "sleep 1", cmd["on"]]}


def connection_command(board: Board) -> str:
    return f"telnet {board.serial_host} {board.console.ser2net_port}"


def device_dictionary(board: Board) -> str:
    net = board.network
    sets = {"connection_command": connection_command(board), **power_commands(board),
            "uboot_ipaddr_cmd": "; ".join(ethaddr_commands(board) + (
                (f"setenv ipaddr {net.ip}", f"setenv netmask {net.netmask}") if board.uboot.dialect == "hush"
                else (f"setenv ipaddr {net.ip}",)))}
    lines = [GENERATED.format(name=board.name),
             f"{{% extends '{device_type_name(board)}.jinja2' %}}\n"]
    lines += [f"{{% set {k} = {json.dumps(v)} %}}\n" for k, v in sets.items()]
    own = pdu.lava_power_commands(board, lab_host_of(board))   # what the guard runs, for a reader
    lines.append(f"{{# `boardlab lab power` checks the place is LAVA's, then runs the board's own: "
                 f"on: {own['power_on_command']}; off: {own['power_off_command']} #}}\n")
    return "".join(lines)


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        files[DEVICE_TYPES_DIR / f"{device_type_name(board)}.jinja2"] = device_type_template(board)
        files[DEVICES_DIR / f"{board.name}.jinja2"] = device_dictionary(board)
    return files


def render_device(board: Board, templates: Path = LAVA_DEVICE_TYPES) -> str:
    """The device configuration lava-run takes: the device dictionary rendered over the
    device type and LAVA's base templates, as lava-server would."""
    if not (templates / "base-uboot.jinja2").exists():
        raise LavaFault(f"LAVA's device-type templates are not in {templates} "
                        f"(package lava-server; bash scripts/setup-host.sh installs it)")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(
        [str(DEVICES_DIR), str(DEVICE_TYPES_DIR), str(templates)]),
        trim_blocks=True, autoescape=False)
    return env.get_template(f"{board.name}.jinja2").render()

