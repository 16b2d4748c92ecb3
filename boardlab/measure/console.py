"""Console timestamping and boot milestones, as pure code.

A line's time is the host arrival time of its first character (grabserial's
definition), not the time a pattern matched. Times are host monotonic seconds; a
boot log shows them relative to an origin mark (the load command)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

RE_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")

RX, TX, MARK = "rx", "tx", "mark"


@dataclass(frozen=True)
class TimedLine:
    t: float          # host monotonic time of the first character (or of the event)
    text: str         # without line end and terminal escapes
    kind: str = RX    # rx: from the board, tx: sent to it, mark: an event of ours


@dataclass
class ConsoleTimestamper:
    """Splits a console byte stream into lines stamped with the arrival of their first
    character. Feed it every chunk read from the console with the time it was read."""
    lines: list = field(default_factory=list)
    _partial: bytearray = field(default_factory=bytearray)
    _partial_t: float | None = None

    def feed(self, data: bytes, t: float):
        for piece in re.split(rb"(\n)", data):
            if not piece:
                continue
            if piece == b"\n":
                self._finish(t)
                continue
            if self._partial_t is None:
                self._partial_t = t
            self._partial.extend(piece)

    def _finish(self, t):
        start = self._partial_t if self._partial_t is not None else t
        self.lines.append(TimedLine(start, clean(bytes(self._partial))))
        self._partial.clear()
        self._partial_t = None

    def mark(self, label: str, t: float):
        """Record an event of ours (power on, the load command sent, ...)."""
        self.lines.append(TimedLine(t, label, MARK))

    def sent(self, data: bytes, t: float):
        text = clean(data)
        if text:
            self.lines.append(TimedLine(t, text, TX))

    def snapshot(self) -> list:
        """All lines so far, the unfinished last one included (a prompt has no newline)."""
        out = list(self.lines)
        if self._partial_t is not None and clean(bytes(self._partial)):
            out.append(TimedLine(self._partial_t, clean(bytes(self._partial))))
        return out

    def clear(self):
        self.lines.clear()
        self._partial.clear()
        self._partial_t = None


def clean(raw: bytes) -> str:
    """Printable text of a console line: escapes, CRs and backspaces removed."""
    raw = RE_ANSI.sub(b"", raw)
    text = raw.decode("utf-8", "replace")
    # a carriage return without newline restarts the line on a terminal
    text = text.rstrip("\r")
    if "\r" in text:
        text = text.split("\r")[-1] or text.replace("\r", "")
    if "\x08" in text:   # a backspace erases the character before it (U-Boot's countdown)
        kept = []
        for c in text:
            if c == "\x08":
                if kept:
                    kept.pop()
            else:
                kept.append(c)
        text = "".join(kept)
    return "".join(c for c in text if c == "\t" or c >= " ")


# ---- milestones ---------------------------------------------------------------------

# name -> pattern, in boot order. 'login' and 'shell' come from the board's facts.
KERNEL_MILESTONES = (
    ("starting_kernel", r"Starting kernel"),
    ("linux_version", r"Linux version \d"),
    # PPC/x86 and 6.x: "Freeing unused kernel [image (initmem) ]memory"; ARM 2.6.11:
    # "Freeing init memory" (not "Freeing initrd memory", which comes earlier)
    ("freeing_init", r"Freeing (?:unused kernel (?:image )?(?:\(\w+\) )?|init )memory"),
)
KERNEL_NAMES = {name for name, _ in KERNEL_MILESTONES}
MILESTONE_LABELS = {
    "starting_kernel": "Starting kernel",
    "linux_version": "Linux version",
    "freeing_init": "Freeing unused kernel memory",
    "login": "login prompt",
    "shell": "shell prompt",
}


def milestone_patterns(login_prompt: str, shell_prompt: str):
    return KERNEL_MILESTONES + (("login", login_prompt), ("shell", shell_prompt))


def line_time_s(text: str, baud: int) -> float:
    """Seconds a line takes on the wire (8N1: 10 bits a character, the line end too):
    the time from sending a U-Boot command to U-Boot having all of it."""
    return (len(text) + 1) * 10.0 / baud


def origin_time(lines, label="load"):
    for line in lines:
        if line.kind == MARK and line.text == label:
            return line.t
    return None


def find_milestones(lines, patterns, origin_label="load") -> dict:
    """Seconds from the origin mark to the board line of each milestone, in boot order.
    A milestone is the first match after the previous milestone's line, unless one of
    the next two kernel milestones' lines comes first: then that match is a stray (an init script's `Starting
    kernel logger` is no U-Boot hand-over) and the milestone is absent, the others kept.
    Milestones not reached are absent."""
    t0 = origin_time(lines, origin_label)
    if t0 is None:
        return {}
    rx = [ln for ln in lines if ln.kind == RX and ln.t >= t0]
    regexes = [(name, re.compile(pattern)) for name, pattern in patterns]

    def first(regex, start):
        return next((j for j in range(start, len(rx)) if regex.search(rx[j].text)), None)

    found, i = {}, 0
    for k, (name, regex) in enumerate(regexes):
        j = first(regex, i)
        if j is None:
            continue
        # the next two kernel milestones (distinctive lines; prompts can match anything)
        later = [first(r, i) for n, r in regexes[k + 1:k + 3] if n in KERNEL_NAMES]
        if any(x is not None and x < j for x in later):
            continue        # out of order: a stray match
        found[name] = round(rx[j].t - t0, 4)
        i = j  # the shell prompt may share a line with nothing else; stay
    return found


# The same milestones in the board's own time, from the kernel's start: printk times of
# the kernel's log, and the stamp the root file system writes to /dev/kmsg as it starts
# the login prompt. (`Linux version` is printed at printk time 0: nothing to measure.)
GUEST_MILESTONES = KERNEL_MILESTONES[2:] + (("login", r"boardlab: login prompt"),)
GUEST_GREP = "dmesg | grep -E 'Freeing (unused kernel|init) |boardlab: login prompt'"
RE_PRINTK = re.compile(r"^(?:<\d+>)?\[\s*(\d+\.\d+)\] (.*)$")


def guest_milestones(dmesg_lines) -> dict:
    """Seconds of the board's own clock (printk time) at each milestone, the first
    occurrence of each; absent where the log has no timestamps (Linux 2.4)."""
    found = {}
    for line in dmesg_lines:
        m = RE_PRINTK.match(line.strip())
        if not m:
            continue
        for name, pattern in GUEST_MILESTONES:
            if name not in found and re.search(pattern, m.group(2)):
                found[name] = float(m.group(1))
    return found


def last_milestone(milestones: dict, patterns) -> str | None:
    reached = [name for name, _ in patterns if name in milestones]
    return reached[-1] if reached else None


def reached(lines, patterns) -> str:
    """The last milestone a (failed) boot reached, in words, with its time."""
    ms = find_milestones(lines, patterns)
    name = last_milestone(ms, patterns)
    if name is None:
        return "the load command (no kernel output)"
    return f"{MILESTONE_LABELS.get(name, name)} at {ms[name]:.3f} s"


def next_milestone(lines, patterns) -> str:
    """The label of the milestone a boot waited for when it stopped."""
    names = [n for n, _ in patterns]
    last = last_milestone(find_milestones(lines, patterns), patterns)
    nxt = names[names.index(last) + 1] if last and names.index(last) + 1 < len(names) else names[0]
    return MILESTONE_LABELS.get(nxt, nxt)


# ---- raw console captures (JSON lines: host time, bytes as latin-1 text) --------------

def append_raw_chunk(path, t: float, data: bytes):
    import json
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"t": round(t, 6), "data": data.decode("latin-1")}) + "\n")


def read_raw_chunks(path):
    import json
    with open(path, encoding="utf-8") as f:
        return [(c["t"], c["data"].encode("latin-1")) for c in map(json.loads, f) if c]


# ---- the boot log file --------------------------------------------------------------

def format_log(lines, origin_label="load", header=()) -> str:
    """A boot log a person can read: seconds from the origin, '|' board output,
    '>' what was sent, '#' our events."""
    t0 = origin_time(lines, origin_label)
    if t0 is None:
        t0 = lines[0].t if lines else 0.0
    out = [f"# {h}" for h in header]
    out.append(f"# time: seconds from the '{origin_label}' mark (host clock, first character of each line)")
    sym = {RX: "|", TX: ">", MARK: "#"}
    for ln in lines:
        out.append(f"{ln.t - t0:10.4f} {sym[ln.kind]} {ln.text}")
    return "\n".join(out) + "\n"


RE_LOG_LINE = re.compile(r"^\s*(-?\d+\.\d+) ([|>#]) ?(.*)$")


def parse_log(text: str, origin_label="load") -> list:
    """Read a boot log written by format_log back into TimedLines (origin at 0)."""
    kinds = {"|": RX, ">": TX, "#": MARK}
    lines = []
    for raw in text.splitlines():
        m = RE_LOG_LINE.match(raw)
        if m:
            lines.append(TimedLine(float(m.group(1)), m.group(3), kinds[m.group(2)]))
    return lines
