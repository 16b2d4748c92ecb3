"""LAVA, from the same board facts and baselines as the labgrid side.

- Device types `jobs/device-types/boardlab-<board>.jinja2` extend LAVA's own
  base-uboot.jinja2 with the board's U-Boot (prompt, load addresses, console, mkimage
  arch, tftp and bootm commands); device dictionaries `jobs/devices/<board>.jinja2` add
  the instance: connection command to its ser2net port, power commands to the power
  switch labgrid drives (same URL, same protocol), its IP. Both generated (`boardlab gen`).
- Jobs are rendered per (board, kernel, root, suites): deploy to TFTP (uImage + ramdisk,
  or NFS root), boot with the u-boot method, lava-test-shell definitions from
  jobs/testdefs/ whose GATE parameter carries each metric's limit from
  kernels/<kernel>/<board>.yaml, so the LAVA test case itself passes or fails.
- Boot time is measured from LAVA's own log: every console line and every command
  sent is logged with its host time, and the study's origin, the kernel's load command,
  is invisible to the board. `results_from_log` turns a job log into the results.json
  the pytest runs write (same suite and metric names, same units).
"""
from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import shlex
import subprocess
import tarfile
import time
from pathlib import Path

import jinja2
import yaml

from . import baselines as bl
from . import clocks, console, labhost
from .envgen import serial_host
from .facts import BOARDS_DIR, PROJECT_ROOT, FactsError, NFSROOT_TARBALL, bootargs, load_board, load_lab_host
from .errors import BoardlabError
from .results import RunResults

JOBS_DIR = PROJECT_ROOT / "jobs"
DEVICE_TYPES_DIR = JOBS_DIR / "device-types"
DEVICES_DIR = JOBS_DIR / "devices"
TESTDEFS_DIR = JOBS_DIR / "testdefs"
SCHEDULE = JOBS_DIR / "schedule.yaml"
LAVA_DEVICE_TYPES = Path("/usr/share/lava-server/device-types")
SYSTEM_PYTHON = "/usr/bin/python3"    # LAVA's own modules live in Debian's python3
GENERATED = "{{# Generated from boards/{name}.yaml by `boardlab gen`: edit the facts, not this file. #}}\n"

# suite name -> (test definition, what the board runs); boot-time has none: it is timed
# from the log, on the host
SUITES = {
    "boot-time": None,
    "memory": "memory/memory.yaml",
    "lmbench": "lmbench/lmbench.yaml",
    "jitter": "jitter/jitter.yaml",
}
SUITE_ALIASES = {"boot_time": "boot-time", "mem_eat": "memory", "mem-eat": "memory",
                 "cyclictest": "jitter"}
DEFAULT_SUITES = ("boot-time", "memory", "lmbench", "jitter")
# LAVA's ShellCommand searches the last 4000 characters it read (lava_dispatcher/shell.py),
# and a single read of that many or more replaces what came before: base.jinja2's default
# read size of 4092 loses a prompt split between a short read and a long one (a kernel's
# log burst while LAVA is busy). Reads of 2000 (pexpect's default) keep 2000 before them.
LAVA_SEARCH_WINDOW = 4000
SPAWN_MAXREAD = 2000
BOOT_ATTEMPTS = 2       # LAVA's failure_retry on the boot: see render_job
RETRY_SLACK_S = 10      # per attempt: power cycle, connection, LAVA's pause between tries
SMALL_BOARD_MB = 32     # lmbench's context switch and bandwidth runs need more (the study)
# LAVA's own baselines where its figures differ (memory: its overlay is in the ramdisk)
HARNESS = "lava"
# results.json suite names (the pytest suites' gate.record(suite, ...))
RESULT_SUITE = {"boot-time": "boot_time", "memory": "memory", "lmbench": "lmbench",
                "jitter": "jitter"}


class LavaError(BoardlabError):
    """A LAVA job that cannot be rendered, run or read: names the cause."""


def device_type_name(board: dict) -> str:
    return f"boardlab-{board['name']}"


# ---- device types and device dictionaries ----------------------------------------------

