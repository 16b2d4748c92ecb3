"""Reserving the virtual boards through labgrid, as developers reserve real ones: the
lab's coordinator on the management network and an exporter on each virtual lab host
(qemu-arm on vlab, qemu-ppc on vlab2; `boardlab vlab up` runs them), places created by
`boardlab places sync`, two users (alice, bob) with labgrid-client."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlab.facts.board import load_board
from boardlab.facts.labfacts import load_lab
from boardlab.net import wait_for
from paths import ROOT

pytestmark = pytest.mark.vlab

COORD = load_lab().coordinator
BIN = Path(sys.executable).parent


def client(*args, user="alice", token=None, timeout=60, check=True):
    env = {**os.environ, "LG_COORDINATOR": COORD, "LG_USERNAME": user}
    env.pop("LG_TOKEN", None)
    if token:
        env["LG_TOKEN"] = token
    r = subprocess.run([str(BIN / "labgrid-client"), *args], capture_output=True, text=True,
                       env=env, timeout=timeout)
    if check:
        assert r.returncode == 0, f"labgrid-client {' '.join(args)}: {r.stderr}{r.stdout}"
    return r


@pytest.fixture(scope="module")
def coordinator(vlab):
    """The lab's coordinator, with both lab hosts' exporters' resources at it (a lab host
    exports its boards whether their images are built or not: a test that boots the
    PowerPC board asks for ppc_board too, and takes its turn on it)."""
    wait_for(lambda: all(f"{host}/{b}/NetworkSerialPort" in client("resources").stdout
                         for host, b in (("vlab", "qemu-arm"), ("vlab2", "qemu-ppc"))), 30,
             "both lab hosts' resources at the coordinator")
    return COORD


def sync():
    return subprocess.run([sys.executable, "-m", "boardlab.cli", "places", "sync"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_places_sync_creates_the_place_with_tags_once(coordinator):
    first = sync()
    assert first.returncode == 0, first.stderr
    again = sync()
    assert again.returncode == 0 and again.stdout.split("\n")[:2] == [
        "places of vlab: up to date", "places of vlab2: up to date"]
    show = client("-p", "qemu-arm", "show").stdout
    assert "tags: arch=arm, board=qemu-arm, clock=deterministic, cpu=cortex-a15, ram=128mb" in show
    assert "vlab/qemu-arm/*" in show
    ppc = client("-p", "qemu-ppc", "show").stdout
    assert "tags: arch=ppc, board=qemu-ppc, clock=deterministic, cpu=e500mc, ram=128mb" in ppc
    assert "vlab2/qemu-ppc/*" in ppc           # the second lab host's exporter


def test_reserve_acquire_boot_console_power_release(coordinator, tmp_path):
    sync()
    # alice reserves by tag and acquires
    out = client("reserve", "--wait", "--shell", "board=qemu-arm").stdout
    token = out.strip().split("=")[1]
    client("-p", "+", "acquire", token=token)
    try:
        # bob cannot take it, and is told who has it
        bob = client("-p", "qemu-arm", "acquire", user="bob", check=False)
        assert bob.returncode != 0
        assert "already acquired by" in bob.stderr and "alice" in bob.stderr

        # the boot suite through RemotePlace, gated against the stored baselines
        r = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", "lab/remote/qemu-arm.yaml",
                            "--lg-coordinator", COORD, "testsuites/test_boot_time.py",
                            "testsuites/test_shell.py", "--boot-repeats", "1", "-q",
                            "-p", "no:cacheprovider", "--run-dir", str(tmp_path / "run")],
                           cwd=ROOT, capture_output=True, text=True, timeout=600,
                           env={**os.environ, "LG_USERNAME": "alice"})
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        assert "3 passed" in r.stdout

        # an interactive console (microcom in a terminal) while power is cycled
        tmux = ["tmux", "-L", "boardlab-test"]   # a private tmux server, ended below
        env = {**os.environ, "LG_COORDINATOR": COORD, "LG_USERNAME": "alice"}
        subprocess.run(tmux + ["new-session", "-d", "-s", "console", "-x", "160", "-y", "50",
                               f"{BIN / 'labgrid-client'} -p qemu-arm console"], env=env, check=True)
        try:
            time.sleep(2)
            client("-p", "qemu-arm", "power", "cycle")

            def screen():
                return subprocess.run(tmux + ["capture-pane", "-p", "-t", "console"],
                                      capture_output=True, text=True).stdout
            wait_for(lambda: "Hit any key to stop autoboot" in screen(), 30, "U-Boot on the console")
            subprocess.run(tmux + ["send-keys", "-t", "console", "Enter"], check=True)
            time.sleep(0.5)
            subprocess.run(tmux + ["send-keys", "-t", "console", "version", "Enter"], check=True)
            wait_for(lambda: "U-Boot 2023.01" in screen().split("version")[-1], 15,
                     "the answer to a command typed on the console")
        finally:
            subprocess.run(tmux + ["kill-server"], capture_output=True)
        client("-p", "qemu-arm", "power", "off")
        assert client("-p", "qemu-arm", "power", "get").stdout.strip().endswith("off")

        # bob waits for the place; alice releases it and ends her reservation
        waiting = subprocess.Popen([str(BIN / "labgrid-client"), "reserve", "--wait",
                                    "board=qemu-arm"], stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "LG_COORDINATOR": COORD, "LG_USERNAME": "bob"})
        try:
            time.sleep(2)
            assert waiting.poll() is None, "bob's reservation must wait while alice holds it"
        finally:
            client("-p", "+", "release", token=token)
            client("cancel-reservation", token)
            token = None
        try:
            out, _ = waiting.communicate(timeout=60)   # returns once allocated
        finally:
            if waiting.poll() is None:
                waiting.kill()
        assert waiting.returncode == 0, out
        bob_token = out.split("token: ")[1].split()[0]
        listing = client("reservations").stdout
        bob_entry = listing.split(f"Reservation '{bob_token}':")[1].split("Reservation '")[0]
        assert "state: allocated" in bob_entry and "main: qemu-arm" in bob_entry
        client("cancel-reservation", bob_token, user="bob")
    finally:
        if token:
            client("-p", "+", "release", token=token, check=False)
            client("cancel-reservation", token, check=False)


def outlets_on():
    """The boards powered on, by each lab host's power switch."""
    import json
    import urllib.request
    on = set()
    for board in ("qemu-arm", "qemu-ppc"):
        switch = load_board(board).power.url.split("/outlet/")[0]
        with urllib.request.urlopen(switch + "/", timeout=5) as r:
            on |= {o["board"] for o in json.loads(r.read()).values() if o["on"]}
    return on


