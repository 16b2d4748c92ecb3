"""LAVA's test definitions (jobs/testdefs) run here the way a board runs them, with its
programs stubbed: a test reads what a definition reports (a module of its own, beside
paths.py: tests import it)."""
import os
import shutil
import subprocess

from paths import ROOT

# what the test definitions run on a board; a stub prints nothing unless given a script
BOARD_COMMANDS = ("lat_syscall lat_proc lat_pipe lat_unix lat_udp lat_tcp lat_connect lat_select "
                  "lat_pagefault lat_mmap lat_fs lat_ctx bw_pipe bw_unix bw_tcp bw_file_rd dd free "
                  "dmesg mem_eat cyclictest hackbench bw_mem sleep").split()


def stub_commands(tmp_path, scripts: dict | None = None):
    """tmp_path/bin with every board command stubbed (scripts: {command: shell body} for
    those that should print something; the others print nothing)."""
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    bodies = {cmd: "exit 0" for cmd in BOARD_COMMANDS}
    bodies.update(scripts or {})
    bodies["lava-test-case"] = f'echo "$1 $3" >> {tmp_path}/reported'   # NAME --result R
    for cmd, body in bodies.items():
        (stubs / cmd).write_text(f"#!/bin/sh\n{body}\n")
        (stubs / cmd).chmod(0o755)
    return stubs


CAPTURED = ROOT / "tests/data/captured"


def captured_programs() -> dict:
    """Every board program prints what it printed on qemu-arm armmp (tests/data/captured,
    tests/data/capture.py; lmbench's on stderr, as lmbench prints; a served program's server
    and its stop print nothing; every ring size prints the 0k ring); hackbench, not
    captured there, the lines of rt-tests' hackbench with the suite's settings."""
    served = ("lat_udp", "lat_tcp", "lat_connect", "bw_tcp")
    out = {p: ('case "$1" in -s|-S) exit 0 ;; esac; ' if p in served else "") + f"cat {CAPTURED}/armmp.{p}.txt >&2"
           for p in served + ("lat_syscall", "lat_proc", "lat_pipe", "lat_unix", "lat_select",
                              "lat_pagefault", "lat_mmap", "lat_fs", "bw_pipe", "bw_unix", "bw_file_rd")}
    out["lat_syscall"] = f"sed -n 1p {CAPTURED}/armmp.lat_syscall.txt >&2"   # captured: null and read
    out["lat_ctx"] = f'sed -n 1,6p {CAPTURED}/armmp.lat_ctx.txt | sed "s/size=0k/size=${{2}}k/" >&2'
    out.update({p: f"cat {CAPTURED}/armmp.{p}.txt" for p in ("free", "mem_eat")})
    out["cyclictest"] = f"cat {CAPTURED}/armmp.cyclictest-verbose.txt"
    out["bw_mem"] = f'grep " mem_$2 " {CAPTURED}/armmp.bw_mem.txt'   # one line a run, as it prints
    out["hackbench"] = ("printf 'Running in process mode with 4 groups using 40 file descriptors each "
                        "(== 160 tasks)\\nEach sender will pass 100 messages of 100 bytes\\nTime: 0.421\\n'")
    return out


def lava_figures(tmp_path, suite: str, scripts: dict | None = None, **params: str) -> dict:
    """{metric name: value} that `boardlab lava results` reads off a definition's raw output
    (its family's own parser, lava.logs.raw_figures), the definition run as run_testdef
    runs it; its one test case must say it measured."""
    from boardlab.lava.logs import raw_figures
    from boardlab.measure import families
    reported, lines = run_testdef(tmp_path, suite, scripts, **params)
    assert reported == [("measured", "pass")], reported
    got, failed = raw_figures([{"lvl": "target", "msg": ln} for ln in lines],
                              {suite: families.tool_settings(params.get("TOOLS"))})
    assert not failed, failed
    return {k.split(".", 1)[1]: v for k, v in got.get(suite, {}).items()}


def run_testdef(tmp_path, suite: str, scripts: dict | None = None, **params: str) -> tuple[list, list]:
    """Run jobs/testdefs/<suite>/<suite>.sh with every board command stubbed (scripts:
    {command: shell body} for those that should print something; params: the definition's
    parameters, over the defaults below) and the load a no-op -> ([(test case, result)] in
    the order reported, the lines it printed)."""
    defs = tmp_path / "testdefs"
    shutil.copytree(ROOT / "jobs/testdefs", defs, dirs_exist_ok=True)
    (defs / "lib/load.sh").write_text("load_start() { :; }\nload_stop() { :; }\n")
    stubs = stub_commands(tmp_path, scripts)
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", QUICK="true",
               SMALL="false", DURATION="1", INTERVAL="1000", HISTOGRAM="100")
    env.update(params)
    if params.get("TOOLS") == "own":   # the root carries the project's programs: the stubs stand in
        (stubs / "blmeasure").write_text("#!/bin/sh\nexit 0\n")
        (stubs / "blmeasure").chmod(0o755)
        env["OWN_ROOT_BIN"] = str(stubs)
    r = subprocess.run(["sh", f"./{suite}.sh"], cwd=defs / suite, env=env, timeout=120,
                       capture_output=True, check=True, text=True)
    reported = [tuple((ln.split(" ", 1) + [""])[:2]) for ln in (tmp_path / "reported").read_text().splitlines()]
    return reported, r.stdout.splitlines()


class LocalShell:
    """A board's shell for the pytest side's lines, run in this host's sh with the board
    commands of stubs (stub_commands) first in PATH: labgrid's ShellDriver.run's answer."""

    def __init__(self, stubs):
        self.env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}")

    def run(self, cmd, timeout=None):
        r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=self.env, timeout=120)
        return r.stdout.splitlines(), [], r.returncode

    def run_check(self, cmd, timeout=None):
        out, _, rc = self.run(cmd)
        assert rc == 0, out
        return out
