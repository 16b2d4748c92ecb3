"""Progress lines for long steps: one line each, to stderr, with the elapsed time."""
import sys
import time

_T0 = time.monotonic()


def progress(msg: str):
    print(f"[{time.monotonic() - _T0:6.1f}s] {msg}", file=sys.stderr, flush=True)
