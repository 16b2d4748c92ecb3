"""lmbench's latencies and bandwidths, as the study measured them: Debian's lmbench 3.0-a9
where Debian ships it, the project's programs (target/measure/) elsewhere (record.STUDY_TOOLS).
The runs are jobs/testdefs/lmbench/runs.sh's groups, for the suites and LAVA alike; what
they print is read by lmbench_output.

Floor 3 %: the figures vary by 0.04 % (median) on the deterministic clock, and the study's
smallest lmbench difference was +55 %. Loopback TCP (bw_tcp) has a second mode (1 run in 10
reads 59 against 42 MB/s on armmp), connect follows it, and lat_ctx has single runs 3-15 %
off: those are decided by a rank test."""
from __future__ import annotations

from boardlab.measure import target_load
from boardlab.measure.boardrun import failed_run
import boardlab.measure.families.lmbench_output as output
from boardlab.measure.families.record import GUEST, STUDY_TOOLS, Family, Options
from boardlab.measure.metric import MetricSpec

NAME = output.NAME
RUNS = f"{NAME}/runs.sh"   # the board-side runs, under jobs/testdefs/

# loopback TCP: a run in 10 lands in a second mode
NOISY = {"lat_connect_us", "bw_tcp_mb_s"}
# lat_ctx: a ring of processes passing a token; on the deterministic clock its figures
# mostly repeat to 0.4 %, but single runs jump: armmp 16k/2p 70.44 against 68.23-68.49 us
# (+3 %, a CI run of 2026-11-23), rt-armmp 0k/16p 111.62 against 96.5-96.7 us (+15 %).
# Likely where the timer tick falls in the ring, which the harness's input timing moves.
# Judged from samples by the rank test, never one run against the floor.
NOISY |= {f"lat_ctx_{s}k_{p}p_us" for s in (0, 1, 16) for p in (2, 4, 8, 16)}
_LATENCIES = ["lat_syscall_null_us", "lat_proc_fork_us", "lat_pipe_us", "lat_unix_us", "lat_udp_us",
              "lat_tcp_us", "lat_connect_us", "lat_select_100fd_us", "lat_pagefault_us", "lat_mmap_1m_us"]
_LATENCIES += [f"lat_ctx_{s}k_{p}p_us" for s in (0, 1, 16) for p in (2, 4, 8, 16)]
METRICS = tuple(
    [MetricSpec(f"{NAME}.{n}", "us", "lower", GUEST, 0.03, exact=n not in NOISY,
                what=n[:-3].replace("_", " ")) for n in _LATENCIES]
    + [MetricSpec(f"{NAME}.lat_fs_{op}_0k_per_s", "1/s", "higher", GUEST, 0.03,
                  what=f"lat_fs: 0k files {op}d per second") for op in ("create", "delete")]
    + [MetricSpec(f"{NAME}.{n}", "MB/s", "higher", GUEST, 0.03, exact=n not in NOISY,
                  what=n[:-5].replace("_", " "))
       for n in ("bw_pipe_mb_s", "bw_unix_mb_s", "bw_tcp_mb_s", "bw_file_reread_mb_s")])

# Debian's programs the root carries: lmbench's benchmarks from its package's bin directory
IMAGE = ((NAME, f"usr/lib/{NAME}/bin/armv7l-linux-gnu",
          r"^(lat_\w+|bw_\w+|lmdd|enough|mhz|line|tlb|cache|stream|par_\w+|memsize|msleep|hello)$",
          f"usr/lib/{NAME}/bin"),)

# quick mode: shorter timing loops, 1-5 s a program instead of 30 s under emulation
# (lmbench's own defaults otherwise)
QUICK = {"ENOUGH": "100000", "TIMING_O": "0", "LOOP_O": "0"}


def quick_env(quick: bool = True) -> str:
    """The environment prefix of a command of its programs in quick mode (QUICK), or ''."""
    return "".join(f"{k}={v} " for k, v in QUICK.items()) if quick else ""


def quick_line(cmd: str, quick: bool = True) -> str:
    """A shell line of its commands, every one of them in the mode asked for: the
    variables exported in a subshell (a prefix would reach only the line's first command:
    a served program's client, `bw_tcp 127.0.0.1` after `bw_tcp -s;`, then ran with
    lmbench's own timing, and read 36-43 MB/s where the quick client reads 41.6-42.6),
    and left behind in no later command. As runs.sh exports them for the suite and LAVA;
    tests/data/capture.py's lines take them from here."""
    return f"(export {quick_env(quick).strip()}; {cmd})" if quick else cmd


def groups_command(groups=(), quick: bool = True, small: bool = False, tools: str | None = None) -> str:
    """The board's command that runs its groups (none: every one) with runs.sh (written to
    the board: target_load.install_commands(RUNS)), in a subshell of its own, with the
    programs of `tools` (record.DEBIAN, the default, or OWN)."""
    return (f"({target_load.set_statement(tools)}QUICK={str(quick).lower()} SMALL={str(small).lower()}; "
            f". {target_load.on_board(RUNS)} && lm_groups {' '.join(groups)}) 2>&1")


