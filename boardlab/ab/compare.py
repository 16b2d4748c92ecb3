"""`boardlab compare`: kernel A against kernel B on one board, the study's question as one
command. A side is a kernel to boot (a kernel of the board's facts, a uImage file,
tftp:<file>), a run directory (its results.json samples) or baseline:<board>:<kernel>
(stored samples). Kernels to boot are booted in turn, A, B, A, B, ..., so that drift of
the host hits both sides; after --repeats rounds, more rounds while a noisy metric's
verdict is unknown, up to --max-repeats. Every metric is then judged by boardlab.judge.decide
(B against A): the table reads like the study's, with the 95 % interval of the delta."""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from boardlab.boot import bootplan
from boardlab.boot.session import board_session, require_env
from boardlab.facts.board import BOARDS_DIR, load_board
from boardlab.errors import InputError
from boardlab.files import atomic_write
from boardlab.measure import baselines as bl
from boardlab.judge import verdict as vd
from boardlab.images import ownprograms
from boardlab.judge import bootspans, mdc
from boardlab.judge.decide import Figures, decide
from boardlab.judge.results import RunResults, load_run, prepare_run_dir
from boardlab.log import progress
from boardlab.measure import catalogue, clocks, kernelid, phases, sample, workloads
from boardlab.measure.families import Options, figure_settings, of_family, run_settings


@dataclass
class Side:
    label: str
    kernel: str | None = None            # to boot; None: stored samples
    samples: dict = field(default_factory=dict)   # catalogue key -> [values]
    boots: list = field(default_factory=list)     # each boot's milestones (s)
    histogram: dict | None = None        # the last jitter run's
    host: str | None = None              # where host-clock samples were taken
    clock: str | None = None             # the virtual board's clock on the boots
    clocks: dict = field(default_factory=dict)    # catalogue key -> its clock (boardlab.measure.clocks)
    settings: dict = field(default_factory=dict)  # catalogue key -> how it was measured ({"run_s": 5})
    board: str | None = None             # whose figures (stored sides); None: the env's board
    identity: dict = field(default_factory=dict)  # what the booted kernel is (measure.kernelid)
    span_boots: list = field(default_factory=list)  # each phase-log boot's {span: s} (measure.phases)
    span_sources: dict = field(default_factory=dict)
    timeline: list = field(default_factory=list)   # the first such boot's spans, for the picture
    stored: dict = field(default_factory=dict)     # catalogue key -> its Baseline (a stored side)

    def add(self, figures: dict):
        for key, value in figures.items():
            self.samples.setdefault(key, []).append(float(value))

    def add_spans(self, spans):
        self.span_boots.append(phases.durations(spans))
        self.span_sources.update(phases.sources(spans))
        self.timeline = self.timeline or [s.to_dict() for s in spans]


def stored_side(spec: str, reference: bool = False) -> Side | None:
    """A side that needs no boot: baseline:<board>:<kernel>, or a run directory (its
    figures checked by load_run: catalogue metrics, usable figures; reference: it is side
    A, what the other is judged against)."""
    if spec.startswith("baseline:"):
        board, kernel, base = bl.load_stored(spec)
        side = Side(f"{kernel} (stored)", samples={k: b.values() for k, b in base.items()}, board=board,
                    clocks={k: b.clock() for k, b in base.items()},
                    settings={k: b.settings() for k, b in base.items() if b.settings()}, stored=base)
        hosts = {b.host_id() or bl.host_of(b.source) for b in base.values()}
        side.host = hosts.pop() if len(hosts) == 1 else "several hosts"
        return side
    path = Path(spec)
    if path.is_dir() and (path / "results.json").exists():
        data = load_run(path, reference=reference, judged=True)
        data["metrics"] = [m for m in data["metrics"] if m["value"] is not None]   # missing: no figures
        boards = {m["board"] for m in data["metrics"]}
        side = Side(f"{path.name}", host=data["meta"].get("host"),
                    board=boards.pop() if len(boards) == 1 else None)
        for m in data["metrics"]:
            side.samples[f"{m['suite']}.{m['name']}"] = m.get("samples") or [m["value"]]
            side.clocks[f"{m['suite']}.{m['name']}"] = m.get("clock")
            side.settings[f"{m['suite']}.{m['name']}"] = m.get("settings")
        return side
    return None


