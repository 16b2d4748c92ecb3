"""The lab's LAVA tokens: one per role, kept in files, never on a command line (a
process's argv is world-readable in /proc/<pid>/cmdline, and `ps` shows it to every user).

Roles: `submit` (jobs in, their results out; after a failed job its board checked again),
`recheck` (Bad boards set Unknown, hourly), `arbiter` (LAVA's boards in Maintenance while a
person holds them). Each is a user of its own, no superuser, in one group with LAVA's
`change_device` permission (every role sets a device's health); a token each, so one
role's token is revoked without the others', and LAVA's device log names the role that
changed a board. Set-up (users, workers, devices) runs `lava-server manage` as root on the
server and needs no token: the superuser's token is not made, an earlier one of boardlab's
is revoked. A worker's token goes to a file of mode 0600 that lava-worker reads
(`--token-file`, LAVA 2023.01); lavacli's identities are written straight into its
configuration file, mode 0600 (`lavacli identities add --token` would carry the token in
its argv)."""
from __future__ import annotations

import os
from pathlib import Path

import yaml

from boardlab import yamltext
from boardlab.files import atomic_write
from boardlab.lava.errors import LavaFault

ROLES = ("submit", "recheck", "arbiter")
GROUP = "boardlab-device-health"
LEGACY = ("boardlab", "boardlab lava submit")   # the superuser's token an earlier set-up made


def role_user(role: str) -> str:
    return f"boardlab-{role}"


def role_identity(base: str, role: str) -> str:
    """The lavacli identity of a role: the base name submits (the default identity of
    `boardlab lava submit`), the others carry their role's name."""
    return base if role == "submit" else f"{base}-{role}"


# run by `lava-server manage shell -c`: no secret in it; the tokens come back on stdout
SETUP = f"""
from django.contrib.auth.models import Group, Permission, User
from linaro_django_xmlrpc.models import AuthToken
group, _ = Group.objects.get_or_create(name={GROUP!r})
group.permissions.add(Permission.objects.get(codename="change_device",
                                             content_type__app_label="lava_scheduler_app"))
AuthToken.objects.filter(user__username={LEGACY[0]!r}, description={LEGACY[1]!r}).delete()
for role in {ROLES!r}:
    user, made = User.objects.get_or_create(username="boardlab-" + role,
                                            defaults={{"email": "boardlab-" + role + "@localhost"}})
    if made:
        user.set_unusable_password()
        user.save()
    user.groups.add(group)
    description = "boardlab " + role
    token = (AuthToken.objects.filter(user=user, description=description).first()
             or AuthToken.objects.create(user=user, description=description))
    print("role", role, token.secret)
"""


def role_tokens(stdout: str) -> dict[str, str]:
    """{role: token} from SETUP's output (Django may print other lines first)."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "role" and parts[1] in ROLES:
            out[parts[1]] = parts[2]
    if set(out) != set(ROLES):
        raise LavaFault(f"LAVA's role tokens were not made (got: {', '.join(out) or 'none'})")
    return out


def lavacli_config() -> Path:
    """lavacli's configuration file, where lavacli itself looks (lavacli/__init__.py)."""
    return Path(os.path.expanduser(os.path.join(os.environ.get("XDG_CONFIG_HOME", "~/.config"),
                                                "lavacli.yaml")))


def identity_entry(name: str | None, path: Path | None = None) -> dict:
    """A lavacli identity's {uri, username, token} ({} when it is not configured)."""
    try:
        config = yamltext.load((path or lavacli_config()).read_text()) or {}
    except (FileNotFoundError, ValueError):
        return {}
    entry = config.get(name or "default") if isinstance(config, dict) else None
    return entry if isinstance(entry, dict) else {}


def write_identities(entries: dict[str, dict], path: Path | None = None) -> Path:
    """Identities {name: {uri, username, token}} into lavacli's configuration (the others
    kept), written whole with mode 0600, its directory made 0700 if missing."""
    path = path or lavacli_config()
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True)
    try:
        config = yamltext.load(path.read_text()) or {}
    except FileNotFoundError:
        config = {}
    if not isinstance(config, dict):
        config = {}
    config.update(entries)
    atomic_write(path, yaml.safe_dump(config, default_flow_style=False), mode=0o600)
    return path


def write_role_identities(base: str, uri: str, tokens: dict[str, str], path: Path | None = None) -> Path:
    """Each role's lavacli identity (role_identity), its user and token, into lavacli's
    configuration."""
    return write_identities({role_identity(base, role): {"uri": uri, "username": role_user(role),
                                                         "token": token}
                             for role, token in tokens.items()}, path)


def write_token_file(path: Path, token: str) -> Path:
    """A worker's token, mode 0600 from the start, for lava-worker --token-file."""
    atomic_write(Path(path), token + "\n", mode=0o600)
    return Path(path)
