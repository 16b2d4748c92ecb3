"""A LAVA server on this host and a LAVA worker on each virtual lab host, for the virtual
boards: the full loop a lab runs (submit -> scheduler -> worker -> lava-run -> results).
The server (this machine's root namespace, the management host) listens on 127.0.0.1
and on the lab's management address; each worker runs in its lab host's namespace and
reaches the server over the management network, with its own name, token (in a file
of its own) and work directory, and each board is the device of its own host's worker.
A token per role, in lavacli's configuration, none in any argv (lava.identities). No
systemd here: the services the Debian packages describe as units are started by hand,
each by PID (gunicorn, `lava-server manage lava-scheduler`, `lava-worker`, the arbiter:
lava.arbiterstart), PostgreSQL with pg_ctlcluster (boardlab.services.postgres); `down`
stops what `up` started. The registrations live in LAVA's database and files and are
reused: `up` is idempotent.
Relied on, verified: lava-server installs only with PostgreSQL running; power commands
run under a pseudo-terminal; a worker's dispatcher config is /etc/lava-server/dispatcher.d/."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from boardlab.services import postgres
from boardlab.errors import LAB, LabFault
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import ARBITER_STATE, load_lab
from boardlab.facts.labhosts import lab_hosts, load_lab_host
from boardlab.lava import arbiterstart, devices, health, identities, joboutput, manage
from boardlab.lava.run import dispatcher_config
from boardlab.net import tcp_open
from boardlab.procs import running

CONFIG = Path("/etc/lava-server/dispatcher-config")
DISPATCHER_D = Path("/etc/lava-server/dispatcher.d")
PG_USER = "lava-server"   # as the shared PostgreSQL cluster's users are written down



# run in `lava-server manage shell` at `up`: the jobs whose dispatcher is gone (every state
# but Submitted and Finished), ended with why, and each (but a health check) submitted
# again by its own submitter: "<id>\t<state it was in>\t<new id | check>"
LEFTOVER_JOBS = """from lava_scheduler_app.models import TestJob
for j in TestJob.objects.exclude(state__in=(TestJob.STATE_FINISHED, TestJob.STATE_SUBMITTED)):
    was = j.get_state_display()
    j.go_state_finished(TestJob.HEALTH_INCOMPLETE, True)
    j.failure_comment = ('%s when an earlier run of the local LAVA server stopped: its dispatcher '
                         'is gone' % was)
    j.save()
    again = 'check'
    if not j.health_check:
        new = TestJob.from_yaml_and_user(j.original_definition, j.submitter)
        again = str((new[0] if isinstance(new, list) else new).id)
    print('%s\t%s\t%s' % (j.id, was, again))
"""

class ServerError(LabFault):
    """The local LAVA server could not be brought up or down: names the step."""
    party, part = LAB, "lava"


def _manage(*args, check=True) -> subprocess.CompletedProcess:
    r = manage.run(*args)
    if check and r.returncode != 0:
        raise ServerError(f"lava-server manage {' '.join(args)}: {(r.stderr or r.stdout).strip()[-800:]}")
    return r


def _django(expr: str) -> str:
    """The value of a Python expression over LAVA's models ('' when it fails)."""
    r = _manage("shell", "-c", f"from lava_scheduler_app.models import Device, TestJob\nprint({expr})", check=False)
    return (r.stdout.strip().splitlines() or [""])[-1] if r.returncode == 0 else ""


def _reap(pid):
    """Collect our own child's exit status (no zombie left behind)."""
    with contextlib.suppress(ChildProcessError):   # not our child (an earlier `up` started it)
        pid and os.waitpid(pid, os.WNOHANG)


# `up` sets only Bad Unknown (mended meanwhile? checked again); a new device is Good, checked
# before its first job; Maintenance, Retired, Looping are an admin's (or the arbiter's): kept
UNKNOWN_AT_UP = ("Bad",)
# a device an earlier run registered that this run does not serve: parked in Maintenance
# (LAVA would schedule its health checks with no worker of ours serving it), until a run does
NOT_SERVED = "boardlab: not among the boards this LAVA server serves now (lava server up --board)"


def worker_env() -> dict:
    """The environment LAVA gives lava-run (its env.yaml, per worker): LAVA's default, with
    boardlab on the PATH, for the device dictionaries' power commands are `boardlab lab
    power` (lava.devices; it checks LAVA's own hold: boardlab.lab.powerguard)."""
    path = [os.path.dirname(sys.executable), "/usr/local/bin", "/usr/local/sbin", "/bin", "/usr/bin",
            "/usr/sbin", "/sbin"]
    return {"purge": True, "overrides": {"LC_ALL": "C.UTF-8", "LANG": "C", "PATH": os.pathsep.join(path)}}


