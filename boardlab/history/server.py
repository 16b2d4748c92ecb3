"""`boardlab history up | down | status`: the lab's results database, Linaro's SQUAD, on
127.0.0.1, started and stopped by PID like the virtual lab's services. It runs from its
own venv (.venv-squad, history/requirements.lock) on SQLite in a data directory that
outlives it (default /var/lib/boardlab/history/<lab>, mode 0700): database (0600),
attachments, the secret key and the submit token (0600; SECRET_KEY and the database's
password reach SQUAD by its environment, never its argv). `up --db postgresql` keeps the database in the host's
PostgreSQL cluster instead (the one the LAVA server uses; database and role
`squad_<lab>`), for a lab whose history grows large or is read by many. `up` puts SQUAD's web assets in place (history.assets),
migrates, collects static files, makes the group `boardlab`, a project per lab and a
submit token (one Django process, history/squad_setup.py; a fresh SQLite database is
copied from the migrated template of this SQUAD version), and starts the web server (gunicorn, 2 workers; no task broker: SQUAD then
processes a submission within its request)."""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

from boardlab.services import postgres
from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.errors import InputError, LabFault
from boardlab.files import atomic_write
from boardlab.facts.board import PROJECT_ROOT
from boardlab.history import assets
from boardlab.log import progress
from boardlab.net import tcp_open
from boardlab.services.daemons import Daemons

GROUP = "boardlab"
DEFAULT_PORT = 8300
DATA_ROOT = Path(os.environ.get("BOARDLAB_HISTORY_DIR", "/var/lib/boardlab/history"))
VENV = PROJECT_ROOT / ".venv-squad"
LOCK = PROJECT_ROOT / "history" / "requirements.lock"   # its digest names the SQLite template
# a cache, not a lab's data: one migrated database per SQUAD version for every data directory
TEMPLATES_DIR = CACHE_DIR / "squad-templates"
SETUP = PROJECT_ROOT / "history" / "squad_setup.py"     # run by SQUAD's venv
DATABASES = ("sqlite", "postgresql")


class HistoryError(LabFault):
    part = "history"


def squad_python(*args, **kw) -> subprocess.CompletedProcess:
    """Python in SQUAD's venv (Django, Otava, kcidb-io live there, not in boardlab's)."""
    return subprocess.run([str(VENV / "bin" / "python"), *map(str, args)], capture_output=True,
                          text=True, **kw)


