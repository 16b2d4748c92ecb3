"""A scripted console: a TEST FIXTURE, not a board. It stands in where no board can -
the real boards' U-Boot of their era - and plugs into a serial cable's socket the way
QEMU does, so ser2net, the labgrid console and the strategy run for real.

It prints the U-Boot banner and countdown of its script, answers at the prompt
(echo, setenv, tftpboot, bootm, one command per line like an old U-Boot), and on
bootm replays a boot log whose times are seconds from the load command, scaled by
--scale. With --emitted it writes, in the boot log format, when it actually wrote each
replayed line (seconds from receiving the load command): what a test compares the
host's measurement with. After the login prompt it answers as a minimal shell, enough for labgrid's
ShellDriver (echo markers, its run() helper).

--fault plays what real boards of the era do when things go wrong (FAULTS): U-Boot
1.1's endless TFTP retry of a missing file (until Ctrl-C: 'Abort'), a 2.4 kernel's
panic wording, a kernel silent after U-Boot's hand-over."""
from __future__ import annotations

import argparse
import re
import signal
import socket
import sys
import time
from pathlib import Path

import yaml

from boardlab.measure.console import MARK, RX, TimedLine, format_log, parse_log


FAULTS = {
    "tftp-not-found": "every tftpboot: 'File not found', 'Starting again', until Ctrl-C",
    "panic-2.4": "Linux 2.4's panic instead of mounting the root file system",
    "hang-after-uncompress": "nothing after U-Boot's 'Uncompressing Kernel Image ... OK'",
    "stale-prompt": "at power-on, what a console server still held of the last boot "
                    "('Bad Data CRC', '=> ') comes before the banner",
    "setenv-hangs": "the first setenv never comes back to the prompt",
    "bad-crc": "bootm of an image whose file name has 'corrupt' in it: 'Bad Data CRC', "
               "back to the prompt (any other image boots)",
}
PANIC_24 = ("VFS: Cannot open root device \"nfs\" or 02:00",
            "Please append a correct \"root=\" boot option",
            "Kernel panic: VFS: Unable to mount root fs on 02:00")


