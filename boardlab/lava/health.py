"""LAVA's health checks, generated from the facts like the rest of jobs/: one job per
device type (jobs/health-checks/<device type>.yaml, which the server reads from
dispatcher-config/health-checks/ by the name the device dictionary extends). The rule
is boardlab.judge.health's, the same as `boardlab lab check`.

The check boots what a labgrid boot boots, over the same wiring: no deploy action (LAVA
2023.01's tftp deploy copies its files into a directory of its own under tftpd's root,
mkdtemp, and cannot be pointed at another), but U-Boot's own commands as the labgrid path
sends them (boot.bootplan.plan_boot): the lab host as TFTP server (serverip), the files
staged in the board's TFTP directory under its prefix, the board's command line with its
own NFS export. So a check tries the board's staged kernel and ramdisk, the lab host's
tftpd and, on a board with an NFS root, its NFS server. With no LAVA overlay on the
board, the figures are read by an interactive test (commands typed at the shell, their
answer matched): each figure within its band, or TestError. Then the families' health
figures (a null system call's and a pipe's latency: performance, in no band) are measured
by the lines the suites run (the family's `raw_commands`), their raw output tagged in the
log as LAVA's test definitions tag theirs (measure.tagged); off the board, the arbiter reads them with the family's own reader (figures_of_log)
and keeps them in the board's history, where the board is judged against its own past
(judge.boardhealth): a board that drifts is quarantined. A host-arrival boot figure
(the real boards') bounds the wait for the login prompt. One attempt (no failure_retry):
a board that boots one time in three is Bad, not Good.

LAVA sets the device Good when the check completes and Bad when it is incomplete. The
server runs it on a schedule (health_frequency), after a job that failed (the failed-job
rule, judge.health.unknown_after, sets the device Unknown, which forces a check), and on
a Bad board each hour (`boardlab lab recheck`), so a repaired board comes back by itself."""
from __future__ import annotations

import re

from pathlib import Path

from boardlab.boot.bootplan import plan_boot
from boardlab.boot.staging import stage
from boardlab.facts.board import BOARDS_DIR, Board, load_board
from boardlab.judge.health import GUEST_BOOT, HOST_BOOT, METRIC, HealthCheck, boot_timeout_s, health_check
from boardlab.lava.files import DEVICE_TYPES_DIR, device_type_name
from boardlab.lava.jobs import dump_job
from boardlab.lava.limits import RETRY_SLACK_S
from boardlab.lava.logs import login_prompt, read_log, target_lines
from boardlab.measure import families, tagged

HEALTH_CHECKS_DIR = DEVICE_TYPES_DIR.parent / "health-checks"
FREQUENCY_HOURS = 24     # a check a day on a board nothing failed on
SAID = "health-check"    # what the board answers: 'health-check: good ...' or 'health-check: bad ...'

# the shell that reads a figure into $v (busybox ash and ELDK's bash alike)
READ = {METRIC: "v=$(free | awk '/^Mem:/ { print $2 }')",
        # the stamp the root file system writes to the kernel's log as it starts the login
        # prompt (measure.console.GUEST_MILESTONES), in printk seconds
        GUEST_BOOT: "v=$(dmesg | sed -n 's/^[^[]*[[] *\\([0-9.]*\\)[]] boardlab: login prompt.*/\\1/p' | head -n 1)"}


_ANSWER = re.compile(rf"{SAID}: (?:good|bad) ([a-z_]+\.[a-z0-9_]+)=([0-9][0-9.]*)")


def figures_of_log(text: str, isa: str | None = None, failed: dict | None = None) -> dict:
    """{key: value} of the figures a health check's board printed in the job's log (LAVA's
    raw log, as `lavacli jobs logs --raw` gives it), parsed off the board: the banded
    figures' answers, and each family's tagged raw output (measure.tagged, as LAVA's test
    definitions print it) read by the family's own reader with the programs the board's CPU
    runs (`isa`). The echoed command lines name `$v` and `@$t`, so they match neither.
    A family that gave no figure (its run failed, or its program printed what is none) is
    left out, the others kept; failed, when given, gets {family: why}."""
    out, lines = {}, [line.rstrip("\r") for line in target_lines(read_log(text))]
    for line in lines:
        for key, value in _ANSWER.findall(line):
            out[key] = float(value)
    read, why = tagged.all_figures(lines, lambda family: families.tool_set(family, isa) if isa else None)
    for figures in read.values():
        out.update(figures)
    if failed is not None:
        failed.update(why)
    return out


def uboot_commands(board: Board, kernel: str, root: str) -> list[str]:
    """U-Boot's commands of the labgrid path's boot: setenv (serverip: the lab host),
    the loads from the board's TFTP directory, bootm."""
    plan = plan_boot(board, kernel, root)
    return list(plan.setup_commands) + [load.command for load in plan.loads] + [plan.boot_command]


def _boot(board: Board, kernel: str, root: str, login_s: int) -> dict:
    """One boot, one attempt: to U-Boot, its commands (two loads), the login prompt within
    login_s of the kernel's start, logged in."""
    t = board.timeouts
    uboot_s = int(t.uboot_s + 2 * t.load_s)
    return {"boot": {"method": "u-boot", "commands": uboot_commands(board, kernel, root),
                     "prompts": [board.shell.prompt],
                     "auto_login": {"login_prompt": login_prompt(board), "username": board.shell.username},
                     "timeout": {"seconds": uboot_s + login_s + RETRY_SLACK_S},
                     "timeouts": {"uboot-commands": {"seconds": uboot_s},
                                  "auto-login-action": {"seconds": login_s}}}}