class HistoryServer:
    def __init__(self, lab: str = "vlab", port: int | None = None, data: Path | None = None,
                 db: str | None = None):
        self.lab, self.project = lab, lab
        self.data = Path(data or DATA_ROOT / lab)
        self.daemons = Daemons(self.data / "pids", self.data / "logs")
        saved = self.saved()
        self.port = port or saved.get("port") or DEFAULT_PORT
        self.url = f"http://127.0.0.1:{self.port}"
        if db and saved.get("db", db) != db:   # the history is where it was first kept
            raise InputError(f"history {lab} keeps its data in {saved['db']} ({self.data}); "
                             f"--db {db} would start an empty one: give another --data or --lab")
        self.db = db or saved.get("db") or "sqlite"
        self.pg_name = "squad_" + "".join(c if c.isalnum() else "_" for c in lab.lower())
        self.pg_user = f"history-{lab}"   # as the shared PostgreSQL cluster's users are written down

    # ---- what `up` leaves for clients: url, group, project, token ------------------------
    def saved(self) -> dict:
        try:
            return json.loads((self.data / "server.json").read_text())
        except (OSError, ValueError):
            return {}

    def keeps_history(self) -> bool:
        """`boardlab history up` was run once for this lab: its submit token is there (a
        data directory alone is not a history: a queue with no token would wait for ever)."""
        return (self.data / "token").exists()

    def token(self) -> str:
        try:
            return (self.data / "token").read_text().strip()
        except OSError:
            raise HistoryError(f"no submit token in {self.data}: boardlab history up") from None

    def _secret(self, name: str) -> str:
        path = self.data / name
        if not path.exists():   # 0600 from the start (a temporary file of mkstemp's, renamed)
            atomic_write(path, "s" + secrets.token_hex(24), mode=0o600)   # a letter first: SQUAD's DATABASE parser takes digits for numbers
        return path.read_text().strip()

    def _database(self) -> str:
        if self.db == "sqlite":
            return f"ENGINE=django.db.backends.sqlite3:NAME={self.data / 'db.sqlite3'}"
        port = self.saved().get("pg_port", 5432)
        return (f"ENGINE=django.db.backends.postgresql:NAME={self.pg_name}:USER={self.pg_name}:"
                f"PASSWORD={self._secret('pgpassword')}:HOST=127.0.0.1:PORT={port}")

    def _env(self) -> dict:
        return {**os.environ, "PATH": f"{VENV / 'bin'}:{os.environ.get('PATH', '')}",
                "SECRET_KEY": self._secret("secret"), "ENV": "production",
                "DATABASE": self._database(),
                "SQUAD_STATIC_DIR": str(self.data / "static"),
                "SQUAD_STORAGE_DIR": str(self.data / "storage"),
                "SQUAD_BASE_URL": self.url, "SQUAD_HOSTNAME": "127.0.0.1"}

    def _prepare(self) -> str:
        """migrate, collectstatic and the submit token in one Django process
        (history/squad_setup.py); a fresh SQLite database starts as a copy of the
        migrated template of this SQUAD version. Returns its output, the token last."""
        template = ""
        if self.db == "sqlite":
            lock = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:16]
            template = str(TEMPLATES_DIR / f"squad-{lock}.sqlite3")
            db = self.data / "db.sqlite3"
            if not db.exists() and os.path.exists(template):
                shutil.copyfile(template, db)
                os.chmod(db, 0o600)
        # umask: what Django and SQLite create (a fresh database, static files) is the owner's alone
        r = squad_python(SETUP, f"{GROUP}/{self.project}", template, env=self._env(), cwd=self.data,
                         umask=0o077)
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-6:])
            raise HistoryError(f"SQUAD's set-up (migrate, collectstatic, get_token) failed "
                               f"({r.returncode}):\n{tail}")
        return r.stdout

    def _private(self):
        """The data directory the owner's alone (0700: the database, attachments and
        secrets in it), the SQLite database and its journals 0600 (SQLite gives a
        journal its database's mode), also those an earlier version left readable."""
        os.chmod(self.data, 0o700)
        for f in self.data.glob("db.sqlite3*"):
            os.chmod(f, 0o600)

    def _static_dir(self) -> Path:
        found = list((VENV / "lib").glob("python3*/site-packages/squad/frontend/static"))
        if not (VENV / "bin" / "squad").exists() or not found:
            raise HistoryError(f"SQUAD is not installed in {VENV}: run scripts/setup-host.sh")
        return found[0]

    # ---- up, down, status -----------------------------------------------------------------
    def up(self):
        t0 = time.monotonic()
        progress(f"history {self.lab}: SQUAD on {self.url}, data in {self.data}")
        static = self._static_dir()
        for d in (self.data, self.data / "pids", self.data / "logs"):
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._private()
        if self.daemons.pid("squad"):
            progress(f"  squad: running (pid {self.daemons.pid('squad')})")
            return
        if tcp_open(self.port, "127.0.0.1", timeout=0.5):
            raise HistoryError(f"127.0.0.1:{self.port} is taken by another program: "
                               f"boardlab history up --port N")
        assets.install(static, progress=progress)
        saved = {"url": self.url, "port": self.port, "group": GROUP, "project": self.project, "db": self.db}
        if self.db == "postgresql":
            saved["pg_port"] = postgres.up(self.pg_user, echo=progress)
            postgres.ensure_database(self.pg_name, self.pg_name, self._secret("pgpassword"))
        (self.data / "server.json").write_text(json.dumps(saved) + "\n")
        token = self._prepare().strip().splitlines()[-1]
        self._private()
        atomic_write(self.data / "token", token + "\n", mode=0o600)
        env = self._env()
        self.daemons.start("squad", [str(VENV / "bin" / "squad"), "--fast", "--bind",
                                     f"127.0.0.1:{self.port}", "--workers", "2",
                                     "--no-control-socket"],
                           ready=lambda: tcp_open(self.port, "127.0.0.1", timeout=0.5),
                           timeout=60.0, env=env, cwd=self.data)
        progress(f"history up in {time.monotonic() - t0:.1f} s: {self.url}/{GROUP}/{self.project}/")

    def down(self):
        self.daemons.stop("squad")
        if self.db == "postgresql":
            postgres.down(self.pg_user, echo=progress)

    def status(self) -> dict:
        return {"lab": self.lab, "url": self.url, "project": f"{GROUP}/{self.project}",
                "data": str(self.data), "db": self.db, "squad_pid": self.daemons.pid("squad")}

    def is_up(self) -> bool:
        return self.daemons.pid("squad") is not None