class ScriptedBoard:
    def __init__(self, sock: socket.socket, script: dict, log_lines, scale: float,
                 emitted_path: Path | None = None, fault: str | None = None):
        self.fault = fault
        self.sock = sock
        self.script = script
        self.log = [ln for ln in log_lines if ln.kind == RX]
        self.scale = scale
        self.buf = b""
        self.t_load = None
        self.loaded = []          # the files tftpboot loaded, in order
        self.emitted_path = emitted_path

    def out(self, text: str):
        self.sock.sendall(text.replace("\n", "\r\n").encode())

    def readline(self, echo=True) -> str:
        while not (m := re.search(rb"\r\n|\r|\n", self.buf)):
            data = self.sock.recv(4096)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf[:m.start()], self.buf[m.end():]
        text = line.decode("latin-1")
        if echo:
            self.out(text + "\n")
        return text

    def key_pressed(self, timeout: float) -> bool:
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096)
        except socket.timeout:
            return False
        finally:
            self.sock.settimeout(None)
        if not data:
            raise EOFError
        return True      # the key that stops autoboot is consumed, as U-Boot does

    def run(self):
        s = self.script
        if self.fault == "stale-prompt":
            self.out("   Verifying Checksum ... Bad Data CRC\n" + s["prompt"])
            time.sleep(0.5)
        self.out(s["banner"])
        stopped = False
        for n in range(s.get("bootdelay", 3), -1, -1):
            self.out(f"\r{s['autoboot']}: {n:2d} " if n == s.get("bootdelay", 3)
                     else f"\b\b\b{n:2d} ")
            if self.key_pressed(1.0 * self.scale if n else 0.01):
                stopped = True
                break
        self.out("\n")
        if not stopped:
            self.out("## Booting from flash ... (scripted: no autoboot)\n")
        while True:
            self.out(s["prompt"])
            cmd = self.readline().strip()
            if not cmd:
                continue
            self.uboot_command(cmd)

    def uboot_command(self, cmd: str):
        words = cmd.split()
        if words[0] == "echo":
            self.out(re.sub(r"'([^']*)'", r"\1", cmd[5:]) + "\n")
        elif words[0] == "setenv":
            if self.fault == "setenv-hangs":
                self.silent()
        elif words[0] in ("tftpboot", "tftp"):
            if self.t_load is None:
                self.t_load = time.monotonic()
            self.loaded.append(words[2])
            if self.fault == "tftp-not-found":
                return self.tftp_retry_forever(words[2])
            size = self.script.get("image_size", 723718)
            self.out(f"TFTP from server {self.script['server_ip']}; our IP address is "
                     f"{self.script['ip']}\nFilename '{words[2]}'.\nLoad address: 0x{words[1]}\n"
                     f"Loading: {'#' * 40}\ndone\nBytes transferred = {size} ({size:x} hex)\n")
        elif words[0] == "bootm":
            if self.fault == "bad-crc" and self.loaded and "corrupt" in self.loaded[0]:
                return self.bad_crc()
            self.boot()
        else:
            self.out(f"Unknown command '{words[0]}' - try 'help'\n")

    def tftp_retry_forever(self, file: str):
        """U-Boot 1.1 on a TFTP error: 'Starting again', for ever, until Ctrl-C."""
        while True:
            self.out(f"TFTP from server {self.script['server_ip']}; our IP address is "
                     f"{self.script['ip']}\nFilename '{file}'.\nLoad address: 0x200000\n"
                     f"Loading: *\b\nTFTP error: 'File not found' (1)\nStarting again\n\n")
            self.sock.settimeout(1.0 * self.scale)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            finally:
                self.sock.settimeout(None)
            if not data:
                raise EOFError
            if b"\x03" in data:
                self.out("\nAbort\n")
                return

    def bad_crc(self):
        """U-Boot 1.1's bootm of a corrupt image: the header, the verdict, the prompt."""
        size = self.script.get("image_size", 723718)
        self.out(f"## Booting image at 00200000 ...\n   Image Name:   Linux\n"
                 f"   Image Type:   PowerPC Linux Kernel Image (gzip compressed)\n"
                 f"   Data Size:    {size} Bytes\n   Verifying Checksum ... Bad Data CRC\n")

    def boot(self):
        t0 = self.t_load or time.monotonic()
        emitted = [TimedLine(t0, "load", MARK)]
        for ln in self.log:
            delay = t0 + ln.t * self.scale - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            text = ln.text
            if self.fault == "panic-2.4" and text.startswith("VFS: Mounted root"):
                for line in PANIC_24:
                    self.out(line + "\n")
                return self.silent()
            emitted.append(TimedLine(time.monotonic(), text))
            if re.search(self.script["login_prompt"] + r"\s*$", text):
                self.out(text)           # the prompt waits for input
                break
            self.out(text + "\n")
            if self.fault == "hang-after-uncompress" and "Uncompressing Kernel Image" in text:
                return self.silent()
        if self.emitted_path:
            self.emitted_path.write_text(format_log(emitted, header=(
                "written by the scripted console (a test fixture): when it wrote each line",)))
        self.shell()

    def silent(self):
        """A hung board: reads (and drops) what is typed, prints nothing."""
        while self.sock.recv(4096):
            pass
        raise EOFError

    def shell(self):
        prompt = self.script["shell_prompt"]
        user = self.readline()
        if user.strip() != "root":
            self.out("Login incorrect\n")
        while True:
            self.out(prompt)
            cmd = self.readline().strip()
            # labgrid's ShellDriver quotes the command (shlex: a plain word goes bare)
            m = re.match(r"MARKER='(\w+)''(\w+)' run (?:'(.*)'|(\S+))$", cmd)
            if m:   # run() prints the marker, output, marker + status
                marker = m.group(1) + m.group(2)
                self.out(f"{marker}{self.canned(m.group(3) or m.group(4))}{marker} 0\n")
            elif cmd:
                self.out(self.canned(cmd))

    def canned(self, cmd: str) -> str:
        """Output of a command: echo works, others as the script's 'commands' say."""
        if cmd.startswith("run()"):
            return ""
        if cmd.startswith("echo "):
            return re.sub(r"'([^']*)'", r"\1", cmd[5:]) + "\n"
        return self.script.get("commands", {}).get(cmd, "")


def main(argv=None):
    ap = argparse.ArgumentParser(description="scripted console (a test fixture, not a board)")
    ap.add_argument("--socket", required=True, help="the serial cable's board socket")
    ap.add_argument("--script", required=True, help="the U-Boot dialect: YAML")
    ap.add_argument("--log", required=True, help="boot log to replay (boardlab boot log format)")
    ap.add_argument("--scale", type=float, default=1.0, help="time scale of the replay")
    ap.add_argument("--emitted", type=Path, help="write when each replayed line was written here")
    ap.add_argument("--fault", choices=sorted(FAULTS), help="what goes wrong: " + "; ".join(
        f"{k}: {v}" for k, v in FAULTS.items()))
    args = ap.parse_args(argv)
    script = yaml.safe_load(Path(args.script).read_text())
    lines = parse_log(Path(args.log).read_text())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(args.socket)
    try:
        ScriptedBoard(sock, script, lines, args.scale, args.emitted, args.fault).run()
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