def runner(shell, quick: bool = True, small: bool = False, tools: str | None = None):
    """-> run(*groups): text, its groups run on the board by the board-side script LAVA
    runs too (runs.sh, written to the board here); quick: the short timing loops, for every
    command of them; tools: whose programs (record.DEBIAN, the default, or OWN: the
    project's, target/measure/)."""
    for cmd in target_load.install_commands(RUNS):
        shell.run_check(cmd)

    def run(*groups, timeout=3600):
        out, _, rc = shell.run(groups_command(groups, quick, small, tools), timeout=timeout)
        if rc != 0:
            raise failed_run(f"{NAME} {' '.join(groups)}", rc, out)
        return "\n".join(out)
    run.tools = tools
    return run


def group(name: str, run) -> dict:
    """One group's figures (run: a runner's)."""
    return output.figures(run(name), getattr(run, "tools", None))


def measure_groups(shell, small: bool = False, groups=None, tools: str | None = None) -> dict:
    """The suite's figures (quick timing), every group a board of its RAM runs (runs.sh
    leaves the large ones out on a small board)."""
    return output.figures(runner(shell, small=small, tools=tools)(*(groups or ())), tools)


def runs_of(metrics) -> list[str]:
    """The smallest runs of runs.sh that give `metrics` (a latency is a run of its own)."""
    return list(dict.fromkeys(output.run_of(m) for m in metrics))


def raw_commands(metrics, tools: str | None = None) -> list[str]:
    """The shell lines that print `metrics`' smallest runs raw (runs.sh written to the board
    first, then its runs): what `measure` runs, as lines LAVA's interactive health test types."""
    return target_load.install_commands(RUNS) + [groups_command(runs_of(metrics), True, False, tools)]


def measure(shell, rec, metric=None, small=False, tools=None, **_) -> dict:
    """On a boot: every group, or the smallest runs that give `metric` (one catalogue name
    or several: a bisect's figures, a health check's; a latency is a run of its own)."""
    wanted = [metric] if isinstance(metric, str) else list(metric or ())
    return measure_groups(shell, small, groups=runs_of(wanted) or None, tools=tools)


# the study's deltas by what they measure: the relative change of the 2.6 result, positive
# slower (the study's reading); our rates (files a second) are the inverse of its latencies
_STUDY_LATENCY = {"lat_pipe_us": "pipe", "lat_unix_us": "af_unix", "lat_udp_us": "udp", "lat_tcp_us": "tcp",
                  "lat_connect_us": "tcp_connect"}
_STUDY_FS_VM = {"lat_fs_create_0k_per_s": "file_create", "lat_fs_delete_0k_per_s": "file_delete",
                "lat_mmap_1m_us": "mmap", "lat_pagefault_us": "page_fault", "lat_select_100fd_us": "select_100fd"}
_STUDY_BANDWIDTH = {"bw_pipe_mb_s": "pipe", "bw_unix_mb_s": "af_unix", "bw_tcp_mb_s": "tcp",
                    "bw_file_reread_mb_s": "file_reread"}
_STUDY_BOARDS = {"mpc860": "MPC860T", "mpc8240": "MPC8240"}


def study_changes(results: dict) -> dict[str, str]:
    """The study's 2.4.25 -> 2.6.11.7 changes of these figures, in words: pooled over its
    PowerPC boards, as it reported them (../shared/reference: lmbench_deltas_2_4_to_2_6)."""
    lm = results.get(f"{NAME}_deltas_2_4_to_2_6", {})
    words, ctx = {}, lm.get("context_switch_pct", {})
    if ctx:
        for m in METRICS:
            if m.name.startswith("lat_ctx_"):
                words[m.key] = f"context switch +{ctx['mean']} % (mean; {ctx['min']} .. {ctx['max']} %)"
    for key, name in _STUDY_LATENCY.items():
        if name in lm.get("latency_pct", {}):
            words[f"{NAME}.{key}"] = f"latency +{lm['latency_pct'][name]} %"
    for key, name in _STUDY_FS_VM.items():
        if name in lm.get("fs_vm_latency_pct", {}):
            pct = lm["fs_vm_latency_pct"][name]
            words[f"{NAME}.{key}"] = f"latency +{pct} %" + (
                f" (as files a second: {100 / (1 + pct / 100) - 100:+.0f} %)" if key.endswith("_per_s") else "")
    for key, name in _STUDY_BANDWIDTH.items():
        said = lm.get("bandwidth", {}).get(name)
        if isinstance(said, dict):
            words[f"{NAME}.{key}"] = "; ".join(f"{_STUDY_BOARDS.get(b, b)} {w}" for b, w in said.items())
        elif said:
            words[f"{NAME}.{key}"] = str(said)
    return words


def params(o: Options) -> dict:
    return {"QUICK": "true" if o.quick else "false", "SMALL": "true" if o.small else "false"}


FAMILY = Family(NAME, METRICS, GUEST, order=60, listed=40, what="lmbench's latencies and bandwidths", packages=(NAME,),
                image=IMAGE, measure=measure, script=f"{NAME}/{NAME}.sh", board_files=(RUNS,), testdef=f"{NAME}/{NAME}.yaml",
                params=params, minutes=lambda p, quick: 10 if quick else 40, workload=True,
                shown=f"{NAME}.lat_syscall_null_us", tools=STUDY_TOOLS, reads=output.read,
                group_of=output.run_of, study_note=f"{NAME} 3.0-a4, its deltas pooled over both",
                study_changes=study_changes, health=("lat_syscall_null_us", "lat_pipe_us"),
                raw_commands=raw_commands)
