"""Where a boot's time went, as pure code: the kernel's own phase log and the console read
into spans.

A boot asked for its phase log has BOOT_ARGS on its command line: every initcall prints
`calling fn+0x0/0x1c @ 1` and `initcall fn+0x0/0x1c returned 0 after 12 usecs` (at
KERN_DEBUG: in the kernel's log, not on the console), and the root file system's rcS
stamps its scripts into /dev/kmsg. Each span says where its time came from:

- initcall_debug: the kernel's own duration of an initcall (its clock, in us);
- printk: two printk stamps of the kernel's log (the board's clock);
- console: the host's arrival times of two console lines. Linux 2.6.11's initcall_debug
  names each call ('Calling initcall 0x...: fn()') but gives no duration, and Linux 2.4
  prints nothing of its phases: there the lines' arrival is all there is.

A boot's leaf spans partition it from the kernel's start (printk time 0) to the login
prompt, so their sum is the milestone; the phases are the coarse view of the same boot
(kernel start -> first initcall -> last initcall -> init -> login)."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from boardlab.errors import KernelFault
from boardlab.measure import console as con

BOOT_ARGS = "initcall_debug printk.time=1 log_buf_len=1M"
INITCALL_DEBUG, PRINTK, CONSOLE = "initcall_debug", "printk", "console"
SOURCES = {INITCALL_DEBUG: "the kernel's own initcall duration",
           PRINTK: "printk stamps (the board's clock)",
           CONSOLE: "console line arrival (host clock)"}

_STAMP = r"^(?:<\d+>)?\[\s*(\d+\.\d+)\]\s+"
RE_CALLING = re.compile(_STAMP + r"calling\s+(\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[\w+\])? @ \d+")
RE_RETURNED = re.compile(_STAMP + r"initcall (\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?: \[\w+\])? "
                         r"returned (-?\d+) after (\d+) usecs")
# Linux 2.6.11: printk(KERN_DEBUG "Calling initcall 0x%p", fn); print_fn_descriptor_symbol(": %s()")
RE_CALLING_2611 = re.compile(r"Calling initcall 0x[0-9a-f]+(?:: (\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?\(\))?")
RE_INIT = re.compile(r"Run \S+ as init process|" + con.KERNEL_MILESTONES[2][1])
RE_SCRIPT = re.compile(r"boardlab: rcS: (\S+)")
RE_LOGIN = re.compile(r"boardlab: login prompt")
# a SysV init script's console line on the real boards: 'Starting kernel logger: [  OK  ]'
RE_SYSV_SCRIPT = re.compile(r"^\s*([A-Z][^:\[]{2,60}?):?\s*\[\s*(?:OK|FAILED|done)\s*\]\s*$")


class PhaseLogError(KernelFault, ValueError):
    """The boot's log cannot be split into spans (no initcall_debug, a lost start)."""


@dataclass(frozen=True)
class Span:
    key: str          # initcall.<fn>, phase.<name>, script.<name>
    start_s: float    # from the kernel's start (printk) or the load command (console)
    dur_s: float
    source: str       # INITCALL_DEBUG, PRINTK or CONSOLE
    leaf: bool = True   # one of the boot's partition (a phase is a sum of leaves)
    ret: int | None = None   # an initcall's return value

    @property
    def kind(self) -> str:
        return self.key.split(".", 1)[0]

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _unique(key: str, seen: dict) -> str:
    """Two initcalls of one name (static functions of two files): the second is name#2."""
    seen[key] = seen.get(key, 0) + 1
    return key if seen[key] == 1 else f"{key}#{seen[key]}"


def parse_initcalls(text: str) -> list[dict]:
    """The initcalls of a boot with initcall_debug, in order: name, start and end (s, the
    printk clock), the kernel's own duration (us) and return value. An initcall that
    never returned (the boot hung in it) is last, without an end."""
    out, open_calls = [], {}
    for line in text.splitlines():
        if m := RE_CALLING.match(line.strip()):
            open_calls[m.group(2)] = len(out)
            out.append({"name": m.group(2), "start_s": float(m.group(1)), "end_s": None,
                        "usecs": None, "ret": None})
        elif (m := RE_RETURNED.match(line.strip())) and m.group(2) in open_calls:
            call = out[open_calls.pop(m.group(2))]
            call.update(end_s=float(m.group(1)), ret=int(m.group(3)), usecs=int(m.group(4)))
    if not out:
        raise PhaseLogError("no 'calling ... @' line in the kernel's log: was the kernel booted "
                            f"with initcall_debug ({BOOT_ARGS})?")
    return out


def _stamped(dmesg_lines) -> list[tuple[float, str]]:
    out = []
    for line in dmesg_lines:
        if m := con.RE_PRINTK.match(line.strip()):
            out.append((float(m.group(1)), m.group(2)))
    return out


def _leaf(out, key, start, end, source, **kw):
    out.append(Span(key, round(start, 6), round(max(0.0, end - start), 6), source, **kw))


