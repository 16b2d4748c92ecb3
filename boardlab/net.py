"""Small waits and probes on this host's loopback, shared by the virtual lab, the
tests and the benchmarks."""
from __future__ import annotations

import socket
import time


def tcp_open(port: int, host: str = "127.0.0.1", timeout: float = 0.2) -> bool:
    """Whether something accepts TCP connections on host:port."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True
    except OSError:
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout: float = 10.0, what: str = "condition"):
    """Poll pred every 50 ms until it is true; TimeoutError naming what after timeout s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timeout after {timeout:.0f} s: {what}")
