"""How a board's power is switched, in one place for labgrid, LAVA and the lab host.

A board's facts name its PDU as labgrid's NetworkPowerPort does (model, host, index).
Where the lab host runs pdudaemon (its facts' `pdudaemon`), labgrid (PDUDaemonPort and
PDUDaemonDriver) and LAVA (its power commands) both ask pdudaemon, which queues the
requests to each PDU and retries them; pdudaemon drives the PDU with the same commands
LAVA would otherwise send itself (its localcmdline driver). Without pdudaemon, labgrid
drives the PDU directly and LAVA curls it.

The virtual lab keeps its own power switch in front of QEMU: it reports each outlet's
state and clock (pdudaemon cannot report state) and serialises its outlets itself."""
from __future__ import annotations

import json
import shlex
from urllib.parse import urlsplit

from boardlab.facts.board import Board, FactsError
from boardlab.facts.labhosts import LabHost


def switch_commands(board: Board, index: str | int | None = None) -> dict[int, str]:
    """Shell commands that switch an outlet off (0) and on (1), speaking the protocol of
    the labgrid NetworkPowerPort model of the facts (labgrid/driver/power/<model>.py).
    index: the outlet (default the board's; '%s' for pdudaemon's localcmdline)."""
    pw = board.power
    index = pw.index if index is None else index
    q = shlex.quote   # the facts' host is checked on load; quoted all the same
    if pw.model == "rest":
        url = pw.host.format(index=index)
        return {v: f"curl -fsS -X PUT -d {v} {q(url)}" for v in (0, 1)}
    if pw.model == "simplerest":
        return {v: f"curl -fsS {q(pw.host.format(index=index, value=v))}" for v in (0, 1)}
    if pw.model == "gude":
        return {v: f"curl -fsS {q(f'http://{pw.host}:80/switch.html?cmd=1&p={index}&s={v}')}"
                for v in (0, 1)}
    raise FactsError(f"{board.path}: power.model {pw.model!r} has no switch command "
                     f"(known: rest, simplerest, gude; add one in boardlab/facts/pdu.py)")


def pdu_name(board: Board) -> str:
    """The PDU's name in pdudaemon's configuration: its host (a URL's host:port)."""
    host = board.power.host
    return urlsplit(host.format(index=0, value=0)).netloc if "://" in host else host


def daemon_address(lab: LabHost) -> str:
    """host:port where the lab's boards' users reach pdudaemon."""
    return f"{lab.pdudaemon.host or lab.pdudaemon.listen}:{lab.pdudaemon.port}"


def daemon_url(lab: LabHost, board: Board, command: str) -> str:
    return (f"http://{daemon_address(lab)}/power/control/{command}"
            f"?hostname={pdu_name(board)}&port={board.power.index}")


def labgrid_power(board: Board, lab: LabHost | None) -> tuple[dict, dict]:
    """(resources, drivers) of the board's power in a labgrid environment."""
    pw = board.power
    if lab is not None and lab.pdudaemon is not None:
        return ({"PDUDaemonPort": {"host": daemon_address(lab), "pdu": pdu_name(board),
                                   "index": pw.index}},
                {"PDUDaemonDriver": {"delay": 1.0}})
    return ({"NetworkPowerPort": {"model": pw.model, "host": pw.host, "index": pw.index}},
            {"NetworkPowerDriver": {"delay": 0.5}})


def lava_power_commands(board: Board, lab: LabHost | None) -> dict:
    """The device dictionary's power commands: through pdudaemon where the lab host runs
    it (curl of its HTTP API, as labgrid's PDUDaemonDriver), else to the PDU itself."""
    if lab is not None and lab.pdudaemon is not None:
        cmd = {v: f"curl -fsS {shlex.quote(daemon_url(lab, board, c))}"
               for v, c in ((0, "off"), (1, "on"))}
    else:
        cmd = switch_commands(board)
    return {"power_on_command": cmd[1], "power_off_command": cmd[0],
            "hard_reset_command": [cmd[0], "sleep 1", cmd[1]]}


def pdudaemon_config(lab: LabHost, boards) -> str:
    """pdudaemon.conf (JSON) of a lab host: its HTTP listener, and each PDU its boards
    use, driven by localcmdline with the PDU's own switch commands (%s: the outlet)."""
    pdus = {}
    for b in boards:
        cmd = switch_commands(b, "%s")
        pdus.setdefault(pdu_name(b), {"driver": "localcmdline", "cmd_on": cmd[1],
                                      "cmd_off": cmd[0], "retries": 3})
    conf = {"daemon": {"hostname": lab.pdudaemon.listen, "port": lab.pdudaemon.port,
                       "logging_level": "INFO", "listener": "http"},
            "pdus": pdus}
    return json.dumps(conf, indent=4) + "\n"
