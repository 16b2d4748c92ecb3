"""lava.manage: LAVA's management commands in one process at a server's `up` give what
each in a process of its own gives (status, output, the error's line); a command's own
print is in its output, as on the command line, never taken for the answer's end. A stand-in `lava-server` here runs the program with a
Django of a few lines (the real one: tests/test_secrets.py, the LAVA server's own up)."""
import os
import sys

from boardlab.lava import manage

FAKE_DJANGO = {
    "django/__init__.py": "",
    "django/core/__init__.py": "",
    "django/core/management/__init__.py": """
from django.core.management.base import CommandError
def call_command(name, *args, stdout, stderr):
    print('a stray line of the command itself')
    if name == 'devices' and args[:1] == ('details',) and args[1] != 'qemu-arm':
        raise CommandError("Unable to find device '%s'" % args[1])
    if name == 'fail':
        raise SystemExit(3)
    stdout.write('hostname   : %s\\n' % args[1])
""",
    "django/core/management/base.py": "class CommandError(Exception):\n    pass\n",
}
FAKE_LAVA_SERVER = f"""#!{sys.executable}
import subprocess, sys
# lava-server manage ARGS: shell -c CODE runs CODE; a command runs alone and says its answer
if sys.argv[2:4] == ['shell', '-c']:
    exec(sys.argv[4], {{'__name__': '__main__'}})
else:
    from django.core.management import call_command
    from django.core.management.base import CommandError
    try:
        call_command(*sys.argv[2:], stdout=sys.stdout, stderr=sys.stderr)
    except CommandError as e:
        sys.exit('CommandError: %s' % e)
"""


def _stand_in(tmp_path, monkeypatch):
    for rel, text in FAKE_DJANGO.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "lava-server").write_text(FAKE_LAVA_SERVER)
    os.chmod(tmp_path / "bin" / "lava-server", 0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))


def test_one_process_answers_as_a_process_each(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch)
    alone = manage.run("devices", "details", "sandpoint")
    assert alone.returncode == 1 and "Unable to find device 'sandpoint'" in alone.stderr
    with manage.one_process():
        found = manage.run("devices", "details", "qemu-arm")
        missing = manage.run("devices", "details", "sandpoint")
        printed = manage.run("shell", "-c", "print('%d' % (6 * 7))")
        broken = manage.run("shell", "-c", "raise ValueError('no such worker')")
        ended = manage.run("fail")
    assert found.returncode == 0
    assert found.stdout == "a stray line of the command itself\nhostname   : qemu-arm\n"
    assert missing.returncode == 1 and missing.stderr == "CommandError: Unable to find device 'sandpoint'\n"
    assert (printed.returncode, printed.stdout) == (0, "42\n")
    assert broken.returncode == 1 and "ValueError: no such worker" in broken.stderr
    assert ended.returncode == 3
    assert not manage._session   # ended on the way out