def _kernel_args(board: dict) -> tuple[str, str, str]:
    """Split the facts' command lines into what base-uboot composes itself (console,
    root, nfsroot) and the rest: (kernel args, extra nfsroot options, ip= args)."""
    extra, ip_args, nfs_opts = [], "", ""
    for root in board["root"]["bootargs"]:
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


def device_type_template(board: dict) -> str:
    ub, con, mk = board["uboot"], board["console"], board["mkimage"]
    load = ub["load_command"]
    kernel_args, nfs_opts, ip_args = _kernel_args(board)
    tftp = [load.format(addr="{KERNEL_ADDR}", file="{KERNEL}"),
            load.format(addr="{RAMDISK_ADDR}", file="{RAMDISK}")]
    sets = {
        "console_device": con["device"],
        "baud_rate": con["baud"],
        "bootloader_prompt": ub["prompt"].strip(),
        "interrupt_prompt": ub["autoboot"],
        "uboot_autoboot_prompt": ub["autoboot"],
        "uboot_mkimage_arch": mk["arch"],
        "bootm_kernel_addr": ub["kernel_addr"],
        "bootm_ramdisk_addr": ub.get("ramdisk_addr") or "-",
        "bootm_dtb_addr": ub.get("fdt_addr") or "-",
        "base_kernel_args": kernel_args,
        "extra_nfsroot_args": nfs_opts,
        "base_ip_args": ip_args,
        "kernel_start_message": console.KERNEL_MILESTONES[1][1],
        "spawn_maxread": str(SPAWN_MAXREAD),   # see LAVA_SEARCH_WINDOW
        # U-Boot's last words before the kernel ("Starting kernel" since about 2008)
        "uboot_final_message": re.sub(r"([.*+?^$()\[\]{}|\\])", r"\\\1",
                                      ub.get("kernel_message", "Starting kernel")),
    }
    lines = [GENERATED.format(name=board["name"]),
             f"{{# LAVA device type {device_type_name(board)}: {board['description']} #}}\n",
             "{% extends 'base-uboot.jinja2' %}\n"]
    for key, value in sets.items():
        lines.append(f"{{% set {key} = {key}|default({json.dumps(value)}) %}}\n")
    # the board's own load and boot commands (base-uboot would also load a DTB)
    lines.append(f"{{% set uboot_tftp_commands = {json.dumps(tftp)} %}}\n")
    lines.append(f"{{% set uboot_bootx_cmd = {json.dumps(_uboot_placeholders(ub['boot_command']))} %}}\n")
    if ub["dialect"] == "old":   # U-Boot 1.x of the real boards: no initrd_high/fdt_high
        lines.append("{% set base_high_limits = false %}\n")
    return "".join(lines)


def power_commands(board: dict) -> dict:
    """Shell commands that switch the board's outlet, speaking the protocol of the
    labgrid NetworkPowerPort model of the facts (labgrid/driver/power/<model>.py)."""
    pw = board["power"]
    model, host, index = pw["model"], pw["host"], pw["index"]
    if model == "rest":
        url = host.format(index=index)
        cmd = {v: f"curl -fsS -X PUT -d {v} {url}" for v in (0, 1)}
    elif model == "simplerest":
        cmd = {v: f"curl -fsS {host.format(index=index, value=v)}" for v in (0, 1)}
    elif model == "gude":
        cmd = {v: f"curl -fsS 'http://{host}:80/switch.html?cmd=1&p={index}&s={v}'" for v in (0, 1)}
    else:
        raise FactsError(f"{board['_path']}: power.model {model!r} has no LAVA power command "
                         f"(known: rest, simplerest, gude; add one in boardlab/lava.py)")
    return {"power_on_command": cmd[1], "power_off_command": cmd[0],
            "hard_reset_command": [cmd[0], "sleep 1", cmd[1]]}


def connection_command(board: dict) -> str:
    return f"telnet {serial_host(board)} {board['console']['ser2net_port']}"


