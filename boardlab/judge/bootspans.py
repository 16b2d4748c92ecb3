"""Where the boot time went: kernel A against kernel B, span by span (the spans of
boardlab.measure.phases, each boot's). Every span both boots have is judged like any
metric (boardlab.judge.decide, the floor of catalogue.span): on the deterministic clock
one boot a side decides an initcall, since its duration repeats. The changed leaf spans,
sorted by their change, are then summed against the milestone's change (the login
prompt on the same clock: the leaves of a boot add up to it): what they explain, and
what is left unexplained."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from boardlab.files import atomic_write
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue, phases
from boardlab.measure.clocks import this_host

FLAGGED = (vd.REGRESSED, vd.IMPROVED)


@dataclass
class SpanRow:
    key: str
    source: str
    cmp: vd.Verdict
    only: str = ""      # "A" or "B": the span is in one kernel's boots only (0 s in the other's)

    @property
    def delta_s(self) -> float:
        return self.cmp.b - self.cmp.a

    def to_dict(self) -> dict:
        return {"span": self.key, "source": self.source, "only": self.only, "delta_s": round(self.delta_s, 6),
                **self.cmp.to_dict()}


@dataclass
class SpanComparison:
    milestone: str                  # what the leaves add up to
    total: vd.Verdict | None     # the milestone's comparison (None: not compared)
    changed: list = field(default_factory=list)    # leaf SpanRows beyond their floor, largest first
    unknown: list = field(default_factory=list)    # leaf SpanRows the samples do not decide
    phases: list = field(default_factory=list)     # the coarse spans, every one
    spans: int = 0                  # leaf spans judged
    not_compared: str = ""          # why the two kernels' spans were not judged

    @property
    def changed_leaves(self) -> list:   # a module's init lies inside a script's span: not summed
        return [r for r in self.changed if is_leaf(r.key)]

    @property
    def explained_s(self) -> float:
        return sum(r.delta_s for r in self.changed_leaves)

    @property
    def total_delta_s(self) -> float:
        return self.total.b - self.total.a if self.total else 0.0

    @property
    def explained_fraction(self) -> float | None:
        return self.explained_s / self.total_delta_s if abs(self.total_delta_s) > 1e-9 else None

    def to_dict(self) -> dict:
        if self.not_compared:
            return {"milestone": self.milestone, "not_compared": self.not_compared}
        return {"milestone": self.milestone, "total": self.total.to_dict(),
                "total_delta_s": round(self.total_delta_s, 6), "explained_s": round(self.explained_s, 6),
                "explained_fraction": self.explained_fraction, "spans_judged": self.spans,
                "changed": [r.to_dict() for r in self.changed],
                "unknown": [r.to_dict() for r in self.unknown],
                "phases": [r.to_dict() for r in self.phases]}


is_leaf = phases.is_leaf


def _samples(boots, key) -> list:
    return [boot.get(key, 0.0) for boot in boots]


def milestone_name(sources: dict) -> str:
    if phases.CONSOLE in sources.values():
        return "Linux version -> login prompt (console arrival, host clock)"
    return "login prompt, s from the kernel's start (the board's clock: boot_time.guest_login)"


def clock_of(sources: dict) -> str:
    """Whose clock a boot's spans are on: the console's (host) or the board's."""
    return "host" if phases.CONSOLE in sources.values() else "board"


def comparable(a_sources: dict, b_sources: dict) -> str | None:
    """Why two kernels' spans cannot be judged against each other, or None."""
    if clock_of(a_sources) != clock_of(b_sources):
        era = {"host": "the console's arrival (host clock: an old kernel without printk times)",
               "board": "the kernel's own log (the board's clock)"}
        return (f"A's spans are timed by {era[clock_of(a_sources)]}, B's by {era[clock_of(b_sources)]}: "
                f"two clocks, not compared span by span (the milestone table above says what can be)")
    return None


def _decide(spec, a: list, b: list) -> vd.Verdict:
    """The judge's verdict on a span: both sides booted here, in turn (compare's rounds)."""
    here = this_host()["id"]
    # both sides timed by one clock here (spans_apart said so): compared as values
    return decide(spec, Figures(a, host=here, stated=True), Figures(b, host=here), interleaved=True)