def test_reserve_by_arch_and_run_both_boards_at_once(coordinator, ppc_board, tmp_path):
    """alice reserves arch=ppc and gets the board of the second lab host, bob arch=arm;
    each runs the shell suite on his or her board through RemotePlace, at the same time,
    on two lab hosts; each kernel is staged to its own host's TFTP directory over ssh."""
    sync()
    tokens = {}
    try:
        # bob's arm board is the deterministic one: the lab's other arm board (qemu-arm-noisy)
        # would match arch=arm alone (and "main: qemu-arm" below is a prefix of its name)
        for user, arch in (("alice", "arch=ppc"), ("bob", "arch=arm clock=deterministic")):
            out = client("reserve", "--wait", "--shell", *arch.split(), user=user).stdout
            tokens[user] = out.strip().split("=")[1]
            client("-p", "+", "acquire", user=user, token=tokens[user])
        listing = client("reservations").stdout
        assert "main: qemu-ppc" in listing.split(f"Reservation '{tokens['alice']}':")[1].split("Reservation")[0]
        assert "main: qemu-arm\n" in listing.split(f"Reservation '{tokens['bob']}':")[1].split("Reservation")[0] + "\n"
        staged = {}
        for board in ("qemu-ppc", "qemu-arm"):   # gone from each host's TFTP directory
            facts = load_board(board)
            staged[board] = Path(facts.tftp.dir) / facts.images.kernels[facts.images.default_kernel].uimage
            staged[board].unlink(missing_ok=True)
        runs = {}
        for user, board in (("alice", "qemu-ppc"), ("bob", "qemu-arm")):
            runs[board] = subprocess.Popen(
                [sys.executable, "-m", "pytest", "--lg-env", f"lab/remote/{board}.yaml",
                 "--lg-coordinator", COORD, "testsuites/test_shell.py", "-q", "-p", "no:cacheprovider",
                 "--run-dir", str(tmp_path / board)], cwd=ROOT, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, env={**os.environ, "LG_USERNAME": user})
        both_on = False
        while any(p.poll() is None for p in runs.values()):
            both_on |= outlets_on() >= {"qemu-arm", "qemu-ppc"}
            time.sleep(0.2)
        for board, p in runs.items():
            out = p.stdout.read()
            assert p.returncode == 0, f"{board}: {out[-3000:]}"
            assert "2 passed" in out, out[-2000:]
        assert both_on, "the two boards never ran at the same time"
        for board, path in staged.items():   # the remote TFTP provider: ssh to its host
            facts = load_board(board)
            assert path.read_bytes() == (Path(facts.images.dir) / path.name).read_bytes(), board
    finally:
        for user, token in tokens.items():
            client("-p", "+", "release", user=user, token=token, check=False)
            client("cancel-reservation", token, user=user, check=False)


def test_an_exporter_restarted_brings_its_places_back_and_the_acquired_place_stays(coordinator, tmp_path):
    """A fault of a distributed lab: a lab host's exporter (the first's: the default
    board's, which this session has to itself) goes away (stopped by its PID) and comes
    back. Its resources are orphaned meanwhile, alice's acquisition of the place holds,
    and once the exporter is back her suite runs on it."""
    from boardlab.vlab.host import VirtualLabHost
    sync()
    host = VirtualLabHost("vlab")
    out = client("reserve", "--wait", "--shell", "board=qemu-arm").stdout
    token = out.strip().split("=")[1]
    client("-p", "+", "acquire", token=token)
    try:
        assert host.stop_service("exporter")
        try:
            wait_for(lambda: "vlab/qemu-arm/NetworkSerialPort" not in client("resources").stdout
                     or "rphaned" in client("resources", "-v").stdout, 30, "the resources orphaned")
            assert "alice" in client("-p", "qemu-arm", "show").stdout   # held while it is away
        finally:
            host.start_service("exporter")   # waits until its resources are at the coordinator
        show = client("-p", "qemu-arm", "show").stdout
        assert "alice" in show, show             # the acquisition survived the restart
        r = subprocess.run([sys.executable, "-m", "pytest", "--lg-env", "lab/remote/qemu-arm.yaml",
                            "--lg-coordinator", COORD, "testsuites/test_shell.py", "-q", "-p", "no:cacheprovider",
                            "--run-dir", str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True,
                           timeout=600, env={**os.environ, "LG_USERNAME": "alice", "LG_TOKEN": token})
        assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout[-3000:]
    finally:
        client("-p", "+", "release", token=token, check=False)
        client("cancel-reservation", token, check=False)
