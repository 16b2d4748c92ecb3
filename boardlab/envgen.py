"""Generate the files that are derived from board facts, so no fact is hand-copied:
the labgrid environment lab/<board>.yaml (a test checks they are up to date)."""
from __future__ import annotations

from pathlib import Path

import yaml

from .facts import BOARDS_DIR, PROJECT_ROOT, load_board

LAB_DIR = PROJECT_ROOT / "lab"
GENERATED = "# Generated from boards/{name}.yaml by `boardlab gen`: edit the facts, not this file.\n"


def uboot_driver(board: dict) -> tuple[str, dict]:
    ub = board["uboot"]
    cfg = {"prompt": ub["prompt"], "autoboot": ub["autoboot"], "interrupt": "\n",
           "login_timeout": int(board["timeouts"]["uboot_s"])}
    # an old U-Boot has no hush shell: labgrid's SmallUBootDriver does not rely on it
    return ("UBootDriver" if ub["dialect"] == "hush" else "SmallUBootDriver"), cfg


def labgrid_env(board: dict) -> dict:
    """The labgrid environment of a board, as data."""
    con, pw = board["console"], board["power"]
    uboot_name, uboot_cfg = uboot_driver(board)
    shell = {"prompt": board["shell"]["prompt"], "login_prompt": board["shell"]["login_prompt"],
             "username": board["shell"]["username"], "login_timeout": 60}
    if board["shell"].get("password") is not None:
        shell["password"] = board["shell"]["password"]
    facts_rel = Path("..") / "boards" / f"{board['name']}.yaml"
    resources = {
        "NetworkSerialPort": {"host": "127.0.0.1" if board["lab_host"] == "vlab" else board["lab_host"],
                              "port": con["ser2net_port"], "speed": con["baud"],
                              "protocol": "rfc2217"},
        "NetworkPowerPort": {"model": pw["model"], "host": pw["host"], "index": pw["index"]},
        "TFTPProvider": {"internal": board["tftp"]["dir"].rstrip("/") + "/",
                         "external": board["tftp"]["prefix"]},
        "NFSProvider": {},
    }
    drivers = {
        "TimestampingSerialDriver": {},
        "NetworkPowerDriver": {"delay": 0.5},
        uboot_name: uboot_cfg,
        "ShellDriver": shell,
        "TFTPProviderDriver": {},
        "NFSProviderDriver": {},
        "BoardStrategy": {"facts": str(facts_rel)},
    }
    return {"targets": {"main": {"resources": resources, "drivers": drivers}},
            "imports": ["boardlab.strategy"]}


def render_env(board: dict) -> str:
    body = yaml.safe_dump(labgrid_env(board), sort_keys=False, default_flow_style=False, width=100)
    return GENERATED.format(name=board["name"]) + body


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        files[LAB_DIR / f"{board['name']}.yaml"] = render_env(board)
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
