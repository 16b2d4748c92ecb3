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
                  "dmesg mem_eat cyclictest sleep").split()


def stub_commands(tmp_path, scripts: dict | None = None):
    """tmp_path/bin with every board command stubbed (scripts: {command: shell body} for
    those that should print something; the others print nothing)."""
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    bodies = {cmd: "exit 0" for cmd in BOARD_COMMANDS}
    bodies.update(scripts or {})
    bodies["lava-test-case"] = f'echo "$1 $5" >> {tmp_path}/reported'   # NAME --result R --measurement V
    for cmd, body in bodies.items():
        (stubs / cmd).write_text(f"#!/bin/sh\n{body}\n")
        (stubs / cmd).chmod(0o755)
    return stubs


def run_testdef(tmp_path, suite: str, scripts: dict | None = None,
                **params: str) -> list[tuple[str, str]]:
    """Run jobs/testdefs/<suite>/<suite>.sh with every board command stubbed (scripts:
    {command: shell body} for those that should print something; params: the definition's
    parameters, over the defaults below) and the load a no-op -> [(test case, measurement
    or '')] in the order reported."""
    defs = tmp_path / "testdefs"
    shutil.copytree(ROOT / "jobs/testdefs", defs)
    (defs / "lib/load.sh").write_text("load_start() { :; }\nload_stop() { :; }\n")
    stubs = stub_commands(tmp_path, scripts)
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", GATE="", QUICK="true",
               SMALL="false", DURATION="1", INTERVAL="1000", HISTOGRAM="100")
    env.update(params)
    subprocess.run(["sh", f"./{suite}.sh"], cwd=defs / suite, env=env, timeout=120,
                   capture_output=True, check=True)
    return [tuple((ln.split(" ", 1) + [""])[:2]) for ln in (tmp_path / "reported").read_text().splitlines()]


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