def from_kernel_log(dmesg_lines) -> list[Span]:
    """A 6.x boot's spans from its kernel log (dmesg after login, BOOT_ARGS given)."""
    lines = _stamped(dmesg_lines)
    if not lines or lines[0][0] > 0.001:   # the kernel's first lines are stamped 0.000000
        raise PhaseLogError("the kernel's log does not start at the kernel's start "
                            f"(first stamp {lines[0][0] if lines else 'none'}): its buffer lost the "
                            "beginning; a larger log_buf_len is needed")
    init = next((t for t, x in lines if RE_INIT.search(x)), None)
    login = next((t for t, x in lines if RE_LOGIN.search(x)), None)
    if init is None or login is None:
        raise PhaseLogError("the kernel's log has no " + ("init line ('Run ... as init process')"
                            if init is None else "'boardlab: login prompt' stamp (the image's getty writes it)"))
    everything = [c for c in parse_initcalls("\n".join(f"[{t:.6f}] {x}" for t, x in lines))
                  if c["end_s"] is not None]
    # a module's init, loaded from user space (the NFS loader's insmod), runs inside init's
    # time: shown (module.<fn>), not added to the boot's sum a second time
    calls = [c for c in everything if c["start_s"] < init]
    out, seen = [], {}
    for c in everything[len(calls):]:
        out.append(Span(f"module.{_unique(c['name'], seen)}", c["start_s"], c["usecs"] / 1e6,
                        INITCALL_DEBUG, leaf=False, ret=c["ret"]))
    first, last = calls[0]["start_s"], calls[-1]["end_s"]
    _leaf(out, "phase.to_first_initcall", 0.0, first, PRINTK)
    for c in calls:
        out.append(Span(f"initcall.{_unique(c['name'], seen)}", c["start_s"], c["usecs"] / 1e6,
                        INITCALL_DEBUG, ret=c["ret"]))
    between = (last - first) - sum(c["usecs"] for c in calls) / 1e6
    out.append(Span("phase.between_initcalls", first, round(max(0.0, between), 6), PRINTK))
    _leaf(out, "phase.to_init", last, init, PRINTK)
    stamps = [(t, m.group(1)) for t, x in lines if (m := RE_SCRIPT.search(x))]
    user = init
    for (t, name), nxt in zip(stamps, stamps[1:] + [(login, None)]):
        if name != "done":
            _leaf(out, f"script.{_unique(name, seen)}", t, nxt[0], PRINTK)
    if stamps:
        _leaf(out, "phase.init_to_scripts", init, stamps[0][0], PRINTK)
        user = next((t for t, name in stamps if name == "done"), login)
    _leaf(out, "phase.to_login", user, login, PRINTK)
    return out + _phases(first, last, init, login, PRINTK)


PHASE_MARKS = ("kernel_start", "first_initcall", "last_initcall", "init", "login")


def _phases(first, last, init, login, source, kernel_start=0.0) -> list[Span]:
    """The coarse view: kernel start -> first initcall -> last initcall -> init -> login
    (phase.<mark>..<next mark>; a mark the boot lacks joins its neighbours)."""
    marks = [(n, t) for n, t in zip(PHASE_MARKS, (kernel_start, first, last, init, login)) if t is not None]
    return [Span(f"phase.{a}..{b}", round(ta, 6), round(tb - ta, 6), source, leaf=False)
            for (a, ta), (b, tb) in zip(marks, marks[1:])]


def from_console(lines, ms: dict) -> list[Span]:
    """An old kernel's spans from the console's arrival stamps (TimedLines; ms: the boot's
    milestones, s from the load command, as the strategy found them): 2.6.11's 'Calling
    initcall' lines, each span to the next line; 2.4: the milestones and the SysV init
    scripts' lines only."""
    t0 = con.origin_time(lines) or 0.0
    rx = [(round(ln.t - t0, 6), ln.text) for ln in lines if ln.kind == con.RX and ln.t >= t0]
    start, init, login = ms.get("linux_version"), ms.get("freeing_init"), ms.get("login")
    if start is None or login is None:
        raise PhaseLogError("the console has no 'Linux version' or no login prompt: no boot to split")
    out, seen = [], {}
    calls = [(i, t, m.group(1) or "0x?") for i, (t, x) in enumerate(rx) if (m := RE_CALLING_2611.search(x))]
    first = last = None
    if calls:
        first = calls[0][1]
        for n, (i, t, name) in enumerate(calls):   # a call ends as the next one is called
            nxt = calls[n + 1][1] if n + 1 < len(calls) else (rx[i + 1][0] if i + 1 < len(rx) else t)
            _leaf(out, f"initcall.{_unique(name, seen)}", t, nxt, CONSOLE)
            last = nxt
        _leaf(out, "phase.to_first_initcall", start, first, CONSOLE)
    kernel_end = last if last is not None else start
    if init is not None:
        _leaf(out, "phase.to_init", kernel_end, init, CONSOLE)
    user = init if init is not None else kernel_end
    scripts = [(i, t, m.group(1).strip()) for i, (t, x) in enumerate(rx)
               if user <= t < login and (m := RE_SYSV_SCRIPT.match(x))]
    for i, t, name in scripts:   # a script's line starts as it starts; the next line, its end
        end = rx[i + 1][0] if i + 1 < len(rx) else login
        _leaf(out, f"script.{_unique(name.replace(' ', '_'), seen)}", t, end, CONSOLE)
    rest = (login - user) - sum(s.dur_s for s in out if s.kind == "script")
    out.append(Span("phase.to_login", round(user, 6), round(max(0.0, rest), 6), CONSOLE))
    return out + _phases(first, last, init, login, CONSOLE, kernel_start=start)


def of_boot(rec) -> list[Span]:
    """A boot's spans: from its kernel log when it has initcall_debug's durations, else from
    the console's stamps (rec: a BootRecord)."""
    if rec.dmesg and any(RE_CALLING.match(x.strip()) for x in rec.dmesg):
        return from_kernel_log(rec.dmesg)
    return from_console(rec.lines, rec.milestones)


def is_leaf(key: str) -> bool:
    """Whether a span (by its key) is one of the boot's partition, added to its sum: not a
    coarse phase (phase.a..b) nor a module's init inside user space (module.<fn>)."""
    return ".." not in key and not key.startswith("module.")


def durations(spans) -> dict:
    """{key: seconds} of a boot's spans (what a side's samples take)."""
    return {s.key: s.dur_s for s in spans}


def sources(spans) -> dict:
    return {s.key: s.source for s in spans}