def compare_spans(a_boots: list, b_boots: list, a_sources: dict, b_sources: dict) -> SpanComparison:
    """a_boots, b_boots: each boot's {span key: seconds}; a_, b_sources: {key: phases
    source} of each side. Spans of two clocks are not judged (SpanComparison.not_compared)."""
    if not a_boots or not b_boots:
        raise ValueError("where the time went needs the phase log of both kernels' boots "
                         "(compare --phases boots them with it)")
    sources = {**a_sources, **b_sources}
    if why := comparable(a_sources, b_sources):
        return SpanComparison(milestone_name(sources), None, not_compared=why)
    keys = sorted(set().union(*a_boots, *b_boots))
    leaves = [k for k in keys if is_leaf(k)]
    total_spec = catalogue.span("phase.login", next(iter(sources.values()), phases.PRINTK))
    out = SpanComparison(milestone_name(sources), _decide(
        total_spec, [sum(b.get(k, 0.0) for k in leaves) for b in a_boots],
        [sum(b.get(k, 0.0) for k in leaves) for b in b_boots]), spans=len(leaves))
    for key in keys:
        only = "" if any(key in b for b in a_boots) and any(key in b for b in b_boots) else (
            "A" if any(key in b for b in a_boots) else "B")
        row = SpanRow(key, sources.get(key, phases.PRINTK), _decide(
            catalogue.span(key, sources.get(key, phases.PRINTK)), _samples(a_boots, key), _samples(b_boots, key)),
            only)
        if ".." in key:             # a coarse phase (a module's init is listed like a leaf)
            out.phases.append(row)
        elif row.cmp.outcome in FLAGGED:
            out.changed.append(row)
        elif row.cmp.outcome == vd.UNKNOWN:
            out.unknown.append(row)
    out.changed.sort(key=lambda r: -abs(r.delta_s))
    out.phases.sort(key=lambda r: phases.PHASE_MARKS.index(r.key.split(".", 1)[1].split("..")[0]))
    return out


def of_sides(a, b) -> SpanComparison:
    """Where the time went between two compare sides booted with their phase log."""
    return compare_spans(a.span_boots, b.span_boots, a.span_sources, b.span_sources)


def _ms(s: float) -> str:
    return f"{s * 1000:+.3f} ms" if abs(s) < 10 else f"{s:+.3f} s"


def _row(r: SpanRow, a_label, b_label) -> str:
    c = r.cmp
    ci = f"{c.ci_pct[0]:+.2f} .. {c.ci_pct[1]:+.2f} %" if c.method != "exact" else "exact"
    name = r.key + (f" (only in {a_label if r.only == 'A' else b_label})" if r.only else "")
    return (f"| {name} | {r.source} | {c.a * 1000:.3f} (n={c.n[0]}) | {c.b * 1000:.3f} (n={c.n[1]}) | "
            f"{_ms(r.delta_s)} | {ci} | {c.outcome} |")


def markdown(w: SpanComparison, a_label: str, b_label: str, top: int = 25) -> str:
    if w.not_compared:
        return f"## Where the time went\n\n{w.not_compared}\n"
    head = "| span | source | A ms | B ms | change | 95 % interval | verdict |\n|---|---|---:|---:|---:|---|---|"
    frac = w.explained_fraction
    out = ["## Where the time went", "",
           f"{w.milestone}: {w.total.a:.4f} s -> {w.total.b:.4f} s, {_ms(w.total_delta_s)} "
           f"({w.total.outcome}). The {len(w.changed_leaves)} of {w.spans} spans changed beyond their floor "
           f"add up to {_ms(w.explained_s)}"
           + (f": {100 * frac:.1f} % of the change explained, {_ms(w.total_delta_s - w.explained_s)} not."
              if frac is not None and w.total.outcome in FLAGGED else
              f"; the milestone is {w.total.outcome}: no change to explain."), ""]
    if w.changed:
        out += ["Changed beyond the floor, largest first:", "", head]
        out += [_row(r, a_label, b_label) for r in w.changed[:top]]
        if len(w.changed) > top:
            out.append(f"| ... {len(w.changed) - top} more in compare.json | | | | | | |")
        out.append("")
    if w.unknown:
        out += [f"Not decided by these samples ({len(w.unknown)}): "
                + ", ".join(r.key for r in w.unknown[:10]) + (" ..." if len(w.unknown) > 10 else ""), ""]
    out += ["Phases (kernel start -> first initcall -> last initcall -> init -> login):", "", head]
    out += [_row(r, a_label, b_label) for r in w.phases]
    srcs = sorted({r.source for r in w.phases + w.changed})
    out += ["", "Sources: " + "; ".join(f"{s}: {phases.SOURCES[s]}" for s in srcs), ""]
    return "\n".join(out)