def worker_name(lab_host: str) -> str:
    return f"boardlab-{lab_host}"


class LocalLavaServer:
    def __init__(self, run_dir: Path, port: int = 8180, identity: str = "boardlab-vlab",
                 labs=None, echo=print, arbiter_state: Path = ARBITER_STATE):
        """labs: the lab hosts with a worker (default: every virtual one). arbiter_state:
        kept as long as LAVA's database, whatever the run directory (labfacts.ARBITER_STATE)."""
        self.run_dir = Path(run_dir)
        self.arbiter_state = Path(arbiter_state)
        self.port, self.identity = port, identity
        self.labs = [load_lab_host(n) for n in labs] if labs else \
            [h for h in lab_hosts() if h.kind == "virtual"]
        self.url = f"http://127.0.0.1:{port}/"
        self.echo = echo
        self.pids: dict[str, int] = {}

    def worker_url(self, lab) -> str:
        """Where the lab host's worker reaches the server: over the management network."""
        return f"http://{load_lab().management_ip}:{self.port}/" if lab.management else self.url

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
    def _ensure_worker(self, lab) -> Path:
        worker = worker_name(lab.name)
        r = _manage("workers", "details", worker, check=False)
        if r.returncode != 0:
            _manage("workers", "add", worker, "--description", f"virtual lab host {lab.name}")
            r = _manage("workers", "details", worker)
        token = re.search(r"token\s*:\s*(\S+)", r.stdout)
        if not token:
            raise ServerError(f"no token for worker {worker} in: {r.stdout}")
        # no more boots at once than the lab host can run (a health check fails only for its board)
        limit = lab.boots_at_once or 0
        _manage("shell", "-c", "from lava_scheduler_app.models import Worker\n"
                f"Worker.objects.filter(hostname={worker!r}).update(job_limit={limit})")
        d = DISPATCHER_D / worker
        d.mkdir(parents=True, exist_ok=True)
        (d / "dispatcher.yaml").write_text(yaml.safe_dump(dispatcher_config(lab)))
        (d / "env.yaml").write_text(yaml.safe_dump(worker_env()))
        # lava-worker --token-file reads it: the token is in no process's argv
        return identities.write_token_file(self.run_dir / f"worker-{lab.name}" / "token", token.group(1))

    def _end_leftover_jobs(self):
        """Jobs an earlier run of this server left behind (the database stays, its workers
        and their dispatchers are gone): a Submitted job waits in the queue as it was (no
        job is lost); one that was Scheduled, Running or Canceling had its dispatcher
        ended with the worker, so it ends Incomplete with why and, unless it is a health
        check (LAVA schedules those itself), is submitted again. The logs of an earlier
        database's jobs are set aside first (lava.joboutput)."""
        highest = _django("TestJob.objects.order_by('-id').values_list('id', flat=True).first() or 0")
        if highest.isdigit():
            joboutput.set_aside(int(highest), echo=self.echo)
        r = _manage("shell", "-c", LEFTOVER_JOBS)
        for line in r.stdout.splitlines():
            job_id, was, again = (line.split("\t") + ["", ""])[:3]
            if job_id.isdigit():
                self.echo(f"lava server: job {job_id} was {was} when an earlier run stopped: Incomplete"
                          + (f", submitted again as job {again}" if again.isdigit() else
                             " (a health check: LAVA schedules its own)" if again == "check" else ""))
        queued = _django("TestJob.objects.filter(state=TestJob.STATE_SUBMITTED).count()")
        if queued.isdigit() and int(queued):
            self.echo(f"lava server: {queued} submitted job(s) of an earlier run wait in the queue")

    def register_board(self, board_name: str) -> str:
        """The board's device type and device dictionary, as `boardlab gen` wrote them, on
        its own lab host's worker (moved there if it was another's)."""
        board = load_board(board_name)
        worker = worker_name(board.lab_host)
        dtype = devices.device_type_name(board)
        # its health check by the name the dictionary extends (dispatcher-config/health-checks)
        for src, d in ((devices.DEVICE_TYPES_DIR / f"{dtype}.jinja2", "device-types"), (health.health_check_path(
                board), "health-checks"), (devices.DEVICES_DIR / f"{board.name}.jinja2", "devices")):
            (CONFIG / d).mkdir(parents=True, exist_ok=True)
            shutil.copy(src, CONFIG / d / src.name)
        if _manage("device-types", "details", dtype, check=False).returncode != 0:
            _manage("device-types", "add", dtype, "--health-frequency", str(health.FREQUENCY_HOURS),
                    "--health-denominator", "hours")
        if _manage("devices", "details", board.name, check=False).returncode != 0:
            _manage("devices", "add", "--device-type", dtype, "--worker", worker, board.name)
        board.virtual and health.stage_check_files(board)   # its check boots them from its TFTP directory
        device = f"Device.objects.get(hostname={board.name!r})"
        state = _django(f"({device}.get_health_display(), {device}.description)")
        parked = NOT_SERVED in state   # the pair's repr holds the description
        unknown = parked or any(repr(h) in state for h in UNKNOWN_AT_UP)
        _manage("devices", "update", board.name, "--worker", worker, *(["--health", "UNKNOWN"] if unknown else []),
                *(["--description", ""] if parked else []), check=not unknown)
        return board.name

    def _park_others(self, served) -> list[str]:
        """The devices of earlier runs this one does not serve, in Maintenance with why
        (NOT_SERVED); an admin's Maintenance, Retired or Looping is left as it is."""
        names = _django("','.join(Device.objects.exclude(hostname__in=%r).filter(health__in=("
                        "Device.HEALTH_GOOD, Device.HEALTH_UNKNOWN, Device.HEALTH_BAD))"
                        ".values_list('hostname', flat=True))" % (list(served),))
        parked = [n for n in names.split(",") if n]
        for name in parked:
            _manage("devices", "update", name, "--health", "MAINTENANCE", "--description", NOT_SERVED)
            self.echo(f"lava server: device {name} in Maintenance: not among this run's boards")
        return parked

    # ---- up / down -----------------------------------------------------------------------
    def up(self, boards=None):
        """Server, scheduler and a worker per lab host, with their boards (all, by default)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if tcp_open(self.port):
            raise ServerError(f"127.0.0.1:{self.port} is already in use: another LAVA server? "
                              f"(choose another port)")
        postgres.up(PG_USER, echo=self.echo)
        with manage.one_process():   # the registrations: one Django start, not twenty
            # a user and a token per role, none a superuser's (lava.identities)
            tokens = identities.role_tokens(_manage("shell", "-c", identities.SETUP).stdout)
            token_files = {lab.name: self._ensure_worker(lab) for lab in self.labs}
            self._end_leftover_jobs()
            for b in (boards := list(boards or [b for lab in self.labs for b in lab.boards])):
                self.register_board(b)
            self._park_others(boards)
        binds = [f"127.0.0.1:{self.port}"] + ([f"{load_lab().management_ip}:{self.port}"]
                                              if any(lab.management for lab in self.labs) else [])
        # the workers' requests name the management address: Django lets it in by name
        self._spawn("gunicorn", ["gunicorn3", "lava_server.wsgi", *[a for b in binds for a in ("--bind", b)],
                                 "--workers", "2", "--worker-class", "eventlet", "--timeout", "120",
                                 "--log-level", "info"],
                    env={"ALLOWED_HOSTS": ",".join(b.rsplit(":", 1)[0] for b in binds[1:])} if binds[1:] else None)
        self._wait("the LAVA web server", lambda: tcp_open(self.port), 60)
        identities.write_role_identities(self.identity, f"{self.url}RPC2", tokens)
        self._start_arbiter(boards)   # the boards it registered, held before the scheduler starts
        # "-": our log file (the scheduler drops privileges and could not reopen it by name)
        self._spawn("scheduler", ["lava-server", "manage", "lava-scheduler", "--level", "INFO",
                                  "--log-file", "-"])
        for lab in self.labs:   # in its lab host, as lava-worker.service runs on a real one
            inside = ["ip", "netns", "exec", lab.netns] if lab.management else []
            self._spawn(f"worker-{lab.name}", inside + [
                "lava-worker", "--name", worker_name(lab.name), "--url", self.worker_url(lab),
                "--token-file", str(token_files[lab.name]), "--worker-dir", str(self.run_dir / f"worker-{lab.name}"),
                "--level", "INFO", "--log-file", "-"])
        self._wait("the workers online", lambda: all(self.worker_online(lab.name) for lab in self.labs), 60)
        return self

    def _start_arbiter(self, boards):
        """LAVA holds its boards' places at the coordinator, people reserve them: its first
        round done before the scheduler starts (lava.arbiterstart)."""
        state, since = self.arbiter_state, time.time()
        state.parent.mkdir(parents=True, exist_ok=True)
        proc = self._spawn("arbiter", arbiterstart.command(identities.role_identity(self.identity, "arbiter"),
                                                           state, boards))
        (state.parent / "arbiter.pid").write_text(f"{proc.pid}\n")   # sharing.placehold: its supervisor is up
        self.echo(f"lava server: waiting for the arbiter's first round (up to {arbiterstart.FIRST_ROUND_S} s)")
        self._wait("the arbiter's first round (is the labgrid coordinator up? boardlab vlab up)",
                   lambda: arbiterstart.last_round_at(state) > since, arbiterstart.FIRST_ROUND_S)
        self.echo(f"lava server: the arbiter's first round done in {time.time() - since:.1f} s")

    def check(self):
        """Raise if the server or scheduler died (a job would wait for ever). A dead worker is
        one lab host's fault: its jobs end (reap_worker), the other hosts' go on."""
        for name, pid in list(self.pids.items()):
            if running(pid):
                continue
            if name.startswith("worker-"):
                self.reap_worker(name[len("worker-"):])
                continue
            tail = (self.run_dir / f"{name}.log").read_text(errors="replace")[-1500:]
            raise ServerError(f"{name} (pid {pid}) is not running any more:\n{tail}")

    def reap_worker(self, lab_host: str) -> list[int]:
        """A lab host's lava-worker is gone. LAVA 2023.1 leaves its jobs Running for ever
        and their lava-run going (in a process group of its own); so, for each job the
        worker's own database says is running: its lava-run stopped by that PID, its board
        powered off, and the job ended Incomplete with the reason. Returns the job ids."""
        name = f"worker-{lab_host}"
        pid = self.pids.pop(name, None)
        _reap(pid)
        (self.run_dir / f"{name}.pid").unlink(missing_ok=True)
        rows = self._lava_runs(name)
        for job_id, run_pid in rows:
            self._stop_lava_run(run_pid)
            board = self._device_of(job_id)
            if board:
                self._power_off(board)
            why = (f"lava-worker {worker_name(lab_host)} (pid {pid}) ended during the job: its "
                   f"lava-run (pid {run_pid}) was stopped and board {board} powered off")
            _manage("shell", "-c", "from lava_scheduler_app.models import TestJob\n"
                    f"j = TestJob.objects.get(pk={int(job_id)})\n"
                    f"j.go_state_finished(TestJob.HEALTH_INCOMPLETE, True)\n"
                    f"j.failure_comment = {why!r}\nj.save()\n")
            self.echo(f"lava server: job {job_id} Incomplete: {why}")
        return [r[0] for r in rows]

    def _lava_runs(self, worker: str) -> list[tuple[int, int]]:
        """(job id, lava-run PID) of the jobs a worker's own database says are running."""
        import sqlite3
        db = self.run_dir / worker / "db.sqlite3"
        with contextlib.suppress(sqlite3.Error):
            return db.exists() and sqlite3.connect(db).execute("SELECT id, pid FROM jobs WHERE status = 0").fetchall() or []
        return []

    @staticmethod
    def _stop_lava_run(run_pid) -> None:
        """lava-run runs in a process group of its own: a stopped worker leaves it going."""
        if run_pid and running(run_pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run_pid, signal.SIGTERM)

    def _device_of(self, job_id) -> str | None:
        return _django(f"TestJob.objects.get(pk={int(job_id)}).actual_device.hostname") or None

    def _power_off(self, board_name: str):
        from boardlab.vlab.power import switch_off
        try:
            switch_off(load_board(board_name))
        except OSError as e:
            self.echo(f"lava server: board {board_name} could not be powered off ({e})")

    def worker_online(self, lab_host: str) -> bool:
        return "state      : Online" in _manage("workers", "details", worker_name(lab_host), check=False).stdout

    def _names(self) -> list[str]:   # stopped in this order: the arbiter gives the places back first
        return ["arbiter"] + [f"worker-{lab.name}" for lab in self.labs] + ["scheduler", "gunicorn"]

    def _recorded(self):
        """What an earlier `up` (another process) started: its PID files."""
        for name in self._names():
            f = self.run_dir / f"{name}.pid"
            if name not in self.pids and f.exists():
                self.pids[name] = int(f.read_text())

    def down(self):
        self._recorded()
        (self.arbiter_state.parent / "arbiter.pid").unlink(missing_ok=True)
        for name in self._names():
            (self.run_dir / f"{name}.pid").unlink(missing_ok=True)
            runs = self._lava_runs(name) if name.startswith("worker-") else []
            for _, run_pid in runs:   # its jobs' lava-run, which outlives the worker
                self._stop_lava_run(run_pid)
            pid = self.pids.pop(name, None)
            if pid is None or not running(pid):
                _reap(pid)
                continue
            try:
                # its own session: gunicorn's workers too; the arbiter's SIGINT: LAVA goes down,
                # its jobs with it, so every place is released at once (lab.arbiterd)
                os.killpg(pid, signal.SIGINT if name == "arbiter" else signal.SIGTERM)
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
