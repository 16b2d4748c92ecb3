"""A command restarted whenever it exits, until stopped: what systemd's Restart=always is
on a real lab, for the daemons the virtual lab starts by PID (Daemons). The labgrid
exporter exits when the coordinator goes away, and the arbiter when it crashes; neither
comes back by itself. Run as `python -m boardlab.services.supervisor --name NAME -- CMD...`
(supervised() builds that argv): Daemons starts it as the leader of its own session, the
command runs in that session as its child, and Daemons.stop's SIGTERM to the session
reaches both; the supervisor then waits for the command (the arbiter gives its places
back on SIGTERM) and kills it only after a grace period. No child is left behind."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

FIRST_DELAY_S = 1.0    # after an exit, before the command is started again
MAX_DELAY_S = 30.0     # doubled after each quick exit, up to this
STEADY_S = 60.0        # a run this long was not a crash loop: the next delay is the first again
GRACE_S = 15.0         # the command's time to end on SIGTERM before SIGKILL


def supervised(name: str, cmd: list[str]) -> list[str]:
    """The argv that runs cmd under a supervisor."""
    return [sys.executable, "-m", "boardlab.services.supervisor", "--name", name, "--", *cmd]


class Supervisor:
    def __init__(self, name: str, cmd: list[str], echo=print, first_delay: float = FIRST_DELAY_S,
                 max_delay: float = MAX_DELAY_S, steady: float = STEADY_S, grace: float = GRACE_S):
        self.name, self.cmd, self.echo = name, list(cmd), echo
        self.first_delay, self.max_delay, self.steady, self.grace = first_delay, max_delay, steady, grace
        self.stopping = threading.Event()
        self.child: subprocess.Popen | None = None
        self.starts = 0

    def run(self) -> None:
        """Start the command, and again after each exit, until stop(); the delay doubles
        while it keeps exiting quickly (a coordinator that is down for an hour costs a
        start every MAX_DELAY_S, not a busy loop)."""
        delay = self.first_delay
        try:
            while not self.stopping.is_set():
                began = time.monotonic()
                self.child = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL)
                self.starts += 1
                self.echo(f"supervisor: {self.name} started, pid {self.child.pid} (start {self.starts})")
                status = self._wait_unless_stopping()
                if status is None:
                    break
                ran = time.monotonic() - began
                delay = self.first_delay if ran >= self.steady else delay
                self.echo(f"supervisor: {self.name} exited with status {status} after {ran:.1f} s; "
                          f"started again in {delay:g} s")
                self.stopping.wait(delay)
                delay = min(delay * 2, self.max_delay)
        finally:
            self._end_child()

    def _wait_unless_stopping(self) -> int | None:
        """The command's exit status, or None once stop() was called (it may be deaf to
        SIGTERM: _end_child sees to it)."""
        while not self.stopping.is_set():
            try:
                return self.child.wait(0.5)
            except subprocess.TimeoutExpired:
                pass
        return None

    def stop(self) -> None:
        """No more starts; the running command asked to end (SIGTERM)."""
        self.stopping.set()
        child = self.child
        if child is not None and child.poll() is None:
            child.terminate()

    def _end_child(self) -> None:
        child = self.child
        if child is None:
            return
        if child.poll() is None:
            child.terminate()
        try:
            child.wait(self.grace)
        except subprocess.TimeoutExpired:
            self.echo(f"supervisor: {self.name} (pid {child.pid}) still running {self.grace:g} s "
                      f"after SIGTERM: killed")
            child.kill()
            child.wait()


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="a command restarted whenever it exits, until SIGTERM")
    ap.add_argument("--name", required=True, help="what the log lines call it")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the command and its arguments")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command")
    sup = Supervisor(args.name, cmd, echo=lambda m: print(m, flush=True))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: sup.stop())
    sup.run()
    sup.echo(f"supervisor: {args.name} stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
