"""Reserving the virtual board through labgrid, as developers reserve real ones: a
coordinator and the lab host's exporter on 127.0.0.1, places created by
`boardlab places sync`, two users (alice, bob) with labgrid-client."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardlab.net import tcp_open, wait_for
from paths import ROOT

pytestmark = pytest.mark.vlab

PORT = 20418          # not the default 20408: a developer's own coordinator may run
COORD = f"127.0.0.1:{PORT}"
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
def coordinator(vlab, tmp_path_factory):
    """Coordinator + the virtual lab host's exporter; both stopped by PID afterwards."""
    work = tmp_path_factory.mktemp("coordinator")
    procs = []
    try:
        procs.append(subprocess.Popen([str(BIN / "labgrid-coordinator"), "-l", COORD], cwd=work,
                                      stdout=open(work / "coordinator.log", "w"),
                                      stderr=subprocess.STDOUT))
        wait_for(lambda: tcp_open(PORT), 20, "coordinator listening")
        procs.append(subprocess.Popen([str(BIN / "labgrid-exporter"), "-c", COORD, "--name", "vlab",
                                       str(ROOT / "places/vlab/exporter.yaml")], cwd=work,
                                      stdout=open(work / "exporter.log", "w"),
                                      stderr=subprocess.STDOUT))
        wait_for(lambda: all(f"vlab/{b}/NetworkSerialPort" in client("resources").stdout
                             for b in ("qemu-arm", "qemu-ppc")), 30,
                 "exporter's resources at the coordinator")
        yield work
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def sync():
    return subprocess.run([sys.executable, "-m", "boardlab.cli", "places", "sync", "--lab", "vlab",
                           "--coordinator", COORD], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_places_sync_creates_the_place_with_tags_once(coordinator):
    first = sync()
    assert first.returncode == 0, first.stderr
    again = sync()
    assert again.returncode == 0 and "up to date" in again.stdout
    show = client("-p", "qemu-arm", "show").stdout
    assert "tags: arch=arm, board=qemu-arm, cpu=cortex-a15, ram=128mb" in show
    assert "vlab/qemu-arm/*" in show
    assert "tags: arch=ppc, board=qemu-ppc, cpu=e500mc, ram=128mb" in client("-p", "qemu-ppc", "show").stdout


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
    import json
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:8101/", timeout=5) as r:
        return {o["board"] for o in json.loads(r.read()).values() if o["on"]}


def test_reserve_by_arch_and_run_both_boards_at_once(coordinator, tmp_path):
    """alice reserves arch=ppc, bob arch=arm; each runs the shell suite on his or her
    board through RemotePlace, at the same time, on one lab host."""
    sync()
    tokens = {}
    try:
        for user, arch in (("alice", "ppc"), ("bob", "arm")):
            out = client("reserve", "--wait", "--shell", f"arch={arch}", user=user).stdout
            tokens[user] = out.strip().split("=")[1]
            client("-p", "+", "acquire", user=user, token=tokens[user])
        listing = client("reservations").stdout
        assert "main: qemu-ppc" in listing.split(f"Reservation '{tokens['alice']}':")[1].split("Reservation")[0]
        assert "main: qemu-arm" in listing.split(f"Reservation '{tokens['bob']}':")[1].split("Reservation")[0]
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
    finally:
        for user, token in tokens.items():
            client("-p", "+", "release", user=user, token=token, check=False)
            client("cancel-reservation", token, user=user, check=False)
