#!/usr/bin/env python3
"""Where a CI run's time goes: the README's test command (`bash .ci/run`, or COMMAND) in a
checkout, with the kernel's process accounting on for the run (`accton`, Debian's acct
package; root), then its CPU by what did the work (compiling, the boards' QEMUs, the
tests' Python, apt and dpkg, LAVA and labgrid, QEMU's user mode), its wall time, when the
set-up ended and each pytest session's time, from the run's own log. Host clock, this host.

Accounting holds every process that ended during the run, the lab's daemons and anything
else on the machine too: run it on an otherwise idle host. A process still running at the
end (none, when the run stopped what it started) is not counted.

    .venv/bin/python bench/ci_time.py [--checkout DIR] [--log FILE] [-- COMMAND...]
    .venv/bin/python bench/ci_time.py --sa FILE     # a kept `sa -a` listing, no run"""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# what did the work, by the command name the accounting keeps (16 characters at most)
KINDS = (
    ("compiling", re.compile(r"^(cc1|cc1plus|as|ld|ld\.bfd|collect2|make|gcc|ccache|"
                             r"(powerpc|arm|aarch64)-linux-g.*|x86_64-linux-g.*)\*?$")),
    ("the boards' QEMUs", re.compile(r"^qemu-system-.*$")),
    ("QEMU's user mode (programs for a board's CPU)", re.compile(r"^qemu-[a-z0-9]+\*?$")),
    ("the tests' Python", re.compile(r"^(python[0-9.]*|pytest|boardlab)\*?$")),
    ("apt and dpkg", re.compile(r"^(apt.*|dpkg.*|tar|xz|gzip|zstd|mandb|py3compile|"
                                r"deb-systemd-.*|update-.*|ldconfig.*|install-info)\*?$")),
    ("LAVA and labgrid", re.compile(r"^(lava.*|labgrid-.*|gunicorn.*)$")),
)
SA_LINE = re.compile(r"^\s*(\d+)\s+([\d.]+)re\s+([\d.]+)cp\s+\S+\s+\S+(?:\s+(\S.*))?$")
SESSION = re.compile(r"^=+ (.*?) in ([\d.]+)s")


def kind_of(command: str) -> str:
    return next((name for name, pattern in KINDS if pattern.match(command)), "the rest")


def by_kind(sa_listing: str) -> tuple[dict[str, float], dict[str, float], float]:
    """`sa -a` output (CPU in minutes) -> ({kind: CPU-s}, {command: CPU-s}, total CPU-s)."""
    kinds, commands, total = {}, {}, 0.0
    for line in sa_listing.splitlines():
        m = SA_LINE.match(line)
        if not m:
            continue
        cpu_s = float(m.group(3)) * 60
        if m.group(4) is None:   # the first line: the sum
            total = cpu_s
            continue
        command = m.group(4).strip()
        commands[command] = commands.get(command, 0.0) + cpu_s
        kinds[kind_of(command)] = kinds.get(kind_of(command), 0.0) + cpu_s
    return kinds, commands, total


def sessions(log: str) -> list[str]:
    """The run's own milestones: set-up's end and each pytest session's summary line."""
    out = [ln.strip() for ln in log.splitlines() if ln.startswith("set-up done")]
    return out + [f"{m.group(1)}: {float(m.group(2)):.0f} s" for m in map(SESSION.match, log.splitlines()) if m]


def report(sa_listing: str, log: str = "", wall_s: float | None = None) -> str:
    kinds, commands, total = by_kind(sa_listing)
    lines = ["| what did the work | CPU-s | share |", "|---|---:|---:|"]
    for name, cpu in sorted(kinds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {cpu:.0f} | {100 * cpu / total:.0f} % |" if total else f"| {name} | {cpu:.0f} | - |")
    lines.append(f"| all | {total:.0f} | |")
    top = sorted(commands.items(), key=lambda kv: -kv[1])[:12]
    lines += ["", "the commands that took most: " + ", ".join(f"{c} {s:.0f}" for c, s in top)]
    if wall_s:
        lines += [f"wall {wall_s:.0f} s; its CPU over two cores ends no sooner than {total / 2:.0f} s "
                  f"({100 * total / 2 / wall_s:.0f} % of that reached)"]
    return "\n".join(lines + sessions(log))


def measure(checkout: Path, command: list[str], log_path: Path) -> tuple[str, float, int]:
    """Run command in checkout with process accounting on -> (sa listing, wall s, exit code)."""
    with tempfile.TemporaryDirectory() as work:
        pacct = Path(work) / "pacct"
        pacct.touch()
        subprocess.run(["accton", str(pacct)], check=True, capture_output=True)
        try:
            t0 = time.monotonic()
            with open(log_path, "w") as log:
                rc = subprocess.run(command, cwd=checkout, stdout=log, stderr=subprocess.STDOUT).returncode
            wall = time.monotonic() - t0
        finally:
            subprocess.run(["accton", "off"], capture_output=True)
        return subprocess.run(["sa", "-a", str(pacct)], capture_output=True, text=True, check=True).stdout, wall, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", default=str(ROOT), help="where the command runs (a fresh clone, for CI's figure)")
    ap.add_argument("--log", help="the run's output (default: ci-time.log in the checkout's parent)")
    ap.add_argument("--sa", help="a kept `sa -a` listing: its table, no run")
    ap.add_argument("command", nargs="*", help="default: bash .ci/run")
    args = ap.parse_args()
    if args.sa:
        print(report(Path(args.sa).read_text()))
        return 0
    missing = [t for t in ("accton", "sa") if not shutil.which(t)]
    if missing:
        print(f"ci_time: {', '.join(missing)} not found: process accounting is Debian's acct package "
              f"(apt-get install acct)", file=sys.stderr)
        return 2
    checkout = Path(args.checkout).resolve()
    log = Path(args.log) if args.log else checkout.parent / "ci-time.log"
    print(f"ci_time: {' '.join(args.command or ['bash', '.ci/run'])} in {checkout} (log {log}), "
          f"process accounting on for the run", flush=True)
    sa_listing, wall, rc = measure(checkout, args.command or ["bash", ".ci/run"], log)
    from boardlab.measure import clocks
    print(f"exit {rc}; host {clocks.this_host()['id']}, host clock")
    print(report(sa_listing, log.read_text(errors="replace"), wall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
