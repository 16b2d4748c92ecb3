"""What the tests run is what the set-up installs: a program the tests call that only an
earlier host happened to have fails first on a fresh one (qemu-user did: the project's
programs run under QEMU's user mode with each CPU they are built for)."""
import re
import shutil
import subprocess

import pytest

from boardlab.images import ownprograms
from paths import ROOT


def setup_packages() -> set[str]:
    text = (ROOT / "scripts/setup-host.sh").read_text()
    found = set()
    for body in re.findall(r"^[A-Z_]+_PACKAGES=\(\n(.*?)^\)", text, re.M | re.S):
        for line in body.splitlines():
            found.update(line.split("#", 1)[0].split())
    return found


def test_the_lists_are_read():
    assert {"qemu-system-arm", "gcc-powerpc-linux-gnu", "lava-server"} <= setup_packages()


@pytest.mark.parametrize("isa", sorted(ownprograms.CPUS))
def test_each_cpu_s_user_mode_qemu_comes_from_an_installed_package(isa):
    program = ownprograms.CPUS[isa].qemu_user[0]
    path = shutil.which(program)
    assert path, f"{program}: not on this host; scripts/setup-host.sh should install it"
    owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout.split(":")[0]
    assert owner in setup_packages(), f"{program} comes from {owner!r}, which scripts/setup-host.sh does not name"
