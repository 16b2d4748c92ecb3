"""The virtual lab's network power switch.

Speaks the HTTP protocol of labgrid's NetworkPowerPort model 'rest':
GET  /outlet/<n>/value  -> "1" (on) or "0" (off)
PUT  /outlet/<n>/value  with body "1" or "0"
so labgrid drives it with NetworkPowerDriver and LAVA with curl, as they would a
real switch. Switching an outlet on starts the board's QEMU (U-Boot runs at once)
inside the lab network namespace; off stops it. GET / lists the outlets as JSON.

A virtual board has two more settings a real one lacks: the clock QEMU runs it on
(boardlab.measure.clocks): GET /outlet/<n>/clock -> "deterministic" or "realtime", PUT with
either; and its load (boardlab.facts.loads): GET /outlet/<n>/load -> "none",
"steady:P", "bursts:L@SEED" or "perboot:L@SEED", PUT with one. The board's facts give the defaults, the next
power-on uses the setting."""
from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from boardlab.facts.board import QEMU_CLOCKS, Board, load_board
from boardlab.facts.labhosts import LabHost, load_lab_host
from boardlab.facts import loads
from boardlab.vlab import boardload, flash


# The UART's socket may hold this much unread (SO_SNDBUFFORCE; memory is charged only
# while unread). A 16550's byte goes out as one 1-byte send of ~770 bytes of kernel
# memory, so the default 208 kB holds only ~280 characters: a cable read late on a busy
# host then made QEMU's write fail, the guest polled the UART's THRE in a loop that
# ended when QEMU's iothread retried, and that real-time wait became 2-10 ms of
# deterministic guest time (qemu-ppc; the ARM board's PL011 blocks instead). 256 MB
# holds ~350,000 characters: no boot's console comes near it.
UART_SEND_BUFFER = 256 << 20
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)


def uart_socket(sock_path: str | Path) -> socket.socket:
    """The board's end of its serial cable, connected to the cable's socket, for QEMU to
    inherit (-chardev socket,fd=N): QEMU never waits on a slow reader."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(sock_path))
    except OSError as e:
        s.close()
        raise RuntimeError(f"the serial cable is not listening at {sock_path}: "
                           f"{e.strerror}") from None
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, UART_SEND_BUFFER)
    except PermissionError:   # needs CAP_NET_ADMIN; the virtual lab runs as root
        s.close()
        raise RuntimeError("cannot enlarge the UART socket's buffer (SO_SNDBUFFORCE needs "
                           "root): the deterministic clock would follow host load") from None
    return s


def clock_args(board: Board, clock: str | None = None) -> list[str]:
    """deterministic: guest time is instructions executed (2**shift ns each), so the
    kernel's figures do not depend on this host's speed; sleep=off lets guest time leap
    over idle waits instead of following the host's clock."""
    q = board.qemu
    if (clock or q.clock) == "deterministic":
        return ["-icount", f"shift={q.icount_shift},sleep=off"]
    return []


def uart_args(run_dir: Path, board: Board, uart_fd: int | None = None) -> list[str]:
    """The UART on the cable: an inherited socket (see uart_socket) or, for a command shown
    to a person, the cable's path."""
    where = f"fd={uart_fd}" if uart_fd is not None else \
        f"path={Path(run_dir) / (board.name + '.uart.sock')}"
    return ["-chardev", f"socket,id=uart,{where}", "-serial", "chardev:uart"]


def qemu_command(board: Board, lab: LabHost, clock: str | None = None,
                 uart_fd: int | None = None, load: loads.Load | None = None,
                 power_on: int = 0) -> list[str]:
    q = board.qemu
    run_dir = Path(lab.run_dir)
    mac = board.network.mac
    # romfile= : U-Boot drives the NIC itself, no iPXE option ROM needed
    nic = f"virtio-net-pci,netdev={boardload.NETDEV},romfile=" + (f",mac={mac}" if mac else "")
    return [
        q.binary, "-M", q.machine, "-cpu", q.cpu, "-smp", str(q.smp),
        "-m", str(board.ram_mb), "-bios", str(flash.flashed(board, lab)),   # its own U-Boot
        "-netdev", f"tap,id={boardload.NETDEV},ifname={q.tap},script=no,downscript=no",
        "-device", nic,
        *uart_args(run_dir, board, uart_fd),
        "-display", "none", "-monitor", "none", "-nodefaults",
        "-name", f"boardlab-{board.name}",
    ] + clock_args(board, clock) + boardload.qemu_args(board, run_dir, load or loads.Load(loads.NONE),
                                                       power_on)


def switch_off(board: Board, timeout: float = 10.0):
    """Cut a virtual board's power at its lab host's switch (a client of the protocol
    above); OSError when the switch does not answer."""
    import urllib.request
    req = urllib.request.Request(board.power.url, data=b"0", method="PUT")
    urllib.request.urlopen(req, timeout=timeout).read()


