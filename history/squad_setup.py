"""Run by the history's own venv (.venv-squad), not imported by boardlab: what `boardlab
history up` does before it starts the server, in one Django process instead of three
squad-admin calls (each starts Django: about 2 CPU-seconds). argv: the group/project to
make a submit token for, and a SQLite template path or ''. The environment is squad's
(DATABASE, SECRET_KEY, SQUAD_STATIC_DIR, ...). Prints the token on its last line.

A fresh SQLite database is migrated once per SQUAD version: the template is the database
right after its first migration (no group, project, user or token yet), copied by the
caller for the next fresh database; migrate then only checks it."""
import os
import shutil
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "squad.settings")


def main():
    project, template = sys.argv[1], sys.argv[2]
    import django
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    call_command("migrate", interactive=False, verbosity=0)
    if template and not os.path.exists(template):
        connection.close()   # the file whole, nothing in flight
        tmp = f"{template}.{os.getpid()}"
        os.makedirs(os.path.dirname(template), exist_ok=True)
        shutil.copyfile(connection.settings_dict["NAME"], tmp)
        os.replace(tmp, template)
    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("get_token", project)


if __name__ == "__main__":
    main()
