"""The lab's secrets stay out of every command line (a process's argv is world-readable in
/proc/<pid>/cmdline) and in files only their owner reads: LAVA's worker and role tokens,
SQUAD's database, secret key and submit token."""
import contextlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from boardlab.lava import identities

TOKENS = {role: f"{n:x}" * 40 for n, role in enumerate(identities.ROLES, start=10)}


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


class FakeLava:
    """lava-server manage and the processes up starts, recorded instead of run."""

    def __init__(self, arbiter_rounds=True):
        self.argv = []
        self.worker_tokens = {}
        self.arbiter_rounds = arbiter_rounds

    def run(self, cmd, **kw):
        self.argv.append(list(cmd))
        out, rc = "", 0
        if cmd[:4] == ["lava-server", "manage", "shell", "-c"] and cmd[4] == identities.SETUP:
            out = "some Django warning\n" + "".join(f"role {r} {t}\n" for r, t in TOKENS.items())
        elif cmd[2:4] == ["workers", "details"]:
            token = self.worker_tokens.setdefault(cmd[4], f"{len(self.worker_tokens) + 1:x}" * 40)
            out = f"hostname   : {cmd[4]}\ntoken      : {token}\nstate      : Online\n"
        return subprocess.CompletedProcess(cmd, rc, out, "")

    def popen(self, cmd, **kw):
        self.argv.append(list(cmd))
        if "boardlab.lab.arbiterd" in cmd and self.arbiter_rounds:   # its first round, at once
            state = Path(cmd[cmd.index("--state") + 1])
            state.write_text(json.dumps({"round": {"at": time.time() + 1}}))
        return SimpleNamespace(pid=os.getpid())


@pytest.fixture
def lava_up(tmp_path, monkeypatch):
    """`LocalLavaServer.up` with every process faked: what it would run, and the files it writes."""
    return faked_up(tmp_path, monkeypatch, FakeLava())


def faked_up(tmp_path, monkeypatch, fake):
    from boardlab.lava import localserver
    monkeypatch.setattr(localserver.subprocess, "run", fake.run)
    monkeypatch.setattr(localserver.subprocess, "Popen", fake.popen)
    # each manage command a process of its own, so the fake sees its argv (one process
    # takes them on its stdin: tests/test_lava_manage.py)
    monkeypatch.setattr(localserver.manage, "one_process", contextlib.nullcontext)
    monkeypatch.setattr(localserver.postgres, "up", lambda *a, **k: 5432)
    opened = iter([False])   # the port is free, then the web server answers
    monkeypatch.setattr(localserver, "tcp_open", lambda *a, **k: next(opened, True))
    monkeypatch.setattr(localserver, "CONFIG", tmp_path / "dispatcher-config")
    monkeypatch.setattr(localserver, "DISPATCHER_D", tmp_path / "dispatcher.d")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    srv = localserver.LocalLavaServer(tmp_path / "server", port=18180, identity="boardlab-test",
                                      echo=lambda *a: None, arbiter_state=tmp_path / "server" / "arbiter.json")
    srv.up()
    return srv, fake, tmp_path


def test_no_token_is_in_the_argv_of_anything_the_lava_server_starts(lava_up):
    """Every command `boardlab lava server up` runs or starts, scanned for every token it
    handles: the roles', the workers'. lava-worker reads its token from a file, lavacli
    from its configuration."""
    srv, fake, _ = lava_up
    secrets = list(TOKENS.values()) + list(fake.worker_tokens.values())
    assert len(fake.worker_tokens) == len(srv.labs) >= 1
    leaks = [(s, cmd) for cmd in fake.argv for s in secrets if any(s in arg for arg in cmd)]
    assert leaks == []
    workers = [cmd for cmd in fake.argv if "lava-worker" in cmd]
    assert len(workers) == len(srv.labs)
    for cmd in workers:
        assert "--token" not in cmd
        token_file = Path(cmd[cmd.index("--token-file") + 1])
        assert token_file.read_text().strip() in fake.worker_tokens.values()
        assert _mode(token_file) == 0o600
    assert not any(cmd[:3] == ["lavacli", "identities", "add"] for cmd in fake.argv)