@dataclass
class Row:
    spec: catalogue.MetricSpec
    cmp: vd.Verdict | None    # None: not compared (note says why)
    note: str = ""            # why there is no comparison


def judge(a: Side, b: Side, this_host: str | None, board=None) -> list[Row]:
    """Every metric both sides have, judged by judge.decide (board: the facts of the
    sides' board). Sides both booted here were booted in turn: no drift between them."""
    rows = []
    for key in sorted(set(a.samples) & set(b.samples), key=lambda k: (
            of_family(k.split(".")[0]), k)):
        spec = catalogue.spec(key)
        v = decide(spec, _figures(a, key, b, this_host), _figures(b, key, a, this_host), board,
                   interleaved=bool(a.kernel and b.kernel))
        rows.append(Row(spec, v) if v.compared else Row(spec, None, v.why))
    return rows


def _figures(side: Side, key: str, other: Side, this_host: str | None) -> Figures:
    """side's figures of key; a stored side's of the other side's settings when it keeps
    them (a 60 s run's maximum against the 60 s baseline, not the 10 s one)."""
    host = side.host or this_host
    if key in side.stored and other.settings.get(key):
        base = side.stored[key].for_settings(other.settings[key])
        return Figures(base.values(), base.clock(), host, settings=base.settings(), stated=base.stated())
    stated = key in side.stored and side.stored[key].stated()   # the study's numbers: as values
    return Figures(side.samples[key], side.clocks.get(key), host, settings=side.settings.get(key), stated=stated)


def unknown(rows) -> list[str]:
    return [r.spec.key for r in rows if r.cmp is not None and r.cmp.outcome == vd.UNKNOWN]


def run_boots(env_path: str, sides: list[Side], families, repeats: int, max_repeats: int,
              jitter_s: int, log_dir: Path, this_host: str | None, phase_log: bool = False,
              root: str = "ramdisk", tools: str | None = None):
    """Boot the sides that name a kernel in turn until decided or max_repeats rounds;
    phase_log: every boot with the kernel's phase log, its spans kept; root: ramdisk or
    nfs (a bisect's kernels measured on the root they were bisected on); tools: whose
    programs (None: each family's record for the board's CPU)."""
    booting = [s for s in sides if s.kernel]
    with board_session(env_path, log_dir, command="compare") as (strategy, shell):
        board = strategy.board
        rounds = 0

        def one_round():   # each booting side once, in turn: host drift hits both
            nonlocal rounds
            rounds += 1
            for side in booting:
                t0 = time.monotonic()
                strategy.select(kernel=side.kernel, root=root, ramdisk="", phase_log=phase_log)
                figures, extras = sample.one_sample(strategy, shell, families, jitter_s, tools,
                                                   lambda sh: ownprograms.onto_running_board(sh, board.isa))
                side.add(figures)
                if phase_log:
                    side.add_spans(phases.of_boot(extras["boot"]))
                side.identity = kernelid.merge(side.identity, strategy.kernel_identity())
                side.boots.append(extras["boot"].milestones)
                side.histogram = extras.get("histogram", side.histogram)
                side.clock, side.host = extras["boot"].qemu_clock, this_host
                for key in figures:
                    suite, name = key.split(".", 1)
                    side.clocks[key] = clocks.metric_clock(suite, name, catalogue.spec(key).unit,
                                                           board, side.clock)
                    side.settings[key] = figure_settings(
                        suite, board.isa, run_settings(suite, Options(jitter_s=jitter_s)) or None, tools)
                progress(f"round {rounds}: {side.label} in {time.monotonic() - t0:.0f} s, login "
                         f"{extras['boot'].milestones.get('login', 0):.2f} s (host clock)")

        def decided():
            open_keys, reachable = still_open(sides, this_host, board, max_repeats)
            if open_keys and not reachable:
                progress(f"unknown after {rounds} rounds: {', '.join(open_keys[:5])}: out of reach "
                         f"within --max-repeats {max_repeats}, stopped")
            elif open_keys and rounds < max_repeats:
                progress(f"unknown after {rounds} rounds: {', '.join(open_keys[:5])}"
                         f"{' ...' if len(open_keys) > 5 else ''}: another round")
            return not reachable

        return vd.sample_until_decided(one_round, decided, repeats, max(repeats, max_repeats))