def _asked(name: str, command: str, why: str) -> dict:
    """A command whose answer is 'health-check: good ...' or 'health-check: bad ...' (the
    answer is made by the shell: the echoed command line matches neither)."""
    return {"name": name, "command": command,
            "successes": [{"message": f"{SAID}: good"}],
            "failures": [{"message": f"{SAID}: bad[^\\r\\n]*", "exception": "TestError", "error": why}]}


def case_name(key: str) -> str:
    """A figure's test case in LAVA: its key without the dot, which LAVA's server refuses in
    a case's name (lava_scheduler_app's schema: [a-zA-Z0-9-_])."""
    return key.replace(".", "-")


def figure_command(key: str, lo: float, hi: float) -> str:
    return (f"{READ[key]}; if [ -n \"$v\" ] && awk -v v=\"$v\" 'BEGIN {{ exit !(v >= {lo:.10g} && v <= {hi:.10g}) }}'"
            f"; then r=good; else r=bad; fi; echo \"{SAID}: $r {key}=$v\"")


NFS_COMMAND = f"if grep -q ' / nfs' /proc/mounts; then r=good; else r=bad; fi; echo \"{SAID}: $r root=nfs\""


def _test(board: Board, name: str, script: list[dict], minutes: int = 2) -> dict:
    return {"test": {"timeout": {"minutes": minutes}, "interactive": [
        {"name": name, "prompts": [board.shell.prompt], "script": script}]}}


def _performance_test(board: Board, check: HealthCheck) -> dict | None:
    """The families' health figures, measured by the lines their suites run, each family's
    raw output between marks for figures_of_log; a named case per family: measured, or
    failed to measure (its runs' status), no verdict on the board."""
    script = []
    for name in dict.fromkeys(k.split(".")[0] for k in check.performance):
        fam = families.get(name)
        if fam.raw_commands is None:
            continue
        keys = tuple(k for k in check.performance if k.startswith(f"{name}."))
        lines = fam.raw_commands(keys, families.tool_set(name, board.isa))
        script += [{"command": line} for line in lines[:-1]]
        tag = tagged.TAG[1:]
        script.append({"name": f"{name}-measured",
                       "command": f't={tag}; echo "@$t {name} begin"; {lines[-1]}; echo "@$t {name} end rc=$?"',
                       "successes": [{"message": f"{tagged.TAG} {name} end rc=0"}],
                       "failures": [{"message": f"{tagged.TAG} {name} end rc=[1-9][0-9]*", "exception": "TestError",
                                     "error": f"{name}: its health figures were not measured ({', '.join(keys)})"}]})
    return _test(board, "performance", script, minutes=5) if script else None


def _figures_test(board: Board, check: HealthCheck) -> dict | None:
    script = [_asked(case_name(f.key), figure_command(f.key, f.lo, f.hi),
                     f"{f.key} not {f.band()} ({check.kernel} on {check.board})")
              for f in check.figures if f.key != HOST_BOOT]   # that one: the login's timeout
    return _test(board, "figures", script) if script else None


def health_check_job(board: Board) -> dict:
    check = health_check(board)
    login_s = boot_timeout_s(check, board)
    actions = [_boot(board, check.kernel, check.root, login_s), _figures_test(board, check),
               _performance_test(board, check)]
    if check.nfs_boot:   # the NFS root, booted as the labgrid path boots it
        actions += [_boot(board, check.kernel, "nfs", int(board.timeouts.boot_s)),
                    _test(board, "nfs", [_asked("root_nfs", NFS_COMMAND, f"{board.name}: the root is not NFS")])]
    actions = [a for a in actions if a]
    seconds = sum(a["boot"]["timeout"]["seconds"] for a in actions if "boot" in a)
    return {"device_type": device_type_name(board),
            "job_name": f"health-check {board.name}: {check.describe()}",
            "timeouts": {"job": {"minutes": -(-seconds // 60) + sum(a["test"]["timeout"]["minutes"] for a in actions
                                                                   if "test" in a) + 2},
                         "action": {"minutes": 5}, "connection": {"minutes": 2}},
            "priority": "high", "visibility": "public",
            "metadata": {"boardlab.board": board.name, "boardlab.kernel": check.kernel,
                         "boardlab.root": check.root, "boardlab.nfs_boot": str(check.nfs_boot).lower(),
                         "boardlab.health_check": " ".join(f.key for f in check.figures) or "boot",
                         **({"boardlab.performance": " ".join(check.performance)} if check.performance else {})},
            "actions": actions}


def stage_check_files(board: Board) -> list[str]:
    """The files the check boots, put into the board's TFTP directory as a labgrid boot
    puts them (boot.staging: only when their bytes differ), those built here: `lava server
    up` does it for the virtual boards, whose lab hosts share this machine's files. A real
    board's are there from its last labgrid boot (`boardlab lab check BOARD` stages them)."""
    check, staged = health_check(board), []
    for root in [check.root] + (["nfs"] if check.nfs_boot else []):
        for local, name in plan_boot(board, check.kernel, root).stage:
            if local.is_file() and name not in staged:
                stage(local, board.tftp.dir)
                staged.append(name)
    return staged


def health_check_path(board: Board) -> Path:
    return HEALTH_CHECKS_DIR / f"{device_type_name(board)}.yaml"


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        files[health_check_path(board)] = (
            f"# Generated from boards/{board.name}.yaml and its baselines by `boardlab gen`: "
            f"the LAVA health check of device type {device_type_name(board)}.\n" + dump_job(health_check_job(board)))
    return files