class Outlet:
    def __init__(self, board: Board, lab: LabHost):
        self.board = board
        self.lab = lab
        self.proc = None
        self.clock = board.qemu.clock     # for the next power-on
        self.running_clock = None         # of the QEMU running now
        self.load = loads.seeded(loads.parse(board.qemu.load, board.name), board.name)   # next power-on
        self.running_load = None
        self.power_ons = 0                # a seeded load's seed moves on by one each
        self.cgroup = None                # the cgroup of a hostcpu-capped QEMU (boardload.cap_cpu)
        self.lock = threading.Lock()
        self.pidfile = Path(lab.run_dir) / "pids" / f"qemu-{board.name}.pid"
        self.logfile = Path(lab.run_dir) / "logs" / f"qemu-{board.name}.log"

    def is_on(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def on(self):
        with self.lock:
            if self.is_on():
                return
            uart = uart_socket(Path(self.lab.run_dir) / f"{self.board.name}.uart.sock")
            cmd = ["ip", "netns", "exec", self.lab.netns] + qemu_command(
                self.board, self.lab, self.clock, uart_fd=uart.fileno(), load=self.load,
                power_on=self.power_ons)
            self.running_clock, self.running_load = self.clock, self.load
            self.power_ons += 1
            log = open(self.logfile, "ab")
            log.write(f"--- power on {time.strftime('%F %T')}: {' '.join(cmd)}\n".encode())
            log.flush()
            # its own session: the switch's signals and terminal are not the board's
            try:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=log, start_new_session=True,
                                             pass_fds=(uart.fileno(),))
            finally:
                uart.close()   # QEMU holds it now: its exit unplugs the cable
            self.pidfile.write_text(f"{self.proc.pid}\n")
            if self.load.kind == "hostcpu":   # `ip netns exec` execs QEMU: the same process
                try:
                    self.cgroup = boardload.cap_cpu(self.board, self.proc.pid, self.load.size)
                except loads.LoadError:   # never a board running uncapped that was asked capped
                    self.proc.kill()
                    self.proc.wait()
                    self.proc = None
                    raise
            try:   # a bad command line or a missing file makes QEMU exit at once
                self.proc.wait(timeout=0.3)
            except subprocess.TimeoutExpired:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"QEMU for {self.board.name} exited at once "
                                   f"(status {self.proc.returncode}); see {self.logfile}")

    def off(self):
        with self.lock:
            if self.proc is None:
                return
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None
            self.pidfile.unlink(missing_ok=True)
            boardload.uncap_cpu(self.cgroup)   # only a QEMU that was capped had one
            self.cgroup = None


class SwitchHandler(BaseHTTPRequestHandler):
    """The switch's HTTP interface; `outlets` (number -> Outlet) is set per server."""
    outlets: dict = {}
    server_version = "boardlab-power/1"

    def log_message(self, fmt, *args):  # one line per request, on stderr
        sys.stderr.write(f"{time.strftime('%T')} {self.address_string()} {fmt % args}\n")

    def _reply(self, code, body, ctype="text/plain"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _outlet(self):
        """-> (outlet, 'value' or 'clock'), or None after replying 404."""
        m = re.fullmatch(r"/outlet/(\d+)/(value|clock|load)/?", self.path)
        if not m:
            self._reply(404, "use /outlet/<n>/value, /outlet/<n>/clock or /outlet/<n>/load\n")
            return None
        n = int(m.group(1))
        if n not in self.outlets:
            self._reply(404, f"no outlet {n} (outlets: {sorted(self.outlets)})\n")
            return None
        return self.outlets[n], m.group(2)

    def do_GET(self):  # noqa: N802 - http.server's naming
        if self.path == "/":
            state = {n: {"board": o.board.name, "on": o.is_on(), "clock": o.clock,
                         "running_clock": o.running_clock if o.is_on() else None, "load": str(o.load),
                         "running_load": str(o.running_load) if o.is_on() else None}
                     for n, o in self.outlets.items()}
            self._reply(200, json.dumps(state) + "\n", "application/json")
            return
        found = self._outlet()
        if found:
            outlet, what = found
            if what == "clock":   # what the running board uses, else the next power-on
                self._reply(200, (outlet.is_on() and outlet.running_clock) or outlet.clock)
            elif what == "load":
                self._reply(200, str((outlet.is_on() and outlet.running_load) or outlet.load))
            else:
                self._reply(200, "1" if outlet.is_on() else "0")

    def do_PUT(self):  # noqa: N802
        found = self._outlet()
        if not found:
            return
        outlet, what = found
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).strip()
        if what == "clock":
            if body.decode() not in QEMU_CLOCKS:
                self._reply(400, f"body must be one of {', '.join(QEMU_CLOCKS)}\n")
                return
            outlet.clock = body.decode()
            self._reply(200, outlet.clock)
            return
        if what == "load":
            try:
                load = loads.parse(body.decode(errors="replace"), outlet.board.name)
                loads.check_board(outlet.board, load)
            except loads.LoadError as e:
                self._reply(400, f"{e}\n")
                return
            outlet.load, outlet.power_ons = loads.seeded(load, outlet.board.name), 0
            self._reply(200, str(outlet.load))
            return
        if body not in (b"0", b"1"):
            self._reply(400, "body must be 0 or 1\n")
            return
        try:
            outlet.on() if body == b"1" else outlet.off()
        except (RuntimeError, loads.LoadError) as e:
            self._reply(500, f"{e}\n")
            return
        self._reply(200, body.decode())



def make_handler(outlets: dict):
    return type("Handler", (SwitchHandler,), {"outlets": outlets})


def serve(lab_name: str):
    lab = load_lab_host(lab_name)
    outlets = {}
    for name in lab.boards:
        board = load_board(name)
        outlets[board.power.index] = Outlet(board, lab)
    listen = lab.power_switch.listen or lab.control_address
    server = ThreadingHTTPServer((listen, lab.power_switch.port), make_handler(outlets))

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"power switch on http://{listen}:{lab.power_switch.port}"
          f" outlets {sorted(outlets)}", flush=True)
    try:
        server.serve_forever()
    finally:
        for o in outlets.values():   # a switch that goes away cuts the power
            o.off()
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="boardlab virtual lab power switch")
    ap.add_argument("--lab", default="vlab", help="lab host name or lab-host.yaml path")
    args = ap.parse_args(argv)
    return serve(args.lab)


if __name__ == "__main__":
    sys.exit(main())
