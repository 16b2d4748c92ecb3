"""Generate the files that are derived from board facts, so no fact is hand-copied
(a test checks they are up to date): the labgrid environments lab/<board>.yaml and
their RemotePlace variants lab/remote/<board>.yaml, and per lab host under
places/<host>/: the labgrid exporter config, the coordinator places with tags, and
(for a real lab host) ser2net, tftpd-hpa and NFS exports configs and the exporter's
systemd unit; the management host's units under places/management/ (boardlab.lab.units);
the LAVA device types and device dictionaries under jobs/ (boardlab.lava); and the answer
pages docs/<page>.md from the figures kept in docs/data/<page>.json (boardlab.kernel.answerpage)."""
from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from boardlab.facts import hostconfigs, lanfirewall, pdu
from boardlab.facts.board import BOARDS_DIR, LAB_ENV_DIR, PLACES_DIR, Board, load_board
from boardlab.facts.labhosts import LabHost, lab_host_of, lab_hosts
from boardlab.facts.labfacts import check_listed, lab_boards, load_lab
from boardlab.lab import units
from boardlab.lava import devices as lava_devices, health as lava_health
from boardlab import yamltext

LAB_DIR = LAB_ENV_DIR
GENERATED = "# Generated from boards/{name}.yaml by `boardlab gen`: edit the facts, not this file.\n"


def uboot_driver(board: Board) -> tuple[str, dict]:
    """labgrid's UBootDriver only gets the strategy to the prompt (autoboot stop, an echo
    check); the strategy sends one command per line, which every U-Boot dialect takes,
    so old U-Boots without hush need no other driver."""
    ub = board.uboot
    cfg = {"prompt": ub.prompt, "autoboot": ub.autoboot, "interrupt": "\n",
           "login_timeout": int(board.timeouts.uboot_s)}
    return "UBootDriver", cfg


def board_resources(board: Board) -> dict:
    """The board's resources as its lab host exports them (and a local env uses them)."""
    con = board.console
    power, _ = pdu.labgrid_power(board, lab_host_of(board))
    return {
        "NetworkSerialPort": {"host": board.serial_host, "port": con.ser2net_port,
                              "speed": con.baud, "protocol": "rfc2217"},
        **power,
        "TFTPProvider": {"internal": board.tftp.dir.rstrip("/") + "/",
                         "external": board.tftp.prefix},
    }


def tag_value(value) -> str:
    """labgrid tag values: lower case letters, digits, '_' and '-'."""
    return re.sub(r"[^a-z0-9_-]+", "_", str(value).lower()).strip("_")


def place_tags(board: Board) -> dict:
    """A virtual board's clock too: `reserve arch=arm clock=deterministic` is not handed
    the noisy board (its clock realtime)."""
    tags = {"board": tag_value(board.name), "arch": tag_value(board.arch),
            "cpu": tag_value(board.cpu.split(" (")[0]), "ram": f"{board.ram_mb}mb"}
    return {**tags, "clock": board.qemu.clock} if board.virtual else tags


def labgrid_env(board: Board, remote: bool = False) -> dict:
    """The labgrid environment of a board, as data (remote: through the coordinator)."""
    uboot_name, uboot_cfg = uboot_driver(board)
    shell = {"prompt": board.shell.prompt, "login_prompt": board.shell.login_prompt,
             "username": board.shell.username, "login_timeout": 60}
    if board.shell.password is not None:
        shell["password"] = board.shell.password
    facts_rel = Path("..") / ("../boards" if remote else "boards") / f"{board.name}.yaml"
    if remote:
        resources = {"RemotePlace": {"name": board.name}}
    else:
        resources = {**board_resources(board), "NFSProvider": {}}
    drivers = {
        "TimestampingSerialDriver": {},
        **pdu.labgrid_power(board, lab_host_of(board))[1],
        uboot_name: uboot_cfg,
        "ShellDriver": shell,
        "TFTPProviderDriver": {},
        **({} if remote else {"NFSProviderDriver": {}}),
        "BoardStrategy": {"facts": str(facts_rel)},   # last: it binds the drivers above
    }
    return {"targets": {"main": {"resources": resources, "drivers": drivers}},
            "imports": ["boardlab.boot.strategy"]}


def _yaml(data) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=100)


def unreachable_coordinator(env_file: str | None, coordinator: str | None) -> str | None:
    """Why an environment through the coordinator (RemotePlace, lab/remote/) cannot run:
    its coordinator does not answer (one line), else None."""
    from boardlab.net import tcp_open
    if not env_file or not Path(env_file).exists():
        return None
    targets = (yamltext.load(Path(env_file).read_text()) or {}).get("targets") or {}
    places = [t["resources"]["RemotePlace"]["name"] for t in targets.values()
              if isinstance(t, dict) and "RemotePlace" in (t.get("resources") or {})]
    coordinator = coordinator or os.environ.get("LG_COORDINATOR") or "127.0.0.1:20408"
    host, _, port = coordinator.rpartition(":")
    if not places or tcp_open(int(port), host or "127.0.0.1", timeout=2.0):
        return None
    return (f"{env_file}: the labgrid coordinator {coordinator} (place {places[0]}) is not "
            f"reachable: is it running? (--lg-coordinator or LG_COORDINATOR)")


