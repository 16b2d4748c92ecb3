"""Progress lines for long steps: one line each, to stderr, with the elapsed time."""
import sys
import time

_T0 = time.monotonic()
_sink = None   # where lines go instead of stderr (a pytest session with a board: past its capture)


def progress(msg: str):
    line = f"[{time.monotonic() - _T0:6.1f}s] {msg}"
    if _sink is not None:
        _sink(line)
    else:
        print(line, file=sys.stderr, flush=True)


def write_through(sink) -> None:
    """Send progress lines to sink(line) (None: stderr again)."""
    global _sink
    _sink = sink
