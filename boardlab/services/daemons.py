"""Processes this project runs as services (the virtual lab hosts' daemons, the history
server), each known by the PID file it was started with (under its run directory), its
output in a log file there: started once, waited for until ready, stopped by that PID
and no other."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from boardlab.errors import LabFault
from boardlab.log import progress
from boardlab.procs import group_alive, running


class ServiceError(LabFault):
    """A service this project runs (or a command it needs) failed: names which and why."""
    part = "service"


def sh(*cmd, check=True, netns=None):
    if netns:
        cmd = ("ip", "netns", "exec", netns) + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise ServiceError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


RPCBIND_SOCK = "/run/rpcbind.sock"


def rpcbind_alive() -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(RPCBIND_SOCK)
        return True
    except OSError:
        return False
    finally:
        s.close()


def remove_stale_rpcbind_socket():
    if os.path.exists(RPCBIND_SOCK) and not rpcbind_alive():
        os.unlink(RPCBIND_SOCK)


class Daemons:
    """The processes of one lab host: PID files in pid_dir, logs in log_dir."""

    def __init__(self, pid_dir: Path, log_dir: Path):
        self.pid_dir, self.log_dir = pid_dir, log_dir

    def pid(self, name):
        try:
            pid = int((self.pid_dir / f"{name}.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None
        return pid if running(pid) else None

    def start(self, name, cmd, netns=None, ready=None, timeout=10.0, env=None, cwd=None):
        pid = self.pid(name)
        if pid:
            progress(f"  {name}: running (pid {pid})")
            return pid
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        log = open(self.log_dir / f"{name}.log", "ab")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True, env=env, cwd=cwd)
        (self.pid_dir / f"{name}.pid").write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + timeout
        while ready is not None and not ready():
            if proc.poll() is not None:
                raise ServiceError(f"{name} exited with status {proc.returncode} at start; "
                               f"its log: {self.log_dir / (name + '.log')}\n"
                               + self.log_tail(name))
            if time.monotonic() > deadline:
                raise ServiceError(f"{name} did not become ready within {timeout:.0f} s; its log: "
                               f"{self.log_dir / (name + '.log')}\n" + self.log_tail(name))
            time.sleep(0.05)
        progress(f"  {name}: started (pid {proc.pid})")
        return proc.pid

    def log_tail(self, name, n=8):
        try:
            lines = (self.log_dir / f"{name}.log").read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return ""
        return "\n".join("    " + ln for ln in lines[-n:])

    def stop(self, name):
        pid = self.pid(name)
        if pid is None:
            (self.pid_dir / f"{name}.pid").unlink(missing_ok=True)
            return False
        # the whole session start() made for it (pid is its leader): a wrapper's children
        # (squad's gunicorn and its workers) would otherwise keep serving after it
        os.killpg(pid, signal.SIGTERM)
        for _ in range(100):
            try:   # our own child (started in this process): reap it
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            if not group_alive(pid):   # the leader is of its own group
                break
            time.sleep(0.05)
        else:
            os.killpg(pid, signal.SIGKILL)
        (self.pid_dir / f"{name}.pid").unlink(missing_ok=True)
        progress(f"  {name}: stopped (pid {pid})")
        return True


def private_run(run_dir: Path) -> list[str]:
    """A command prefix: the command sees a /run of its own (a tmpfs) with only the lab
    host's run directory in it. rpcbind's socket is /run/rpcbind.sock, compiled in: two
    hosts' rpcbinds (or the machine's own) would take it from each other; NFS servers
    then register with their own host's rpcbind over its loopback."""
    # the machine's /run is reached through a private, unpredictable directory (mktemp -d:
    # 0700, a random name) for the moment of the mounts, then unmounted and removed
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'keep=$(mktemp -d /tmp/boardlab-run.XXXXXXXXXX) && mount --bind /run "$keep" && '
            f"mount -t tmpfs tmpfs /run && mkdir -p {run_dir} /run/ganesha && "
            f'mount --bind "$keep"{str(run_dir)[len("/run"):]} {run_dir} && umount "$keep" && rmdir "$keep" && '
            'exec "$0" "$@"']
