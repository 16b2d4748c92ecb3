"""Power switching that gives up in seconds and names the switch.

labgrid's power drivers wait as long as the switch makes them (its rest model calls
requests without a timeout: a switch that accepts the connection and never answers
holds the run forever). The call runs in a worker thread; past the deadline the run
goes on without it and says which switch did not answer. Calls to one board's power are
in order: a call that timed out may still arrive at the switch, so the next one waits
for it (a late 'on' must never land after a later 'off')."""
from __future__ import annotations

import threading
from pathlib import Path

from boardlab.errors import BoardlabError, LabFault

POWER_TIMEOUT_S = 10.0
_pending: dict[str, threading.Thread] = {}   # board -> a power call that outlived its deadline


class PowerError(LabFault):
    """The power switch failed or did not answer in time."""
    part = "power"


def switch_name(power, board) -> str:
    """The switch as a person finds it: model and address from the bound resource."""
    port = getattr(power, "port", None)
    if port is not None and hasattr(port, "host"):
        host = port.host.format(index=getattr(port, "index", ""), value="")
        return f"{getattr(port, 'model', type(port).__name__)} switch {host} outlet {getattr(port, 'index', '?')}"
    pdu = getattr(power, "pdu", None) or getattr(power, "hostname", None)
    if pdu:
        return f"{type(power).__name__} {pdu}"
    return f"{type(power).__name__} ({board.power.url})"


def lab_host_down(board) -> str | None:
    """'its lab host X is down (boardlab vlab up)' when the board's lab host is a virtual
    one whose network namespace is gone, else None. Down, its addresses route off this
    machine, and whatever answers there (a 404 seen) is not the board's power switch."""
    from boardlab.facts.labhosts import load_lab_host
    try:
        host = load_lab_host(board.lab_host)
    except (OSError, BoardlabError):
        return None
    if host.kind == "virtual" and host.netns and not Path(f"/run/netns/{host.netns}").exists():
        return f"its lab host {host.name} is down (boardlab vlab up)"
    return None


def _why_down(board) -> str:
    why = lab_host_down(board)
    return f"; {why}" if why else ""


def switch(power, on: bool, board, timeout: float = POWER_TIMEOUT_S):
    """power.on() or power.off(), at most `timeout` seconds; PowerError otherwise."""
    action = "on" if on else "off"
    outcome = {}
    late = _pending.get(board.name)
    if late is not None:
        late.join(timeout)
        if late.is_alive():
            raise PowerError(f"power {action} of {board.name}: not sent, the earlier "
                             f"'{late.name}' to {switch_name(power, board)} has still not "
                             f"returned; the board's state is unknown")
        del _pending[board.name]

    def call():
        try:
            (power.on if on else power.off)()
        except BaseException as e:  # noqa: BLE001 - any driver's error, reported below
            outcome["error"] = e

    worker = threading.Thread(target=call, name=f"power-{action}-{board.name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        _pending[board.name] = worker
        raise PowerError(f"power {action} of {board.name}: {switch_name(power, board)} did not "
                         f"answer within {timeout:.0f} s{_why_down(board)}")
    if "error" in outcome:
        e = outcome["error"]
        raise PowerError(f"power {action} of {board.name} failed: {switch_name(power, board)}: "
                         f"{type(e).__name__}: {e}{_why_down(board)}") from None