def still_open(sides, this_host: str | None, board, max_repeats: int) -> tuple[list, list]:
    """After a round: the metrics still unknown, and those of them that more rounds up to
    max_repeats could decide (compare stops when none could)."""
    rows = judge(sides[0], sides[1], this_host, board)
    exact = {r.spec.key: r.cmp.exact for r in rows if r.cmp is not None}
    open_keys = unknown(rows)
    return open_keys, [k for k in open_keys if not out_of_reach(sides, k, max_repeats, exact[k])]


def out_of_reach(sides, key: str, max_repeats: int, exact: bool) -> str | None:
    """Why more rounds up to max_repeats would leave the metric unknown, or None (exact:
    the judge found exactness shown for the pair)."""
    a, b = sides[0].samples[key], sides[1].samples[key]
    return vd.out_of_reach(a, b, catalogue.spec(key), max_repeats, both=bool(sides[0].kernel), exact=exact)


def explain_unknown(rows, a: Side, b: Side, rounds: int, max_repeats: int) -> None:
    """Each metric left unknown says why it stopped and what would decide it."""
    for r in rows:
        if r.cmp is None or r.cmp.outcome != vd.UNKNOWN:
            continue
        key = r.spec.key
        stop = vd.out_of_reach(a.samples[key], b.samples[key], r.spec, max_repeats,
                               both=bool(a.kernel), exact=r.cmp.exact) if rounds else None
        r.cmp.why += (f"; left unknown after {rounds} round(s): "
                      + (stop if stop else f"the budget (--max-repeats {max_repeats}) was spent" if rounds
                         else "stored figures, no boots")
                      + "; " + vd.boots_to_decide(a.samples[key], b.samples[key], r.spec, max(rounds, 1),
                                                  both=bool(a.kernel), exact=r.cmp.exact))


def write(out_dir: Path, a: Side, b: Side, rows, meta: dict, where_went=None) -> dict[str, Path]:
    """compare.md, compare.json, and the HTML page with its plots."""
    from boardlab.pages.compare_page import html_page, markdown
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"markdown": out_dir / "compare.md", "json": out_dir / "compare.json",
             "html": out_dir / "compare.html"}
    atomic_write(files["markdown"], markdown(a, b, rows, where_went))
    doc = {"meta": meta, "sides": [{"label": s.label, "kernel": s.kernel, "host": s.host,
                                    "clock": s.clock, "samples": s.samples, "boots": s.boots,
                                    "span_boots": s.span_boots, "timeline": s.timeline}
                                   for s in (a, b)],
           "rows": [{"metric": r.spec.key, "note": r.note,
                     **(r.cmp.to_dict() if r.cmp else {})} for r in rows],
           "where": where_went.to_dict() if where_went else None}
    atomic_write(files["json"], json.dumps(doc, indent=1) + "\n")
    html_page(files["html"], a, b, rows, meta, where_went)
    return files


def record_booted(out_dir: Path, board, sides: list[Side]):
    """The booted sides' samples as the run's results.json, judged against their kernels'
    baselines like any run's (what the lab's history takes in)."""
    res = RunResults(out_dir)
    for s in sides:
        if s.kernel:
            kernel = bootplan.resolve_kernel(board, s.kernel).name
            for key, values in s.samples.items():
                suite, name = key.split(".", 1)
                res.record(board, kernel, suite, name, statistics.median(values), samples=values,
                           qemu_clock=s.clock, identity=s.identity or None, settings=s.settings.get(key))


