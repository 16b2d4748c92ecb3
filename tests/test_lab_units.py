"""The systemd units `boardlab gen` writes for a real lab: the exporter, the arbiter and
the recheck timer come back by themselves, in order after what they need, each LAVA
role with its own identity; systemd itself reads them without a complaint."""
import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from boardlab import envgen
from boardlab.facts.board import PLACES_DIR
from boardlab.facts.labfacts import load_lab
from boardlab.facts.labhosts import lab_hosts, load_lab_host
from boardlab.lab import units
from boardlab.lava.identities import role_identity


def _keys(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln and not ln.startswith("#"))


@functools.cache   # one `gen` for the module's tests: the project's facts do not change under them
def _generated() -> dict[str, str]:
    return {p.relative_to(PLACES_DIR).as_posix(): text for p, text in envgen.generated_files().items()
            if p.suffix in (".service", ".timer") and p.parent.name in ("labhost1", "management", "vlab")}


def test_the_exporter_restarts_whatever_happened_after_its_consoles_and_pdus():
    unit = _keys(units.exporter_unit(load_lab_host("labhost1"), load_lab()))
    assert (unit["Restart"], unit["RestartSec"], unit["StartLimitIntervalSec"]) == ("always", "5", "0")
    assert unit["After"].split() == ["network-online.target", "ser2net.service", "pdudaemon.service"]
    assert unit["ExecStart"] == (f"/opt/labgrid/bin/labgrid-exporter --isolated --name labhost1 "
                                 f"-c {load_lab().coordinator} /etc/labgrid/exporter.yaml")
    assert unit["WantedBy"] == "multi-user.target"


def test_the_arbiter_comes_after_the_coordinator_and_lava_with_its_own_identity():
    unit = _keys(_generated()["management/boardlab-arbiter.service"])
    assert (unit["Restart"], unit["StartLimitIntervalSec"], unit["KillMode"]) == ("always", "0", "mixed")
    for key in ("After", "Wants"):   # wanted, not required: their restart does not stop it
        assert {"labgrid-coordinator.service", "lava-server-gunicorn.service"} <= set(unit[key].split())
    assert "Requires" not in unit and "BindsTo" not in unit
    argv = unit["ExecStart"].split()
    assert argv[:3] == ["/opt/boardlab/.venv/bin/python", "-m", "boardlab.lab.arbiterd"]
    assert argv[argv.index("--identity") + 1] == role_identity("boardlab", "arbiter") == "boardlab-arbiter"
    assert argv[argv.index("--state") + 1].startswith(f"/var/lib/{unit['StateDirectory']}/")
    real = sorted(b for h in lab_hosts() if h.kind == "real" for b in h.boards)
    assert argv[argv.index("--state") + 2:] == real and "qemu-arm" not in argv


def test_the_recheck_runs_hourly_as_its_own_role():
    made = _generated()
    service = _keys(made["management/boardlab-lab-recheck.service"])
    timer = _keys(made["management/boardlab-lab-recheck.timer"])
    assert service["Type"] == "oneshot"
    assert service["ExecStart"].endswith("boardlab lab recheck --identity boardlab-recheck")
    assert (timer["OnCalendar"], timer["Persistent"], timer["WantedBy"]) == ("*-*-* *:15:00", "true", "timers.target")


def test_gen_writes_units_for_real_hosts_only():
    assert set(_generated()) == {"labhost1/labgrid-exporter.service", "management/boardlab-arbiter.service",
                                 "management/boardlab-lab-recheck.service", "management/boardlab-lab-recheck.timer",
                                 "labhost1/boardlab-lan-firewall.service"}


def test_systemd_reads_every_generated_unit_without_a_complaint():
    """`systemd-analyze verify`, as an unprivileged user (as root it touches
    /run/systemd), on copies whose Exec lines run /bin/true: the programs are installed
    under /opt on the lab's hosts, not here."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed")
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root, and no setpriv to drop to nobody")
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        for rel, text in _generated().items():
            copy = Path(d) / Path(rel).name
            copy.write_text(re.sub(r"^(Exec\w+=[-+!@]*)\S+", r"\1/bin/true", text, flags=re.M))
            os.chmod(copy, 0o644)
        r = subprocess.run(prefix + ["systemd-analyze", "verify", "--man=no", *sorted(Path(d).iterdir())],
                           capture_output=True, text=True, env={"PATH": os.environ["PATH"], "HOME": d})
    assert (r.returncode, r.stderr + r.stdout) == (0, "")
