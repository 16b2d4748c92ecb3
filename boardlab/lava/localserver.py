"""A LAVA server and worker on this host, for the virtual board: the full loop a lab
runs (submit -> scheduler -> worker -> lava-run -> results), on 127.0.0.1.

No systemd here, so the services the Debian packages describe as units are started
by hand, each by PID (gunicorn for the web/API, `lava-server manage lava-scheduler`,
`lava-worker`), PostgreSQL with pg_ctlcluster (boardlab.postgres). `down` stops what `up`
started, and PostgreSQL only if the lab started it and nothing else of it still uses it. The registrations (user, token, worker, device
type, device) live in LAVA's database and files and are reused: `up` is idempotent.

Verified facts this relies on: lava-server installs only with PostgreSQL running;
power commands run under a pseudo-terminal (ours are curl calls to the power switch,
which starts QEMU in its own session); the worker's dispatcher config comes from
/etc/lava-server/dispatcher.d/<worker>/dispatcher.yaml on the server."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yaml

from boardlab import postgres
from boardlab.errors import BoardlabError
from boardlab.facts.board import load_board, load_lab_host
from boardlab.lava import devices
from boardlab.lava.run import dispatcher_config
from boardlab.net import tcp_open
from boardlab.procs import running

CONFIG = Path("/etc/lava-server/dispatcher-config")
DISPATCHER_D = Path("/etc/lava-server/dispatcher.d")
USER = "boardlab"
PG_USER = "lava-server"   # as the shared PostgreSQL cluster's users are written down


class ServerError(BoardlabError):
    """The local LAVA server could not be brought up or down: names the step."""


def _manage(*args, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run(["lava-server", "manage", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise ServerError(f"lava-server manage {' '.join(args)}: {(r.stderr or r.stdout).strip()[-800:]}")
    return r


def _reap(pid):
    """Collect our own child's exit status (no zombie left behind)."""
    if pid:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass   # not our child (started by an earlier `boardlab lava server up`)