def _one_board(env_path: str, sides: list[Side]) -> str | None:
    """The sides' one board's name (None: neither they nor the environment say): figures
    of two boards say nothing about a kernel."""
    env_board = Path(env_path).stem if (BOARDS_DIR / f"{Path(env_path).stem}.yaml").exists() else None
    boards = [(s.label, s.board or (env_board if s.kernel else None)) for s in sides]
    if len({b for _, b in boards if b}) > 1:
        raise ValueError("compare judges two kernels on one board, but the sides are of "
                         + " and ".join(f"{label}: board {b}" for label, b in boards)
                         + "; compare each board's kernels on their own")
    named = {b for _, b in boards if b}
    return named.pop() if named else env_board


def compare(env_path: str, specs: list[str], *, families=sample.FAMILIES, repeats: int = 5,
            max_repeats: int = 10, jitter_s: int = workloads.JITTER_RUN_S, out_dir: Path | None = None,
            prepare_board=None, phase_log: bool = False, root: str = "ramdisk",
            tools: str | None = None) -> tuple:
    """prepare_board(board): what the board needs before it boots (a virtual board's
    images), called once when a side is booted. phase_log: boot with the kernel's phase
    log and say where the time went; its boots' figures are not the lab's milestone
    figures (initcall_debug moves them), so they are compared but not recorded."""
    if len(specs) != 2:
        raise ValueError(f"compare takes two sides (--kernel A --kernel B), got {len(specs)}")
    for option, n in (("--repeats", repeats), ("--max-repeats", max_repeats), ("--jitter-seconds", jitter_s)):
        if n < 1:
            raise InputError(f"{option} {n}: at least 1")
    bad = [f for f in sample.narrowed(families) if f not in sample.FAMILIES]
    if bad:
        raise InputError(f"unknown famil{'ies' if len(bad) > 1 else 'y'} {', '.join(bad)} "
                         f"(known: {', '.join(sample.FAMILIES)})")
    this_host = clocks.this_host()["id"]
    sides = [stored_side(s, reference=i == 0) or Side(s, kernel=s) for i, s in enumerate(specs)]
    if any(s.kernel for s in sides):
        require_env(env_path)   # before anything is written
    if phase_log and not all(s.kernel for s in sides):
        raise ValueError("--phases boots both kernels with their phase log, but "
                         + ", ".join(s.label for s in sides if not s.kernel) + " is stored figures, not a kernel")
    board_name = _one_board(env_path, sides)
    board = load_board(board_name) if board_name else None
    for side in sides:   # a mistyped run directory or file: said before the board is taken
        if side.kernel and board is not None:
            bootplan.resolve_kernel(board, side.kernel)
    if prepare_board and board is not None and any(s.kernel for s in sides):
        prepare_board(board)   # refused when its lab host is down: before anything is written
    for side in sides:   # a kernel nothing has built yet: said before the first boot
        if side.kernel and board is not None:
            bootplan.require_files(board, bootplan.plan_boot(board, side.kernel).stage)
    out_dir = prepare_run_dir(out_dir, prefix="compare-")   # before any boot
    said = mdc.before_sampling(board, sample.narrowed(families), repeats, both=True) if board and any(s.kernel for s in sides) \
        else None
    if said:
        progress(said)
    rounds = 0
    if any(s.kernel for s in sides):
        rounds = run_boots(env_path, sides, families, repeats, max_repeats, jitter_s,
                           out_dir / "console", this_host, phase_log, root, tools)
        if board is not None and not phase_log:
            record_booted(out_dir, board, sides)
    rows = judge(sides[0], sides[1], this_host, board)
    explain_unknown(rows, sides[0], sides[1], rounds, max(repeats, max_repeats))
    went = None
    if phase_log:
        went = bootspans.of_sides(sides[0], sides[1])
    meta = {"env": env_path, "sides": specs, "rounds": rounds, "host": this_host, "board": board_name,
            "families": list(families), "root": root, "tools": tools, "repeats": repeats, "max_repeats": max(repeats, max_repeats), "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "phase_log": phases.BOOT_ARGS if phase_log else None}
    return sides, rows, write(out_dir, sides[0], sides[1], rows, meta, went)
