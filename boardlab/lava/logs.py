"""A LAVA job log to results.json. Boot time is measured from LAVA's own log: every
console line and every command sent is logged with its host time, and the study's
origin, the kernel's load command, is invisible to the board. results_from_log writes
the results.json the pytest runs write (same suite and metric names, same units)."""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import yaml

from boardlab.boot.bootplan import milestone_patterns
from boardlab.errors import KERNEL, LAB, Fault
from boardlab.facts.board import Board
from boardlab.measure import baselines as bl
from boardlab.judge import outcomes
from boardlab.judge.results import RunResults
from boardlab.lava.suites import HARNESS
from boardlab.measure import catalogue, console, tagged
from boardlab import yamltext

def read_log(text: str) -> list[dict]:
    """LAVA's job log, one entry a line: `{"dt": ..., "lvl": ..., "msg": ...}` as lava-run
    writes it, or as a YAML list item (`- {...}`) as the server gives it back."""
    entries = []
    for line in text.splitlines():
        line = line[2:] if line.startswith("- {") else line
        if not line.startswith("{"):
            continue
        try:
            item = yamltext.load(line)
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
    the command's two writes: the 'input' entry itself is about 100 ms early. The echo
    comes twice: once after the prompt ('=> tftpboot ...'), logged as LAVA's wait for
    the prompt reads it, and once more when the line completes; the last one before
    other output is the mark (at 9600 baud the first was 21 ms early: a scripted
    Sandpoint's milestones read 21 ms after its console wrote them, 2-4 ms on the last).
    Without an echo, the input entry is the mark. A prompt without a line end (`login: `) is
    logged only when the line completes, after LAVA has answered it (~100 ms later); its
    time is LAVA's 'Matched prompt' entry, when it arrived."""
    command, sent_at, echo_at, rx = None, None, None, []
    matched_at = None   # a prompt matched, its line not logged yet
    for e in entries:
        lvl, msg = e.get("lvl"), e.get("msg")
        if not isinstance(msg, str):
            continue
        if lvl == "debug" and msg.startswith("Matched prompt") and matched_at is None:
            matched_at = _t(e)
        elif lvl == "input" and command is None and msg.strip().startswith(load_verb):
            command, sent_at = msg.strip(), _t(e)
        elif lvl in ("target", "feedback"):
            t, matched_at = (matched_at or _t(e)), None
            if command is None:
                continue
            if not rx and msg.rstrip().endswith(command):
                echo_at = t
            else:
                rx.append(console.TimedLine(t, msg, console.RX))
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


def login_prompt(board: Board) -> str:
    """What LAVA's auto-login waits for: the board's login prompt without its trailing
    blank. LAVA answers the moment it sees it, so the echoed user name can come before
    getty's blank and the log reads 'qemu-ppc login:root' (a real CI log)."""
    return board.shell.login_prompt.strip()


def boot_milestones(entries, board: Board) -> dict:
    """Boot milestones of the boot that counted: the last attempt, if LAVA retried. The
    login prompt is the one LAVA matched."""
    patterns = tuple((name, login_prompt(board) if name == "login" else pattern)
                     for name, pattern in milestone_patterns(board))
    verb = board.uboot.load_command.split()[0]
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


def target_lines(entries) -> list[str]:
    """What the board printed in the job's test shell, line by line (lvl target), as it
    printed it: LAVA's dispatcher writes each `"` of the board's as `\\"` (ShellLogger:
    "escape double quotes for YAML syntax") and keeps the backslash in the log, so a
    header such as '"size=0k ovr=..' arrived as '\\"size=0k' and a parser missed its
    figures. (A board's own backslash before a quote is not told apart.)"""
    return [e["msg"].replace('\\"', '"') for e in entries
            if e.get("lvl") == "target" and isinstance(e.get("msg"), str)]


def raw_figures(entries, settings: dict | None = None) -> tuple[dict, dict]:
    """({suite: {catalogue key: value}}, {suite: why it gave none}) of the families' raw,
    tagged output in the job's log, each read by its family's own parser
    (measure.tagged); settings: {suite: how it was measured} (whose programs)."""
    read, failed = tagged.all_figures(target_lines(entries),
                                      lambda family: ((settings or {}).get(family) or {}).get("tools"))
    # those the catalogue says a LAVA job measures as the suite does (not free's buffers,
    # which LAVA's overlay fills)
    got = {family: {k: v for k, v in figures.items() if k in catalogue.METRICS and catalogue.METRICS[k].lava}
           for family, figures in read.items()}
    return got, failed


def results_from_log(entries, board: Board, kernel: str, run_dir: Path, job_ref: str,
                     baselines_root: Path = bl.KERNELS_DIR, host: dict | None = None,
                     qemu_clock: str | None = None, settings: dict | None = None,
                     log_path: Path | None = None) -> RunResults:
    """Write results.json for a LAVA job log: boot-time milestones timed from the log,
    the figures of the families' raw output read by their own parsers (measure.tagged),
    as the pytest suites name them, judged by the one judge as a pytest run's are. host: the
    machine the job ran on (default this one, as for lava-run here); qemu_clock: a virtual
    board's clock during the job (default: its facts); settings: {suite: how it was
    measured} (jobs.settings_of the job definition); log_path: the log the entries are
    from, named by an error."""
    measured, unmeasured = raw_figures(entries, settings)   # before results.json is written
    for figures in measured.values():
        for key, value in figures.items():
            catalogue.usable(key, [value], f"{log_path or job_ref}: {key}")
    res = RunResults(run_dir, baselines_root, host, harness=HARNESS)
    res.meta.update({"source": "lava", "lava_job": job_ref, "board": board.name,
                     "kernel": kernel})
    retried = retried_attempts(entries)
    if retried:   # kept beside the results: a lab whose boots need retries wants a look
        res.meta["lava_retried"] = retried
    milestones = boot_milestones(entries, board)
    for test, (result, why) in job_outcomes(entries, milestones).items():   # kernel/boot, lava/job
        outcomes.record(res, board.name, kernel, test, result, why)
    for name, value in milestones.items():
        res.record(board.name, kernel, "boot_time", name, value, samples=[value],
                   test=f"lava:{job_ref}:boot", qemu_clock=qemu_clock)
    if unmeasured:   # said beside the results; its figures are missing where the job expected them
        res.meta["lava_unmeasured"] = unmeasured
    for suite, figures in measured.items():
        for key, value in figures.items():
            res.record(board.name, kernel, suite, key.split(".", 1)[1], value, samples=[value],
                       test=f"lava:{job_ref}:{suite}", qemu_clock=qemu_clock, settings=(settings or {}).get(suite))
    res.save()
    return res


# LAVA's error types (lava_common.exceptions) that are the lab's wherever they come: its
# InfrastructureError (the device, its power and serial), ConfigurationError, LAVABug, a cancel
LAB_ERRORS = ("Infrastructure", "Configuration", "Bug", "Canceled", "MultinodeTimeout")


def lava_fault(error_type: str | None, milestones: dict, why: str) -> Fault:
    """Who broke a LAVA job that failed before its shell. JobError (the job's input, by its
    definition) and TestError are raised for a boot action's timeout too ('auto-login-action
    timed out'): there, what the kernel printed says whose it was."""
    if error_type in LAB_ERRORS:
        return Fault(LAB, "lava", why)
    if "linux_version" not in milestones:   # nothing from the kernel: power, console, U-Boot, TFTP
        return Fault(LAB, "uboot", why)
    if "login" not in milestones:           # U-Boot handed over: KernelBootError's rule
        return Fault(KERNEL, "", why)
    return Fault(LAB, "lava", why)          # at its login prompt, which LAVA did not answer


def job_outcomes(entries, milestones: dict) -> dict:
    """What happened in the job, as judge.outcomes says it: {test: (result, why)}.
    kernel/boot: pass when the board came to its shell; else, in a job that failed, as
    lava_fault says (fail: the kernel's, error: the lab's). lava/job, once the board
    booted: pass, or error when the job did not complete (its tests' answer is unknown).
    A job whose log has no end yet (running) says no more than its boot."""
    job = next((e["msg"] for e in reversed(entries) if e.get("lvl") == "results"
                and isinstance(e.get("msg"), dict) and e["msg"].get("definition") == "lava"
                and e["msg"].get("case") == "job"), None)
    failed = job is not None and job.get("result") != "pass"
    why = outcomes.first_line(job_failure(entries) or job.get("error_msg") or "") if failed else ""
    if "shell" in milestones:
        said = {outcomes.BOOT: (outcomes.PASS, "")}
        if job is not None:
            said["lava/job"] = (outcomes.ERROR, why) if failed else (outcomes.PASS, "")
        return said
    if not failed:
        return {}
    return {outcomes.BOOT: outcomes.of_fault(lava_fault(job.get("error_type"), milestones, why))}