def device_dictionary(board: dict) -> str:
    net = board["network"]
    sets = {"connection_command": connection_command(board), **power_commands(board),
            "uboot_ipaddr_cmd": f"setenv ipaddr {net['ip']}; setenv netmask {net['netmask']}"
            if board["uboot"]["dialect"] == "hush" else f"setenv ipaddr {net['ip']}"}
    lines = [GENERATED.format(name=board["name"]),
             f"{{% extends '{device_type_name(board)}.jinja2' %}}\n"]
    lines += [f"{{% set {k} = {json.dumps(v)} %}}\n" for k, v in sets.items()]
    return "".join(lines)


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        files[DEVICE_TYPES_DIR / f"{device_type_name(board)}.jinja2"] = device_type_template(board)
        files[DEVICES_DIR / f"{board['name']}.jinja2"] = device_dictionary(board)
    return files


def render_device(board: dict, templates: Path = LAVA_DEVICE_TYPES) -> str:
    """The device configuration lava-run takes: the device dictionary rendered over the
    device type and LAVA's base templates, as lava-server would."""
    if not (templates / "base-uboot.jinja2").exists():
        raise LavaError(f"LAVA's device-type templates are not in {templates} "
                        f"(package lava-server; bash scripts/setup-host.sh installs it)")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(
        [str(DEVICES_DIR), str(DEVICE_TYPES_DIR), str(templates)]),
        trim_blocks=True, autoescape=False)
    return env.get_template(f"{board['name']}.jinja2").render()


# ---- jobs ---------------------------------------------------------------------------------

def normalise_suites(suites) -> list[str]:
    out = []
    for s in suites:
        s = SUITE_ALIASES.get(s, s)
        if s not in SUITES:
            raise LavaError(f"unknown suite {s!r} (known: {', '.join(SUITES)})")
        if s not in out:
            out.append(s)
    return out


def gate_parameter(board: dict, kernel: str, suite: str, root: Path = bl.KERNELS_DIR,
                   measured_on: str | None = None) -> str:
    """'NAME:DIRECTION:LIMIT ...' of a suite's stored baselines (empty if none yet).
    A host-bound metric (clocks.host_bound) is in it only when its baseline was measured
    on measured_on, the host the job will run on; LAVA then reports it as skip."""
    suite = RESULT_SUITE[suite]
    prefix = suite + "."
    out = []
    for k, b in sorted(bl.load(kernel, board["name"], root, HARNESS).items()):
        if not k.startswith(prefix):
            continue
        clock = clocks.metric_clock(suite, k[len(prefix):], b.unit, board)
        if b.clock() not in (None, clock) or (clocks.host_bound(clock, board) and (
                measured_on is None or b.host_id() != measured_on)):
            continue
        out.append(f"{k[len(prefix):]}:{b.direction}:{round(b.limit(), 6):g}")
    return " ".join(out)


