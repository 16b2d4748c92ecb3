"""A board's performance health told to the lab (its history and its rule are
boardlab.judge.boardhealth's). A board that drifts is quarantined where people and LAVA
look: LAVA's device set to Maintenance with the reason as its description (an admin's word to the arbiter: it never undoes it), the labgrid
place's comment says it, `lab status` shows "drifting since T: metric +x %". Accepting
its new level (repaired, or re-baselined) starts its reference again, says why in its
history, and hands the board back: LAVA's health Unknown (its health check runs before
any job), the place's comment cleared."""
from __future__ import annotations

import subprocess

from boardlab.judge import boardhealth


def description(health: boardhealth.Health) -> str:
    """What LAVA's device and the labgrid place say of a quarantined board."""
    return f"boardlab: {health.line()}"


def quarantine_line(board: str, health: boardhealth.Health) -> str:
    return f"boardlab: {board} quarantined: {health.line()} (`boardlab lab accept {board} --reason ...` takes it back)"


def tell_lab(board: str, description: str | None, health: str, identity: str | None,
             coordinator: str | None, echo=print, lava: bool = True) -> None:
    """LAVA's device (health and description) and the labgrid place's comment, each where
    it answers; what did not is said, not raised: the board's history holds the verdict."""
    from boardlab.facts.places import client
    from boardlab.lava.server import lavacli
    if lava:   # identity None: lavacli's default
        try:
            lavacli(identity, "devices", "update", board, "--health", health,
                    "--description", description or "")
            echo(f"  LAVA: {board} {health}" + (f" ({description})" if description else ""))
        except Exception as e:   # a lab without LAVA, or LAVA down: said
            echo(f"  LAVA not told ({str(e).splitlines()[0] if str(e) else type(e).__name__})")
    if coordinator:
        try:
            r = client(coordinator, "set-comment", description or "", place=board, check=False, timeout=20)
            echo(f"  place {board}: comment " + ("set" if r.returncode == 0 else
                                                 f"not set ({(r.stderr or r.stdout).strip()[-200:]})"))
        except (OSError, subprocess.SubprocessError) as e:
            echo(f"  place {board}: comment not set ({e})")


def reference_identity(board, kernel: str) -> dict:
    """The reference kernel's identity as this host's image of it knows it (measure.kernelid;
    empty where that image is not on this host)."""
    from boardlab.boot.bootplan import resolve_kernel
    from boardlab.errors import BoardlabError
    from boardlab.measure import kernelid
    try:
        return kernelid.of_image(resolve_kernel(board, kernel).local)
    except BoardlabError:
        return {}
