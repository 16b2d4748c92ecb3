"""`lava-server manage` commands, each in a process of its own or, inside one_process(),
all in one: Django and LAVA's apps take 1-1.5 s to start, and a server's `up` runs about
twenty commands (its workers, its devices, the jobs an earlier run left). In one process
each command is LAVA's own, run by Django's call_command (a `shell -c` program by exec),
its output and exit status as the command line would give them."""
from __future__ import annotations

import contextlib
import json
import subprocess

# in `lava-server manage shell -c`: a command a line in (JSON), its [status, stdout,
# stderr] a line out behind a marker (a stray print of a command's own is not taken for it)
MARK = "\x00boardlab-manage "
SERVE = r"""
import contextlib, io, json, sys
from django.core.management import call_command
from django.core.management.base import CommandError
out_fd = sys.stdout
for line in sys.stdin:
    args = json.loads(line)
    out, err, rc = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if args[:2] == ["shell", "-c"]:
                exec(args[2], {"__name__": "__main__"})
            else:
                call_command(*args, stdout=out, stderr=err)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except CommandError as e:
        rc, _ = 1, err.write("CommandError: %s\n" % e)
    except Exception as e:
        rc, _ = 1, err.write("%s: %s\n" % (type(e).__name__, e))
    out_fd.write(MARK + json.dumps([rc, out.getvalue(), err.getvalue()]) + "\n")
    out_fd.flush()
""".replace("MARK", repr(MARK))

_session: list[subprocess.Popen] = []


def run(*args: str) -> subprocess.CompletedProcess:
    """One `lava-server manage ARGS...`: in the open process if there is one."""
    if not _session:
        return subprocess.run(["lava-server", "manage", *args], capture_output=True, text=True)
    proc = _session[-1]
    proc.stdin.write(json.dumps(list(args)) + "\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith(MARK):
            rc, out, err = json.loads(line[len(MARK):])
            return subprocess.CompletedProcess(["lava-server", "manage", *args], rc, out, err)
    return subprocess.CompletedProcess(["lava-server", "manage", *args], 1, "",
                                       f"the manage process ended (status {proc.wait()})")


@contextlib.contextmanager
def one_process():
    """Every run() inside it in one `lava-server manage shell`, ended on the way out."""
    proc = subprocess.Popen(["lava-server", "manage", "shell", "-c", SERVE], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    _session.append(proc)
    try:
        yield
    finally:
        _session.remove(proc)
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