def testdefs_tarball(dest: Path) -> Path:
    """jobs/testdefs as the tarball a `from: url` test definition names."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(TESTDEFS_DIR.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                tar.add(p, arcname=str(p.relative_to(TESTDEFS_DIR)))
    dest.write_bytes(buf.getvalue())
    return dest


def _image_url(board: dict, name: str, image_base: str | None) -> str:
    if image_base:
        return image_base.rstrip("/") + "/" + name
    return (Path(board["images"]["dir"]) / name).as_uri()


def render_job(board: dict, kernel: str | None = None, suites=DEFAULT_SUITES, root: str | None = None,
               *, quick: bool = False, jitter_duration: int | None = None,
               testdefs_url: str, image_base: str | None = None,
               gate_overrides: dict | None = None, baselines_root: Path = bl.KERNELS_DIR,
               measured_on: str | None = None) -> dict:
    """A LAVA job definition (as data) for a board, a kernel, a root mode and suites.
    measured_on: the host id (clocks.this_host) of the machine that will run the job, when
    known (lava-run here); only then do host-bound metrics get a limit in the job."""
    kernel = kernel or board["images"]["default_kernel"]
    root = root or board["root"]["default"]
    suites = normalise_suites(suites)
    kinfo = board["images"]["kernels"].get(kernel)
    if kinfo is None:
        raise LavaError(f"{board['_path']}: no kernel {kernel!r} in images.kernels "
                        f"(has: {', '.join(board['images']['kernels'])})")
    if root not in board["root"]["bootargs"]:
        raise LavaError(f"{board['_path']}: no root mode {root!r} in root.bootargs "
                        f"(has: {', '.join(board['root']['bootargs'])})")
    if "memory" in suites and root != "ramdisk":
        raise LavaError("suite memory is measured on the ramdisk root, as in the study "
                        f"(board {board['name']} was asked for root {root})")
    t = board["timeouts"]
    deploy = {"to": "tftp", "os": "oe", "timeout": {"minutes": 5},
              "kernel": {"url": _image_url(board, kinfo["uimage"], image_base), "type": "uimage"}}
    if root == "ramdisk":
        deploy["ramdisk"] = {"url": _image_url(board, board["images"]["ramdisk"], image_base),
                             "header": "u-boot"}
    else:
        deploy["nfsrootfs"] = {"url": _image_url(board, NFSROOT_TARBALL, image_base),
                               "compression": "xz"}
        if kinfo.get("nfs_loader"):   # NIC and NFS client are modules: the loader ramdisk
            deploy["ramdisk"] = {"url": _image_url(board, board["images"]["ramdisk"], image_base),
                                 "header": "u-boot"}
    # One boot attempt: power-on to U-Boot, two loads, load command to shell. LAVA tries
    # BOOT_ATTEMPTS times; each attempt is capped on its own (uboot-commands) so a stalled
    # first attempt leaves the second its whole time, and the wait for the kernel and the
    # login (auto-login-action) by the board's boot time.
    attempt = int(t["uboot_s"] + 2 * t["load_s"] + t["boot_s"])
    boot = {"method": "u-boot", "commands": root,   # bootm: from the uimage kernel type
            "prompts": [board["shell"]["prompt"]],
            "auto_login": {"login_prompt": board["shell"]["login_prompt"].strip(),
                           "username": board["shell"]["username"]},
            "failure_retry": BOOT_ATTEMPTS,
            "timeout": {"seconds": BOOT_ATTEMPTS * (attempt + RETRY_SLACK_S)},
            "timeouts": {"uboot-commands": {"seconds": attempt},
                         "auto-login-action": {"seconds": int(t["boot_s"])}}}
    params = {"memory": {}, "lmbench": {"QUICK": "true" if quick else "false",
                                        "SMALL": "true" if board["ram_mb"] < SMALL_BOARD_MB else "false"},
              "jitter": {"DURATION": str(jitter_duration or (10 if quick else 60))}}
    minutes = {"memory": 5, "lmbench": 10 if quick else 40,
               "jitter": 2 + 3 * int(params["jitter"]["DURATION"]) // 60}
    definitions, test_minutes = [], 0
    for s in suites:
        if SUITES[s] is None:
            continue
        gate = (gate_overrides or {}).get(s)
        p = dict(params[s], GATE=gate if gate is not None
                 else gate_parameter(board, kernel, s, baselines_root, measured_on))
        definitions.append({"repository": testdefs_url, "from": "url", "compression": "gz",
                            "path": SUITES[s],
                            "name": s, "parameters": p})
        test_minutes += minutes[s]
    actions = [{"deploy": deploy}, {"boot": boot}]
    if definitions:
        actions.append({"test": {"timeout": {"minutes": test_minutes}, "definitions": definitions}})
    job = {
        "device_type": device_type_name(board),
        "job_name": f"boardlab {board['name']} {kernel} {root}: {' '.join(suites)}",
        "timeouts": {"job": {"minutes": deploy["timeout"]["minutes"] + test_minutes + 2
                             + -(-boot["timeout"]["seconds"] // 60)},
                     "action": {"minutes": 5}, "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
        "metadata": {"boardlab.board": board["name"], "boardlab.kernel": kernel,
                     "boardlab.root": root, "boardlab.suites": " ".join(suites),
                     "boardlab.quick": str(quick).lower()},
        "actions": actions,
    }
    console_dev = kinfo.get("console")
    if console_dev:   # Linux 2.4 names the same UART differently
        job["context"] = {"console_device": console_dev}
    return job


def dump_job(job: dict) -> str:
    return yaml.safe_dump(job, sort_keys=False, width=200)


# ---- LAVA's own schema validation ------------------------------------------------------

_VALIDATE = r"""
import json, sys, yaml
from lava_common.schemas import validate as validate_job
from lava_common.schemas.device import validate as validate_device
errors = {}
for kind, path in json.loads(sys.argv[1]):
    try:
        data = yaml.safe_load(open(path))
        (validate_device if kind == "device" else validate_job)(data)
    except Exception as exc:
        errors[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(errors))