class LocalLavaServer:
    def __init__(self, run_dir: Path, port: int = 8180, worker: str = "boardlab-vlab",
                 identity: str = "boardlab-vlab", lab: str = "vlab", echo=print):
        self.run_dir = Path(run_dir)
        self.port, self.worker, self.identity = port, worker, identity
        self.lab = load_lab_host(lab)
        self.url = f"http://127.0.0.1:{port}/"
        self.echo = echo
        self.pids: dict[str, int] = {}

    # ---- processes -------------------------------------------------------------------
    def _spawn(self, name, cmd, env=None):
        log = open(self.run_dir / f"{name}.log", "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})
        self.pids[name] = proc.pid
        (self.run_dir / f"{name}.pid").write_text(f"{proc.pid}\n")
        self.echo(f"lava server: {name} started, pid {proc.pid} (log {self.run_dir / name}.log)")
        return proc

    def _wait(self, what, ok, timeout):
        deadline = time.monotonic() + timeout
        while not ok():
            if time.monotonic() > deadline:
                raise ServerError(f"{what} not ready after {timeout} s (logs in {self.run_dir})")
            for name, pid in self.pids.items():
                if not running(pid):
                    tail = (self.run_dir / f"{name}.log").read_text(errors="replace")[-1500:]
                    raise ServerError(f"{name} (pid {pid}) exited while waiting for {what}:\n{tail}")
            time.sleep(0.5)

    # ---- registrations (idempotent) ---------------------------------------------------
    def _ensure_user_token(self) -> str:
        if USER not in _manage("users", "list").stdout:
            _manage("users", "add", USER, "--superuser", "--staff", "--email", "boardlab@localhost")
        tokens = _manage("tokens", "list", "--user", USER).stdout
        found = re.findall(r"\b([a-z0-9]{32,})\b", tokens)
        if found:
            return found[0]
        out = _manage("tokens", "add", "--user", USER, "--description", "boardlab lava submit").stdout
        return out.strip().split()[-1]

    def _ensure_worker(self) -> str:
        r = _manage("workers", "details", self.worker, check=False)
        if r.returncode != 0:
            _manage("workers", "add", self.worker, "--description", "the virtual lab host")
            r = _manage("workers", "details", self.worker)
        token = re.search(r"token\s*:\s*(\S+)", r.stdout)
        if not token:
            raise ServerError(f"no token for worker {self.worker} in: {r.stdout}")
        d = DISPATCHER_D / self.worker
        d.mkdir(parents=True, exist_ok=True)
        (d / "dispatcher.yaml").write_text(yaml.safe_dump(dispatcher_config(self.lab)))
        return token.group(1)

    def register_board(self, board_name: str) -> str:
        """The board's device type and device dictionary, as `boardlab gen` wrote them."""
        board = load_board(board_name)
        dtype = devices.device_type_name(board)
        (CONFIG / "device-types").mkdir(parents=True, exist_ok=True)
        (CONFIG / "devices").mkdir(parents=True, exist_ok=True)
        shutil.copy(devices.DEVICE_TYPES_DIR / f"{dtype}.jinja2", CONFIG / "device-types" / f"{dtype}.jinja2")
        shutil.copy(devices.DEVICES_DIR / f"{board.name}.jinja2", CONFIG / "devices" / f"{board.name}.jinja2")
        if _manage("device-types", "details", dtype, check=False).returncode != 0:
            _manage("device-types", "add", dtype)
        if _manage("devices", "details", board.name, check=False).returncode != 0:
            _manage("devices", "add", "--device-type", dtype, "--worker", self.worker, board.name)
        _manage("devices", "update", board.name, "--health", "GOOD", check=False)
        return board.name

    def _lavacli_identity(self, token: str):
        subprocess.run(["lavacli", "identities", "add", "--uri", f"{self.url}RPC2", "--username", USER,
                        "--token", token, self.identity], check=True, capture_output=True)

    # ---- up / down -----------------------------------------------------------------------
    def up(self, boards=None):
        """Server, scheduler and worker, with the lab host's boards (all, by default)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if tcp_open(self.port):
            raise ServerError(f"127.0.0.1:{self.port} is already in use: another LAVA server? "
                              f"(choose another port)")
        postgres.up(PG_USER, echo=self.echo)
        token = self._ensure_user_token()
        worker_token = self._ensure_worker()
        for b in boards or self.lab.boards:
            self.register_board(b)
        self._spawn("gunicorn", ["gunicorn3", "lava_server.wsgi", "--bind", f"127.0.0.1:{self.port}",
                                 "--workers", "2", "--worker-class", "eventlet", "--timeout", "120",
                                 "--log-level", "info"])
        self._wait("the LAVA web server", lambda: tcp_open(self.port), 60)
        # "-": log to stdout, our log file; the scheduler drops privileges to lavaserver
        # and could not reopen a file of ours by name
        self._spawn("scheduler", ["lava-server", "manage", "lava-scheduler", "--level", "INFO",
                                  "--log-file", "-"])
        self._spawn("worker", ["lava-worker", "--name", self.worker, "--url", self.url,
                               "--token", worker_token, "--worker-dir", str(self.run_dir / "worker"),
                               "--level", "INFO", "--log-file", "-"])
        self._lavacli_identity(token)
        self._wait("the worker online", self._worker_online, 60)
        return self

    def check(self):
        """Raise if a service of ours died (a job would wait for it for ever)."""
        for name, pid in self.pids.items():
            if not running(pid):
                tail = (self.run_dir / f"{name}.log").read_text(errors="replace")[-1500:]
                raise ServerError(f"{name} (pid {pid}) is not running any more:\n{tail}")

    def _worker_online(self) -> bool:
        r = _manage("workers", "details", self.worker, check=False)
        return "state      : Online" in r.stdout

    def _recorded(self):
        """What an earlier `up` (another process) started: its PID files."""
        for name in ("worker", "scheduler", "gunicorn"):
            f = self.run_dir / f"{name}.pid"
            if name not in self.pids and f.exists():
                self.pids[name] = int(f.read_text())

    def down(self):
        self._recorded()
        for name in ("worker", "scheduler", "gunicorn"):
            (self.run_dir / f"{name}.pid").unlink(missing_ok=True)
            pid = self.pids.pop(name, None)
            if pid is None or not running(pid):
                _reap(pid)
                continue
            try:
                os.killpg(pid, signal.SIGTERM)   # its own session: gunicorn's workers too
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 20
            while running(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if running(pid):
                os.killpg(pid, signal.SIGKILL)
            _reap(pid)
            self.echo(f"lava server: {name} (pid {pid}) stopped")
        postgres.down(PG_USER, echo=self.echo)   # stopped if the lab started it, and no one else uses it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.down()
