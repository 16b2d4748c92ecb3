"""A LAVA server, through lavacli: submit, wait, and the schedule of recurring jobs
(cron lines or systemd timers)."""
from __future__ import annotations

import html
import re
import shlex
import subprocess
import time
import urllib.request
from pathlib import Path

import yaml

from boardlab.errors import one_line
from boardlab.facts.board import PROJECT_ROOT
from boardlab.judge.health import failed_job, unknown_after
from boardlab.lava.errors import LavaFault, LavaInputError
from boardlab.lava.files import SCHEDULE
from boardlab.lava.identities import identity_entry, role_identity
from boardlab import yamltext

def lavacli(identity: str | None, *args, check=True) -> str:
    cmd = ["lavacli"] + (["-i", identity] if identity else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise LavaFault(f"{' '.join(shlex.quote(c) for c in cmd)} failed ({r.returncode}): "
                        f"{(r.stderr or r.stdout).strip()[-1500:]}")
    return r.stdout


def load_schedule(path: Path = SCHEDULE, times: tuple = ()) -> dict:
    """The schedule, checked; times: what each group of `when` must say (cron for the
    cron lines, on_calendar for systemd's timers)."""
    try:
        data = yamltext.load(path.read_text())
    except FileNotFoundError:
        raise LavaInputError(f"{path}: no such file") from None
    except (OSError, yaml.YAMLError) as e:
        raise LavaInputError(f"{path}: {one_line(e)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise LavaInputError(f"{path}: needs a 'jobs' mapping of name -> {{board, kernel, suites, when}}")
    if not isinstance(data.get("trees", {}), dict):
        raise LavaInputError(f"{path}: 'trees' must be a mapping of name -> {{tree, branch, board, when}}")
    _check_groups(data, path, times)
    for group, needs in (("jobs", ("board", "when")), ("trees", ("tree", "board", "when"))):
        for name, spec in data.get(group, {}).items():
            if not isinstance(spec, dict):
                raise LavaInputError(f"{path}: {group}.{name} must be a mapping of "
                                     f"{', '.join(needs)}, ..., got {spec!r}")
            for key in needs:
                if key not in spec:
                    raise LavaInputError(f"{path}: {group}.{name}.{key} is missing")
            if not isinstance(spec["when"], str) or spec["when"] not in data.get("when", {}):
                raise LavaInputError(f"{path}: {group}.{name}.when is {spec['when']!r}; defined: "
                                     f"{', '.join(data.get('when', {}))}")
    return data


def _check_groups(data: dict, path: Path, times: tuple):
    """when: a mapping of group -> {cron, on_calendar}, each group with the times asked for."""
    groups = data.get("when", {})
    if not isinstance(groups, dict) or not all(isinstance(g, dict) for g in groups.values()):
        raise LavaInputError(f"{path}: 'when' must be a mapping of group -> {{cron, on_calendar}}, "
                             f"got {groups!r}")
    for name, group in groups.items():
        for key in times:
            if not isinstance(group.get(key), str):
                raise LavaInputError(f"{path}: when.{name}.{key} " + (
                    f"must be a string, got {group[key]!r}" if key in group else "is missing"))


def nightly_commands(schedule: dict) -> list[tuple[str, str, str]]:
    """(when, command, log) of each tree's nightly build and of its watch after the jobs."""
    from boardlab.facts.board import load_board
    out = []
    for name, spec in schedule.get("trees", {}).items():
        families = ",".join(spec.get("families", ()))
        out.append((spec["when"], f"nightly --tree {shlex.quote(spec['tree'])} --branch "
                                  f"{shlex.quote(spec.get('branch', 'HEAD'))} --board {spec['board']}"
                                  + (f" --families {families}" if families else ""), "nightly"))
        out.append((WATCH_AT, f"history watch --tree {shlex.quote(spec['tree'])} --lab "
                              f"{load_board(spec['board']).lab_host}", "watch"))
    return out


def schedule_jobs(schedule: dict, when: str | None = None) -> dict[str, dict]:
    return {n: s for n, s in schedule["jobs"].items() if when is None or s["when"] == when}


# the lab's own lavacli identities: <base>-<role> (identities.role_identity), as the
# management host's units name them (lab.units)
LAB_IDENTITY_BASE = "boardlab"
RECHECK_CALENDAR = "*-*-* *:15:00"   # hourly: the recheck's cron line and both its timers
RECHECK_IDENTITY = role_identity(LAB_IDENTITY_BASE, "recheck")   # `lab recheck`'s default
RECHECK_COMMAND = f"lab recheck --identity {RECHECK_IDENTITY}"

# what follows the nightly runs, (cron, systemd's calendar, command, log): the history's
# change points noted each morning; LAVA's Bad boards checked again each hour, as their
# own role; every linux-source version the archive serves measured once a week (resumes;
# new ones only)
AFTER_THE_JOBS = (("45 5 * * *", "*-*-* 05:45:00", "history changes", "history"),
                  ("15 * * * *", RECHECK_CALENDAR, RECHECK_COMMAND, "lab-recheck"),
                  ("0 4 * * 0", "Sun *-*-* 04:00:00", "kernel sweep", "sweep"))


WATCH_AT = "0 6 * * *"   # after the nightly jobs and the history's changes
WATCH_CALENDAR = "*-*-* 06:00:00"


def cron_lines(schedule: dict, project: Path = PROJECT_ROOT) -> str:
    """/etc/cron.d lines that submit each group of scheduled jobs, build the trees' nightly
    kernels, and watch their history."""
    out = ["# boardlab: scheduled LAVA jobs (generated by `boardlab lava schedule --cron`)",
           "SHELL=/bin/sh"]
    for when, spec in schedule["when"].items():
        if schedule_jobs(schedule, when):
            out.append(f"{spec['cron']} root cd {project} && .venv/bin/boardlab lava submit "
                       f"--when {when} >> /var/log/boardlab-lava-submit.log 2>&1")
    timed = [(cron, cmd, log) for cron, _, cmd, log in AFTER_THE_JOBS]
    timed += [(schedule["when"].get(when, {}).get("cron", when), cmd, log)
              for when, cmd, log in nightly_commands(schedule)]
    out += [f"{cron} root cd {project} && .venv/bin/boardlab {cmd} >> /var/log/boardlab-{log}.log 2>&1"
            for cron, cmd, log in timed]
    return "\n".join(out) + "\n"


def _oneshot(name: str, cmd: str, calendar: str, project: Path) -> dict[str, str]:
    """name.service running `boardlab cmd`, and name.timer starting it on calendar."""
    return {f"{name}.service": (f"[Unit]\nDescription=boardlab {cmd.split(' --')[0]}\n\n[Service]\n"
                                f"Type=oneshot\nWorkingDirectory={project}\n"
                                f"ExecStart={project}/.venv/bin/boardlab {cmd}\n"),
            f"{name}.timer": (f"[Unit]\nDescription=boardlab {cmd.split(' --')[0]}\n\n[Timer]\n"
                              f"OnCalendar={calendar}\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n")}


def systemd_units(schedule: dict, project: Path = PROJECT_ROOT) -> dict[str, str]:
    units = {}
    for when, spec in schedule["when"].items():
        if not schedule_jobs(schedule, when):
            continue
        units[f"boardlab-lava-{when}.service"] = (
            f"[Unit]\nDescription=boardlab: submit the {when} LAVA jobs\n\n[Service]\nType=oneshot\n"
            f"WorkingDirectory={project}\nExecStart={project}/.venv/bin/boardlab lava submit --when {when}\n")
        units[f"boardlab-lava-{when}.timer"] = (
            f"[Unit]\nDescription=boardlab: {when} LAVA jobs\n\n[Timer]\nOnCalendar={spec['on_calendar']}\n"
            f"Persistent=true\n\n[Install]\nWantedBy=timers.target\n")
    for _, calendar, cmd, log in AFTER_THE_JOBS:   # named as the management host's (lab.units)
        units.update(_oneshot(f"boardlab-{log}", cmd, calendar, project))
    calendars = {w: spec["on_calendar"] for w, spec in schedule["when"].items()}
    for n, (when, cmd, log) in enumerate(nightly_commands(schedule)):
        units.update(_oneshot(f"boardlab-{log}-{n // 2}", cmd, calendars.get(when, WATCH_CALENDAR), project))
    return units


def wait_for_job(identity: str | None, job_id: str, timeout: float, echo=print, poll=5.0,
                 check=None) -> str:
    """Poll a job until it finishes; check() may raise when the server cannot make progress."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        if check:
            check()
        info = yamltext.load(lavacli(identity, "jobs", "show", str(job_id), "--yaml"))
        state, health = info.get("state"), info.get("health")
        if (state, health) != last:
            echo(f"job {job_id}: {state} ({health})")
            last = (state, health)
        if state == "Finished":
            check_after_failure(identity, info, job_id, echo)
            return health
        if time.monotonic() > deadline:
            raise LavaFault(f"job {job_id} still {state} after {timeout:.0f} s")
        time.sleep(poll)



def check_after_failure(identity: str | None, info: dict, job_id, echo=print) -> bool:
    """A finished job (lavacli's `jobs show`): the failed-job rule (judge.health.unknown_after,
    the arbiter's too, which applies it to every job on the boards it holds, a scheduled
    `lava submit` without --wait included). Returns whether the board was set Unknown."""
    device = info.get("actual_device") or info.get("device")
    if not device or not failed_job(info) or not unknown_after(info, device_health(identity, device)):
        return False
    lavacli(identity, "devices", "update", device, "--health", "UNKNOWN")
    echo(f"job {job_id} failed: board {device} is checked before its next job")
    return True


def device_health(identity: str | None, device: str) -> str:
    return (yamltext.load(lavacli(identity, "devices", "show", device, "--yaml")) or {}).get("health", "")


def recheck(identity: str | None, echo=print) -> list[str]:
    """Each Bad board checked again (Unknown: LAVA runs its health check before any job):
    a repaired board comes back by itself, a broken one goes Bad again with the check's
    log. Hourly from the schedule (AFTER_THE_JOBS)."""
    bad = [d["hostname"] for d in yamltext.load(lavacli(identity, "devices", "list", "--yaml")) or []
           if d.get("health") == "Bad"]
    for device in bad:
        lavacli(identity, "devices", "update", device, "--health", "UNKNOWN")
        echo(f"{device}: Bad -> Unknown: its health check runs next")
    return bad


def parse_transitions(page: str) -> list[dict]:
    """LAVA's device page (/scheduler/device/<name>, 2023.01: its "Transitions" table, LAVA's
    own record of each health change: newest first, the user who made it) ->
    [{when, user, change}] as the page says them; [] when it has none."""
    at = page.find(">Transitions</h3>")
    body = re.search(r"<tbody[^>]*>(.*?)</tbody>", page[at:], re.S) if at >= 0 else None
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1) if body else "", re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if len(cells) == 3:
            rows.append({"when": cells[0], "user": cells[1], "change": " ".join(cells[2].split())})
    return rows



def device_transitions(identity: str | None, device: str) -> list[dict]:
    """The device's health transitions, from its page on the identity's server."""
    base = (identity_entry(identity).get("uri") or "").rsplit("/RPC2", 1)[0].rstrip("/")
    with urllib.request.urlopen(f"{base}/scheduler/device/{device}", timeout=30) as r:
        return parse_transitions(r.read().decode(errors="replace"))
