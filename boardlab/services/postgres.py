"""The host's PostgreSQL cluster, shared by the lab's servers (the LAVA server; the
history when it is asked to keep its data there). No systemd here: a cluster that is down
is started with pg_ctlcluster. Who uses a cluster the lab started is written down
(/var/lib/boardlab/postgres.users, one user a line, under a lock), and the cluster is
stopped when the last of them goes down; one the host had running is never stopped."""
from __future__ import annotations

import fcntl
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from boardlab.errors import LabFault

USERS = Path(os.environ.get("BOARDLAB_STATE_DIR", "/var/lib/boardlab")) / "postgres.users"


class PostgresError(LabFault):
    part = "postgres"


@contextmanager
def _locked():
    USERS.parent.mkdir(parents=True, exist_ok=True)
    with open(USERS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _clusters() -> list[tuple[str, str, str, str]]:
    """(version, cluster, port, status) of each cluster pg_lsclusters knows."""
    try:
        out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise PostgresError("no PostgreSQL cluster (pg_lsclusters): scripts/setup-host.sh installs it") from None
    return [tuple(line.split()[:4]) for line in out.splitlines() if line.strip()]


def _users() -> list[str]:
    return USERS.read_text().split() if USERS.exists() else []


def up(user: str, echo=print) -> int:
    """The cluster running, with `user` among its users if the lab started it; its port."""
    with _locked():
        ver, cluster, port, status = _clusters()[0]
        users = _users()
        if status != "online":
            subprocess.run(["pg_ctlcluster", ver, cluster, "start"], check=True)
            echo(f"{user}: PostgreSQL {ver}/{cluster} started")
            users = []          # a list from before the cluster went down is stale
        elif not users:
            return int(port)    # the host's own: not ours to stop
        USERS.write_text("".join(f"{u}\n" for u in sorted(set(users) | {user})))
        return int(port)


def down(user: str, echo=print) -> None:
    """`user` no longer needs the cluster; stopped when it was the lab's last user."""
    with _locked():
        users = _users()
        if user not in users:
            return
        users.remove(user)
        if users:
            USERS.write_text("".join(f"{u}\n" for u in users))
            echo(f"{user}: PostgreSQL left running for {', '.join(users)}")
            return
        USERS.unlink()
        for ver, cluster, _port, status in _clusters():
            if status == "online":
                subprocess.run(["pg_ctlcluster", ver, cluster, "stop", "--", "-m", "fast"], check=False)
                echo(f"{user}: PostgreSQL {ver}/{cluster} stopped")


def psql(sql: str, database: str = "postgres") -> str:
    """One statement as the postgres superuser (peer authentication over the socket), given
    on psql's standard input: a password in it never shows in a process's arguments."""
    r = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-XAtq", "-v", "ON_ERROR_STOP=1",
                        "-d", database, "-f", "-"], input=sql, capture_output=True, text=True)
    if r.returncode != 0:
        raise PostgresError(f"psql: {r.stderr.strip()[-300:]}")
    return r.stdout.strip()


def ensure_database(name: str, role: str, password: str) -> None:
    """A role with this password owning the database `name` (both made once)."""
    if not psql(f"SELECT 1 FROM pg_roles WHERE rolname = '{role}'"):
        psql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    else:
        psql(f"ALTER ROLE {role} PASSWORD '{password}'")
    if not psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'"):
        psql(f"CREATE DATABASE {name} OWNER {role}")


def drop_database(name: str, role: str) -> None:
    psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(f"DROP ROLE IF EXISTS {role}")


def status() -> str:
    return _clusters()[0][3]