def render_env(board: Board, remote: bool = False) -> str:
    head = GENERATED.format(name=board.name)
    if not board.virtual and not remote:
        head += (f"# The console and pdudaemon listen on 127.0.0.1 of lab host {board.lab_host}: "
                 f"run there, or elsewhere with\n# LG_PROXY={board.lab_host} (labgrid tunnels "
                 f"through SSH). lab/remote/ goes through the coordinator.\n")
    return head + _yaml(labgrid_env(board, remote))


def exporter_config(lab: LabHost, boards: list) -> str:
    """labgrid-exporter config: one group per board. It is Jinja2 with '#' as line
    statement prefix: comments start with '##'."""
    groups = {b.name: {"location": f"{lab.name}", **board_resources(b)} for b in boards}
    head = (f"## Generated from boards/*.yaml by `boardlab gen`: labgrid-exporter of lab host "
            f"{lab.name}\n")
    if lab.kind == "real":   # consoles and pdudaemon on 127.0.0.1: clients must tunnel
        head += (f"## Run it isolated, so clients reach 127.0.0.1 through SSH to this host:\n"
                 f"##   labgrid-exporter --isolated --name {lab.exporter_name or lab.name} exporter.yaml\n")
    elif lab.management:   # the virtual host's consoles and switch on its management address
        head += (f"## `boardlab vlab up` runs it in the lab host, named by its management address\n"
                 f"## (kernels are staged to its TFTP directory over ssh to that name):\n"
                 f"##   labgrid-exporter -c <coordinator> --name {lab.exporter_name or lab.name} "
                 f"--hostname {lab.management_ip} exporter.yaml\n")
    return head + _yaml(groups)


def places_config(lab: LabHost, boards: list) -> str:
    """Coordinator places with tags; `boardlab places sync` creates them."""
    exporter = lab.exporter_name or lab.name
    places = {b.name: {"matches": [f"{exporter}/{b.name}/*"], "tags": place_tags(b)}
              for b in boards}
    return (f"# Generated from boards/*.yaml by `boardlab gen`: the coordinator's places of lab "
            f"host {lab.name}.\n# Create or update them: boardlab places sync --lab "
            f"{lab.name} --coordinator HOST:PORT\n" + _yaml(places))


def lab_host_files(lab: LabHost) -> dict[Path, str]:
    boards = lab_boards(lab)
    d = PLACES_DIR / lab.name
    files = {d / "exporter.yaml": exporter_config(lab, boards),
             d / "places.yaml": places_config(lab, boards)}
    if lab.kind == "real":   # the virtual lab host renders these at run time
        server = lab.server_ip
        files[d / "ser2net.yaml"] = hostconfigs.ser2net_yaml(
            (b.name, b.console.ser2net_port, b.console.serial_adapter,
             b.console.baud, "127.0.0.1") for b in boards)
        files[d / "tftpd-hpa"] = hostconfigs.tftpd_defaults(lab.tftp_root, server)
        files[d / "exports"] = hostconfigs.nfs_exports(hostconfigs.nfs_export_clients(lab, boards))
        if lab.pdudaemon is not None:
            files[d / "pdudaemon.conf"] = pdu.pdudaemon_config(lab, boards)
        files[d / "nftables.conf"] = lanfirewall.nftables_conf(lab)
        files[d / lanfirewall.UNIT] = lanfirewall.systemd_unit(lab)
        files[d / "sshd_config.d" / "boardlab.conf"] = lanfirewall.sshd_dropin(lab)
        files[d / "labgrid-exporter.service"] = units.exporter_unit(lab, load_lab())
    return files


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        check_listed(board)
        files[LAB_DIR / f"{board.name}.yaml"] = render_env(board)
        files[LAB_DIR / "remote" / f"{board.name}.yaml"] = render_env(board, remote=True)
    for lab in lab_hosts():
        files.update(lab_host_files(lab))
    files.update({PLACES_DIR / units.MANAGEMENT_DIR / name: text
                  for name, text in units.management_units(lab_hosts(), load_lab()).items()})
    files.update(lava_devices.generated_files())   # LAVA's: the same facts
    files.update(lava_health.generated_files())
    from boardlab.kernel import answerpage   # the answer pages: from the data kept in docs/data
    files.update(answerpage.generated_files())
    from boardlab.kernel import sensitivity   # an answer page's pair with the project's programs
    files.update(sensitivity.generated_files())
    from boardlab.pages import ownprograms_page   # the programs side by side: from docs/data too
    files.update(ownprograms_page.generated_files())
    from boardlab.pages import detectable_page   # what each board can see: from its baselines
    files.update(detectable_page.generated_files())
    return files


def write_all(check=False) -> list[Path]:
    """Write every generated file; with check, only report the stale ones."""
    stale = []
    for path, text in generated_files().items():
        if not path.exists() or path.read_text() != text:
            stale.append(path)
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    return stale
