"""The real boards' files driven without hardware. A SCRIPTED CONSOLE stands in for
each board here - a test fixture, not a board (boardlab/vlab/scripted.py): it speaks
the board's U-Boot of its era and replays a boot log of its kernel with the study's
timing, scaled down. Everything else is real: the board's generated labgrid env, a
serial cable pty, ser2net (RFC2217), labgrid's power driver, the shared strategy."""
import subprocess
import sys

import pytest
import yaml

from boardlab import envgen
from boardlab.facts import load_board
from boardlab.vlab.cable import serial_line
from paths import DATA, ROOT

# time scale per board: short enough for CI
CASES = [("tqm860l", "2.4.25", "tftp:tqm860l/uImage-2.4.25", "nfs", 0.25),   # login 12.4 s
         ("sandpoint", "2.6.11.7", "tftp:sandpoint/uImage-2.6.11.7", "nfs", 0.1),
         ("smdk24a0", "linux-2.6.11.6", "tftp:smdk24a0/uImage-2.6.11.6", "ramdisk", 1.0)]
STUDY_MILESTONES = ("linux_version", "freeing_init", "login")
# the host measures arrival, the console writes: between them only the way of the load
# command to the console and of the line back (pty, ser2net without chardelay, TCP):
# about 1 ms idle, up to 3 ms with both cores busy; the bound leaves room for a busy CI
TRANSPORT_S = 0.015


@pytest.mark.parametrize("name, kernel, spec, root, scale", CASES, ids=[c[0] for c in CASES])
def test_board_env_boots_a_scripted_console_and_times_the_milestones(name, kernel, spec, root,
                                                                     scale, tmp_path):
    from labgrid import Environment

    from boardlab import console as con
    board = load_board(name)
    port = 5300 + [c[0] for c in CASES].index(name)
    pidfile = tmp_path / "board.pid"
    boot_log = DATA / "scripted" / f"{name}-{kernel}.boot.log"
    emitted_log = tmp_path / "emitted.log"
    env = None
    with serial_line(tmp_path, name, port, board.console.baud) as sock:
        try:
            # the board's own generated env; only the wiring points at this test's console
            # and power switching starts/stops the scripted console (labgrid's ExternalPowerDriver)
            data = envgen.labgrid_env(board)
            t = data["targets"]["main"]
            t["resources"]["NetworkSerialPort"].update(host="127.0.0.1", port=port)
            for power in ("NetworkPowerPort", "PDUDaemonPort"):   # whatever the lab host uses
                t["resources"].pop(power, None)
            for power in ("NetworkPowerDriver", "PDUDaemonDriver"):
                t["drivers"].pop(power, None)
            start = (f"{sys.executable} -m boardlab.vlab.scripted --socket {sock} --script "
                     f"{DATA / 'scripted' / (name + '.uboot.yaml')} --log {boot_log} --scale {scale} "
                     f"--emitted {emitted_log}")
            t["drivers"] = {"ExternalPowerDriver": {
                "cmd_on": f"sh -c '{start} >{tmp_path}/board.log 2>&1 & echo $! > {pidfile}'",
                "cmd_off": f"sh -c 'test -f {pidfile} && kill $(cat {pidfile}); rm -f {pidfile}; true'",
                "delay": 0.1}, **t["drivers"]}
            t["drivers"]["BoardStrategy"] = {"facts": str(ROOT / "boards" / f"{name}.yaml"),
                                             "kernel": spec, "root": root, "log_dir": str(tmp_path),
                                             "ramdisk": "tftp:" + board.tftp.prefix + "ramdisk"}
            envfile = tmp_path / f"{name}.yaml"
            envfile.write_text(yaml.safe_dump(data, sort_keys=False))
            env = Environment(str(envfile))
            target = env.get_target("main")
            strategy = target.get_driver("Strategy")
            strategy.transition("shell")
            measured = strategy.last_boot.milestones
            patterns = con.milestone_patterns(board.shell.login_prompt, "^$")
            replayed = con.find_milestones(con.parse_log(boot_log.read_text()), patterns)
            emitted = con.find_milestones(con.parse_log(emitted_log.read_text()), patterns)
            assert set(STUDY_MILESTONES) <= set(replayed) <= set(emitted) <= set(measured), \
                (replayed, emitted, measured)
            for milestone in STUDY_MILESTONES:
                # the measurement: when the line arrived, never before the console wrote it
                late = measured[milestone] - emitted[milestone]
                assert -0.0002 <= late <= TRANSPORT_S, \
                    (f"{name} {milestone}: measured {measured[milestone]:.4f} s, the console "
                     f"wrote it at {emitted[milestone]:.4f} s")
                # and the study's timing comes through (the fixture's sleeps on a busy host)
                expected = replayed[milestone] * scale
                assert measured[milestone] == pytest.approx(expected, rel=0.02, abs=0.02), \
                    f"{name} {milestone}: measured {measured[milestone]:.4f} s, replayed {expected:.4f} s"
            bootargs_line = next(ln.text for ln in strategy.last_boot.lines
                                 if ln.kind == "tx" and ln.text.startswith("setenv bootargs"))
            assert board.console.device in bootargs_line or "ttyS0" in bootargs_line
            assert target.get_driver("ShellDriver").run_check("echo ok") == ["ok"]
            strategy.transition("off")

        finally:
            if env is not None:
                env.cleanup()
            if pidfile.exists():   # the scripted console, if power-off did not end it
                subprocess.run(["sh", "-c", f"kill $(cat {pidfile})"], capture_output=True)