"""


def validate(files: list[tuple[str, Path]]) -> dict[str, str]:
    """Validate rendered device configs ('device') and jobs ('job') with LAVA's own
    schemas (lava_common, Debian's python3). Returns {path: error} of the invalid."""
    if not Path(SYSTEM_PYTHON).exists():
        raise LavaError(f"{SYSTEM_PYTHON} not found (LAVA's schemas need Debian's python3)")
    arg = json.dumps([(k, str(p)) for k, p in files])
    r = subprocess.run([SYSTEM_PYTHON, "-c", _VALIDATE, arg], capture_output=True, text=True)
    if r.returncode != 0:
        raise LavaError("LAVA's schema validation could not run (is lava-dispatcher installed?):\n"
                        + r.stderr[-2000:])
    return json.loads(r.stdout)


# ---- the job log -> results.json -------------------------------------------------------

def read_log(text: str) -> list[dict]:
    """LAVA's job log, one entry a line: `{"dt": ..., "lvl": ..., "msg": ...}` as lava-run
    writes it, or as a YAML list item (`- {...}`) as the server gives it back."""
    entries = []
    for line in text.splitlines():
        line = line[2:] if line.startswith("- {") else line
        if not line.startswith("{"):
            continue
        try:
            item = yaml.safe_load(line)
        except yaml.YAMLError:
            continue   # a half-written last line of a running job
        if isinstance(item, dict) and "lvl" in item:
            entries.append(item)
    return entries


def _t(entry) -> float:
    return dt.datetime.fromisoformat(str(entry["dt"])).timestamp()


def console_lines(entries, load_verb: str) -> list:
    """LAVA's log as timed console lines, the origin marked where U-Boot took the
    kernel's load command: its echo (the line completes when U-Boot gets the newline).
    LAVA logs a command before it sends it, and pexpect waits 50 ms before each of
    the command's two writes: the 'input' entry itself is about 100 ms early. Without
    an echo, the input entry is the mark."""
    command, sent_at, echo_at, rx = None, None, None, []
    for e in entries:
        lvl, msg = e.get("lvl"), e.get("msg")
        if not isinstance(msg, str):
            continue
        if lvl == "input" and command is None and msg.strip().startswith(load_verb):
            command, sent_at = msg.strip(), _t(e)
        elif lvl in ("target", "feedback") and command is not None:
            if echo_at is None and msg.rstrip().endswith(command):
                echo_at = _t(e)
            else:
                rx.append(console.TimedLine(_t(e), msg, console.RX))
    if command is None:
        return []
    mark = sent_at if echo_at is None else echo_at
    return [console.TimedLine(mark, "load", console.MARK)] + [ln for ln in rx if ln.t >= mark]


def _is_retry(entry) -> bool:
    return entry.get("lvl") == "warning" and str(entry.get("msg")).startswith("Retrying: ")


def last_attempt(entries) -> list:
    """The log from LAVA's last try of a retried action on (failure_retry): what counts."""
    starts = [i for i, e in enumerate(entries) if _is_retry(e)]
    return entries[starts[-1] + 1:] if starts else entries


def retried_attempts(entries) -> list[str]:
    """LAVA's error for each attempt it retried ('uboot-action failed: 1 of 2 attempts...')."""
    out, last_error = [], None
    for e in entries:
        if e.get("lvl") == "error" and isinstance(e.get("msg"), str):
            last_error = e["msg"]
        elif _is_retry(e):
            out.append(last_error or str(e["msg"]))
    return out


def boot_milestones(entries, board: dict) -> dict:
    """Boot milestones of the boot that counted: the last attempt, if LAVA retried."""
    patterns = console.milestone_patterns(board["shell"]["login_prompt"], board["shell"]["prompt"])
    verb = board["uboot"]["load_command"].split()[0]
    found = console.find_milestones(console_lines(last_attempt(entries), verb), patterns)
    return {k: v for k, v in found.items() if k != "starting_kernel"}


def test_cases(entries) -> list[dict]:
    """The lvl=results entries of test definitions (not LAVA's own 'lava' suite)."""
    out = []
    for e in entries:
        msg = e.get("msg")
        if e.get("lvl") == "results" and isinstance(msg, dict) and msg.get("definition") != "lava":
            out.append(msg)
    return out


def job_failure(entries) -> str | None:
    """What went wrong in the job, if anything: a failed job result, or a LAVA action or
    test run that failed (a test definition that died before its end), with LAVA's errors,
    what it last waited for and the console's last lines. A boot attempt that LAVA retried
    is not a failure when a later one succeeded (retried_attempts says what it was)."""
    entries = last_attempt(entries)
    errors = [e["msg"] for e in entries if e.get("lvl") == "error" and isinstance(e.get("msg"), str)]
    failed = []
    for e in entries:
        msg = e.get("msg")
        if e.get("lvl") == "results" and isinstance(msg, dict) and msg.get("definition") == "lava" \
                and msg.get("result") not in ("pass", "skip"):
            failed.append(f"{msg.get('case')} {msg.get('result')}")
    if not failed:
        return None
    problem = ", ".join(failed) + (f" ({'; '.join(errors)})" if errors else "")
    waited = last_wait(entries)
    console = [str(e["msg"]) for e in entries if e.get("lvl") in ("target", "feedback")
               and str(e.get("msg")).strip()][-6:]
    return (problem + (f"; last waited for: {waited}" if waited else "")
            + ("; the console's last lines:\n  | " + "\n  | ".join(console) if console else ""))


WAIT_RE = re.compile(r"^(?P<action>[\w-]+): Wait for prompt \[(?P<prompts>.*)\] \(timeout (?P<timeout>[\d:]+)\)$")


def last_wait(entries) -> str | None:
    """What LAVA last waited for on the console (the action, its first prompt, the
    timeout): where a timed-out job was stuck."""
    for e in reversed(entries):
        m = WAIT_RE.match(str(e.get("msg"))) if e.get("lvl") == "debug" else None
        if m:
            prompts = re.findall(r"'((?:[^'\\]|\\.)*)'", m["prompts"])
            first = prompts[0].replace("\\\\", "\\") if prompts else m["prompts"]
            more = f" (or {len(prompts) - 1} error messages)" if len(prompts) > 1 else ""
            return f"{m['action']} '{first}'{more} from {e.get('dt', '?')}, timeout {m['timeout']}"
    return None


def results_from_log(entries, board: dict, kernel: str, run_dir: Path, job_ref: str,
                     baselines_root: Path = bl.KERNELS_DIR, host: dict | None = None,
                     qemu_clock: str | None = None) -> RunResults:
    """Write results.json for a LAVA job log: boot-time milestones timed from the log,
    the test cases' measurements as the pytest suites name them. Verdicts are the
    gate's (the same Baseline.judge as pytest), beside LAVA's own result. host: the
    machine the job ran on (default this one, as for lava-run here); qemu_clock: a virtual
    board's clock during the job (default: its facts)."""
    res = RunResults(run_dir, baselines_root, host, harness=HARNESS)
    res.meta.update({"source": "lava", "lava_job": job_ref, "board": board["name"],
                     "kernel": kernel})
    retried = retried_attempts(entries)
    if retried:   # kept beside the results: a lab whose boots need retries wants a look
        res.meta["lava_retried"] = retried
    for name, value in boot_milestones(entries, board).items():
        res.record(board["name"], kernel, "boot_time", name, value, "s", "lower",
                   [value], test=f"lava:{job_ref}:boot", qemu_clock=qemu_clock)
    for case in test_cases(entries):
        if case.get("measurement") in (None, "None", ""):
            continue
        definition = re.sub(r"^\d+_", "", str(case["definition"]))
        suite = RESULT_SUITE.get(definition, definition)
        res.record(board["name"], kernel, suite, case["case"], float(case["measurement"]),
                   case.get("units", ""), "lower", test=f"lava:{job_ref}:{case['definition']}"
                   f" result={case.get('result')}", qemu_clock=qemu_clock)
    res.save()
    return res


# ---- lava-run on this host ----------------------------------------------------------------

def dispatcher_config(lab: dict) -> dict:
    """lava-run's dispatcher config: the lab host's address on the LAN is the TFTP server
    ({SERVER_IP} in the U-Boot commands)."""
    return {"dispatcher_ip": lab["address"].split("/")[0]}


def check_tftp_root(lab: dict):
    """LAVA stages its files under TFTP_DIRECTORY of /etc/default/tftpd-hpa; the lab's
    tftpd must serve that directory."""
    path = Path("/etc/default/tftpd-hpa")
    if not path.exists():
        raise LavaError(f"{path} is missing: LAVA reads its TFTP directory from it (package tftpd-hpa)")
    m = re.search(r'^TFTP_DIRECTORY="?([^"\n]+)"?', path.read_text(), re.M)
    lava_dir = os.path.realpath(m.group(1)) if m else None
    if lava_dir != os.path.realpath(lab["tftp_root"]):
        raise LavaError(f"LAVA stages TFTP files in {lava_dir} ({path}), but lab host "
                        f"{lab['name']} serves {lab['tftp_root']} (tftp_root in "
                        f"{lab['_path']}): make them the same directory")


def check_nfs_export(lab: dict, job: dict):
    """A job with an NFS root boots from LAVA's own directory: the lab host must export it."""
    nfs = any("nfsrootfs" in a.get("deploy", {}) for a in job.get("actions", []))
    if nfs and not lab.get("lava_worker", True):
        raise LavaError(f"the job deploys an NFS root, which LAVA extracts under "
                        f"{labhost.LAVA_NFS_DIR}, but lab host {lab['name']} does not export it "
                        f"(lava_worker: false in {lab['_path']})")


def check_board_reachable(board: dict, timeout: float = 2.0):
    """Before lava-run powers anything: the board's console port answers (ser2net on its
    lab host). A clear error here beats LAVA's connection timeout minutes later."""
    import socket
    host = serial_host(board)
    port = board["console"]["ser2net_port"]
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        hint = " (the virtual lab: boardlab vlab up)" if board["lab_host"] == "vlab" else ""
        raise LavaError(f"board {board['name']}: its console {host}:{port} (console.ser2net_port "
                        f"in {board['_path']}) does not answer: {e}{hint}") from None


def prepare_run(board: dict, job: dict, work: Path, lab: dict) -> dict[str, Path]:
    work.mkdir(parents=True, exist_ok=True)
    files = {"job": work / "job.yaml", "device": work / "device.yaml",
             "dispatcher": work / "dispatcher.yaml"}
    files["job"].write_text(dump_job(job))
    files["device"].write_text(render_device(board))
    files["dispatcher"].write_text(yaml.safe_dump(dispatcher_config(lab)))
    return files


def _summary(entry) -> str | None:
    """A line for the terminal: actions starting, board output, results, errors."""
    lvl, msg = entry.get("lvl"), entry.get("msg")
    if lvl == "results" and isinstance(msg, dict):
        m = f" {msg.get('measurement')} {msg.get('units', '')}" if msg.get("measurement") not in (None, "") else ""
        return f"  result {msg.get('definition')}/{msg.get('case')}: {msg.get('result')}{m}"
    if lvl in ("error", "exception"):
        return f"  ERROR {msg}"
    if _is_retry(entry):
        return f"  WARNING {msg}"
    if lvl == "info" and isinstance(msg, str) and re.match(r"^[a-z0-9-]+ (?:timed out|duration)", msg):
        return f"  {msg}"
    if lvl == "info" and isinstance(msg, str) and msg.startswith("start: "):
        return f"  {msg}" if msg.count(".") <= 1 else None
    return None


def lava_run(files: dict[str, Path], work: Path, job_id: int, echo=print) -> tuple[int, Path]:
    """Run a job with lava-run; its log (YAML lines, stderr) goes to work/job.log while a
    summary goes to the terminal."""
    log = work / "job.log"
    cmd = ["lava-run", "--job-id", str(job_id), "--output-dir", str(work / "output"),
           "--device", str(files["device"]), "--dispatcher", str(files["dispatcher"]),
           str(files["job"])]
    echo(f"lava-run job {job_id}: {files['job']} (log: {log})")
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            for line in proc.stderr:
                out.write(line)
                out.flush()
                for e in read_log(line):
                    s = _summary(e)
                    if s:
                        echo(s)
            rc = proc.wait()
        except BaseException:
            proc.terminate()   # our lava-run, by PID: it powers the board off on SIGTERM
            proc.wait(timeout=60)
            raise
    return rc, log


# ---- a LAVA server: lavacli ---------------------------------------------------------------

def lavacli(identity: str | None, *args, check=True) -> str:
    cmd = ["lavacli"] + (["-i", identity] if identity else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise LavaError(f"{' '.join(shlex.quote(c) for c in cmd)} failed ({r.returncode}): "
                        f"{(r.stderr or r.stdout).strip()[-1500:]}")
    return r.stdout


def load_schedule(path: Path = SCHEDULE) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise LavaError(f"{path}: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise LavaError(f"{path}: needs a 'jobs' mapping of name -> {{board, kernel, suites, when}}")
    for name, spec in data["jobs"].items():
        for key in ("board", "when"):
            if key not in (spec or {}):
                raise LavaError(f"{path}: jobs.{name}.{key} is missing")
        if spec["when"] not in data.get("when", {}):
            raise LavaError(f"{path}: jobs.{name}.when is {spec['when']!r}; defined: "
                            f"{', '.join(data.get('when', {}))}")
    return data


def schedule_jobs(schedule: dict, when: str | None = None) -> dict[str, dict]:
    return {n: s for n, s in schedule["jobs"].items() if when is None or s["when"] == when}


def cron_lines(schedule: dict, project: Path = PROJECT_ROOT) -> str:
    """/etc/cron.d lines that submit each group of scheduled jobs."""
    out = ["# boardlab: scheduled LAVA jobs (generated by `boardlab lava schedule --cron`)",
           "SHELL=/bin/sh"]
    for when, spec in schedule["when"].items():
        out.append(f"{spec['cron']} root cd {project} && .venv/bin/boardlab lava submit "
                   f"--when {when} >> /var/log/boardlab-lava-submit.log 2>&1")
    return "\n".join(out) + "\n"


def systemd_units(schedule: dict, project: Path = PROJECT_ROOT) -> dict[str, str]:
    units = {}
    for when, spec in schedule["when"].items():
        units[f"boardlab-lava-{when}.service"] = (
            f"[Unit]\nDescription=boardlab: submit the {when} LAVA jobs\n\n[Service]\nType=oneshot\n"
            f"WorkingDirectory={project}\nExecStart={project}/.venv/bin/boardlab lava submit --when {when}\n")
        units[f"boardlab-lava-{when}.timer"] = (
            f"[Unit]\nDescription=boardlab: {when} LAVA jobs\n\n[Timer]\nOnCalendar={spec['on_calendar']}\n"
            f"Persistent=true\n\n[Install]\nWantedBy=timers.target\n")
    return units


def wait_for_job(identity: str | None, job_id: str, timeout: float, echo=print, poll=5.0,
                 check=None) -> str:
    """Poll a job until it finishes; check() may raise when the server cannot make progress."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        if check:
            check()
        info = yaml.safe_load(lavacli(identity, "jobs", "show", str(job_id), "--yaml"))
        state, health = info.get("state"), info.get("health")
        if (state, health) != last:
            echo(f"job {job_id}: {state} ({health})")
            last = (state, health)
        if state == "Finished":
            return health
        if time.monotonic() > deadline:
            raise LavaError(f"job {job_id} still {state} after {timeout:.0f} s")
        time.sleep(poll)


def board_of_job(job: dict) -> tuple[dict, str]:
    meta = job.get("metadata") or {}
    name = meta.get("boardlab.board")
    if not name:
        dtype = str(job.get("device_type", ""))
        name = dtype[len("boardlab-"):] if dtype.startswith("boardlab-") else None
    if not name:
        raise LavaError("the job names no boardlab board (metadata boardlab.board, device_type boardlab-*)")
    board = load_board(name)
    return board, meta.get("boardlab.kernel") or board["images"]["default_kernel"]


def lab_of(board: dict) -> dict:
    return load_lab_host(board["lab_host"])