def leading_change(w: SpanComparison) -> str:
    """One line: the largest span change, for a person about to bisect."""
    if w.not_compared:
        return w.not_compared
    if not w.changed:
        return f"no span changed beyond its floor ({_ms(w.total_delta_s)} in all)"
    r = w.changed[0]
    frac = r.delta_s / w.total_delta_s if abs(w.total_delta_s) > 1e-9 else None
    return (f"{r.key} {_ms(r.delta_s)} ({r.cmp.outcome}, {r.source})"
            + (f", {100 * frac:.0f} % of the {_ms(w.total_delta_s)} change" if frac is not None else ""))


def write_boot(rec, out_dir, board_clock: str) -> str:
    """One phase-log boot's spans beside a run's results: boot-phases.md (what
    format_boot prints) and boot-phases.json (every span). board_clock: the clock of the
    board's printk stamps (measure.clocks.guest_clock)."""
    spans = phases.of_boot(rec)
    text = (f"# Where the boot time went: {rec.board}, kernel {rec.kernel.name}, root {rec.root}\n\n"
            f"one boot with {phases.BOOT_ARGS}; kernel log {Path(rec.log_path).with_suffix('.kmsg')}\n\n"
            + format_boot(rec, board_clock) + "\n")
    atomic_write(Path(out_dir) / "boot-phases.md", text)
    atomic_write(Path(out_dir) / "boot-phases.json", json.dumps(
        {"board": rec.board, "kernel": rec.kernel.name, "root": rec.root, "boot_args": phases.BOOT_ARGS,
         "board_clock": board_clock, "clocks": spans_clocks(spans, board_clock),
         "spans": [s.to_dict() for s in spans]}, indent=1) + "\n")
    return text


def spans_clocks(spans, board_clock: str) -> str:
    """Which clock each source's spans are on (the console's: the host's)."""
    on_board = sorted({s.source for s in spans if s.source != phases.CONSOLE})
    out = [f"{' and '.join(on_board)} spans on the board's clock, {board_clock}"] if on_board else []
    if any(s.source == phases.CONSOLE for s in spans):
        out.append(f"{phases.CONSOLE} spans on the host clock of {this_host()['id']}")
    return "clocks: " + "; ".join(out)


def format_boot(rec, board_clock: str, top: int = 15) -> str:
    """One boot's spans for a person: their clocks, the phases and the longest leaves."""
    spans = phases.of_boot(rec)
    coarse = [s for s in spans if ".." in s.key]
    modules = [s for s in spans if s.kind == "module"]
    leaves = sorted((s for s in spans if is_leaf(s.key)), key=lambda s: -s.dur_s)[:top]
    out = [spans_clocks(spans, board_clock), "phases:"]
    out += [f"  {s.key:40s} {s.dur_s * 1000:10.3f} ms  ({s.source})" for s in coarse]
    if modules:
        out += ["modules loaded from user space (inside init's time):"]
        out += [f"  {s.key:40s} {s.dur_s * 1000:10.3f} ms  ({s.source})" for s in modules]
    out += [f"longest of {sum(is_leaf(s.key) for s in spans)} spans:"]
    out += [f"  {s.key:40s} {s.dur_s * 1000:10.3f} ms  ({s.source})" for s in leaves]
    return "\n".join(out)