def test_each_role_has_its_own_token_in_lavaclis_configuration_0600(lava_up):
    srv, fake, tmp = lava_up
    config = tmp / "config" / "lavacli.yaml"
    assert _mode(config) == 0o600
    ids = yaml.safe_load(config.read_text())
    for role, token in TOKENS.items():
        entry = ids[identities.role_identity("boardlab-test", role)]
        assert entry == {"uri": "http://127.0.0.1:18180/RPC2", "username": f"boardlab-{role}",
                         "token": token}
    assert len(set(TOKENS.values())) == len(identities.ROLES)
    arbiter = next(cmd for cmd in fake.argv if "boardlab.lab.arbiterd" in cmd)
    assert arbiter[arbiter.index("--identity") + 1] == "boardlab-test-arbiter"


def test_the_role_users_are_no_superusers_and_set_up_makes_no_superusers_token():
    """Set-up runs `lava-server manage` as root and needs no token; the roles set device
    health through a group's change_device permission."""
    assert "is_superuser" not in identities.SETUP and "--superuser" not in identities.SETUP
    assert 'codename="change_device"' in identities.SETUP
    assert "AuthToken.objects.filter(user__username='boardlab'" in identities.SETUP \
        and ".delete()" in identities.SETUP   # an earlier set-up's superuser token revoked
    with pytest.raises(identities.LavaFault, match="role tokens were not made"):
        identities.role_tokens("role submit abc\n")


def test_lavacli_identities_keep_the_others_and_tighten_the_mode(tmp_path):
    path = tmp_path / "cfg" / "lavacli.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"someone": {"uri": "http://x/RPC2"}}))
    os.chmod(path, 0o644)
    identities.write_role_identities("lab", "http://s/RPC2", TOKENS, path)
    data = yaml.safe_load(path.read_text())
    assert data["someone"] == {"uri": "http://x/RPC2"} and data["lab-recheck"]["token"] == TOKENS["recheck"]
    assert _mode(path) == 0o600


@pytest.mark.vlab
@pytest.mark.lava_server
def test_no_running_process_shows_a_token_in_proc_cmdline(vlab, tmp_path):
    """The real processes, read back from /proc/*/cmdline while the local LAVA server and
    its workers run: none carries a role's token or a worker's. (lava-worker itself hands
    each lava-run that job's own token in its argv, LAVA's doing; no job runs here.)"""
    from boardlab.lava.localserver import LocalLavaServer
    from boardlab.net import free_port
    with LocalLavaServer(tmp_path / "server", port=free_port(), identity="boardlab-test") as srv:
        srv.up()
        ids = yaml.safe_load(identities.lavacli_config().read_text())
        secrets = [ids[identities.role_identity(srv.identity, r)]["token"] for r in identities.ROLES]
        secrets += [(tmp_path / "server" / f"worker-{lab.name}" / "token").read_text().strip()
                    for lab in srv.labs]
        assert all(len(s) >= 32 for s in secrets)
        seen = 0
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes()
            except OSError:
                continue   # ended meanwhile
            seen += 1
            assert not any(s.encode() in argv for s in secrets), argv.replace(b"\0", b" ")[:300]
        assert seen > len(srv.pids)


def test_the_historys_database_and_secrets_are_the_owners_alone(tmp_path, monkeypatch):
    """SQUAD's data directory 0700, its SQLite database (copied from the template, or made
    by Django under umask 077) and its journals 0600, the secret key in its environment
    and a file of mode 0600, never in an argument."""
    import hashlib
    from boardlab.history import server
    data = tmp_path / "h"
    data.mkdir(mode=0o755)
    monkeypatch.setattr(server, "TEMPLATES_DIR", tmp_path / "templates")
    lock = hashlib.sha256(server.LOCK.read_bytes()).hexdigest()[:16]
    template = tmp_path / "templates" / f"squad-{lock}.sqlite3"
    template.parent.mkdir()
    template.write_text("a migrated database")
    os.chmod(template, 0o644)
    calls = []

    def squad_python(*args, **kw):
        calls.append((args, kw))
        (data / "db.sqlite3-journal").write_text("")
        os.chmod(data / "db.sqlite3-journal", 0o644)   # as an earlier version left it
        return subprocess.CompletedProcess(args, 0, "migrated\n" + "t" * 40 + "\n", "")
    monkeypatch.setattr(server, "squad_python", squad_python)
    srv = server.HistoryServer("vlab", port=18300, data=data)
    srv._prepare()
    srv._private()
    assert _mode(data) == 0o700
    assert _mode(data / "db.sqlite3") == 0o600 and _mode(data / "db.sqlite3-journal") == 0o600
    assert _mode(data / "secret") == 0o600
    (args, kw), = calls
    assert kw["umask"] == 0o077
    key = (data / "secret").read_text().strip()
    assert kw["env"]["SECRET_KEY"] == key and not any(key in str(a) for a in args)
