"""LAVA's own schema checks of rendered device configs and jobs."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from boardlab.lava.errors import LavaFault
from boardlab.lava.files import SYSTEM_PYTHON

# a job: the dispatcher's schema and the server's (lava_scheduler_app: what a submission and
# a health check must pass; stricter, e.g. no dot in a test case's name), where installed
_VALIDATE = r"""
import json, sys, yaml
from lava_common.schemas import validate as validate_job
from lava_common.schemas.device import validate as validate_device
try:
    from django.conf import settings
    settings.configure(EXTRA_CONTEXT_VARIABLES=[])
    from lava_scheduler_app.schema import validate_submission
except ImportError:
    validate_submission = lambda data: True
errors = {}
for kind, path in json.loads(sys.argv[1]):
    try:
        data = yaml.load(open(path), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))   # libyaml: a tenth of the CPU
        (validate_device if kind == "device" else validate_job)(data)
        if kind == "job":
            validate_submission(data)
    except Exception as exc:
        errors[path] = f"{type(exc).__name__}: {exc}"
print(json.dumps(errors))
"""


def validate(files: list[tuple[str, Path]]) -> dict[str, str]:
    """Validate rendered device configs ('device') and jobs ('job') with LAVA's own
    schemas (lava_common, Debian's python3). Returns {path: error} of the invalid."""
    if not Path(SYSTEM_PYTHON).exists():
        raise LavaFault(f"{SYSTEM_PYTHON} not found (LAVA's schemas need Debian's python3)")
    arg = json.dumps([(k, str(p)) for k, p in files])
    r = subprocess.run([SYSTEM_PYTHON, "-c", _VALIDATE, arg], capture_output=True, text=True)
    if r.returncode != 0:
        raise LavaFault("LAVA's schema validation could not run (is lava-dispatcher installed?):\n"
                        + r.stderr[-2000:])
    return json.loads(r.stdout)

