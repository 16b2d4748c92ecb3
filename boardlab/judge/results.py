"""Results of a run: results/<run-id>/results.json, one entry per metric with its
samples, clock, host, baseline and verdict (boardlab.judge.verdict: same, regressed, improved,
unknown, and why). Rewritten atomically after every metric, so an interrupted run keeps
the results of everything measured before the interruption."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from boardlab.errors import InputError, LabFault
from boardlab.facts.board import Board, load_board
from boardlab.files import atomic_write
from boardlab.measure import baselines as bl
from boardlab.judge import boardhealth
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.judge.pooling import update_baselines
from boardlab.measure import catalogue, clocks, families, kernelid


@dataclass
class Metric:
    board: str
    kernel: str
    suite: str
    name: str
    value: float | None             # None: missing (the baseline has it, the run did not)
    unit: str
    direction: str = "lower"
    samples: list = field(default_factory=list)
    baseline: dict | None = None
    limit: float | None = None
    verdict: str = vd.NEW
    test: str = ""
    clock: str = ""                 # boardlab.measure.clocks: host, guest-realtime, ...
    host: str | None = None         # this run's host (clocks.this_host id); None: unknown
    comparison: dict | None = None  # the verdict (judge.verdict.Verdict) against the baseline
    settings: dict | None = None    # how it was measured, where that changes it ({"run_s": 10})

    @property
    def key(self) -> str:
        return f"{self.suite}.{self.name}"

    def describe(self) -> str:
        base = self.baseline
        if self.verdict == vd.MISSING:
            return (f"{self.key}: missing (the baseline holds {base['value']:g} {base['unit']}; "
                    f"this run did not produce it)")
        why = (self.comparison or {}).get("why", "")
        if not base:
            return f"{self.key} = {self.value:g} {self.unit} (new: no baseline)"
        if self.verdict in vd.NOT_COMPARED:    # other kernel, clock, host or settings; info
            words = vd.WORDS.get(self.verdict, self.verdict)
            source = base.get("source") or {}
            return (f"{self.key} = {self.value:g} {self.unit}: {why if why.startswith(words) else f'{words} ({why})'}; "
                    f"baseline {base['value']:g} {base['unit']} measured on {bl.host_of(source)} "
                    f"({source.get('clock', 'unsaid')} clock), this run on {self.host or 'an unknown host'} "
                    f"({self.clock} clock)")
        return (f"{self.key} = {self.value:g} {self.unit}: {self.verdict}; baseline "
                f"{base['value']:g} {base['unit']}, delta {(self.comparison or {}).get('delta_pct', 0):+.2f} % "
                f"({why})")


class RunDirError(LabFault):
    """The run's directory cannot be made or written."""
    part = "host"    # this machine's disk or permissions


def prepare_run_dir(path=None, prefix: str = "") -> Path:
    """The run directory with its console/ made and writing tried; by default a new
    results/<prefix><date>-<time>[-N] (never one another run has)."""
    if path:
        run = Path(path)
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run = Path("results") / f"{prefix}{stamp}"
        n = 1
        while True:
            try:
                run.parent.mkdir(parents=True, exist_ok=True)
                run.mkdir()
                break
            except FileExistsError:
                n += 1
                run = Path("results") / f"{prefix}{stamp}-{n}"
            except OSError as e:
                raise RunDirError(f"results directory {run.parent}: cannot create it: {e}") from None
    try:
        (run / "console").mkdir(parents=True, exist_ok=True)
        probe = run / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunDirError(f"run directory {run}: not writable ({e.strerror or e}): the run would "
                          f"lose its results; nothing was booted") from None
    return run


class RunResults:
    def __init__(self, run_dir: Path, baselines_root: Path = bl.KERNELS_DIR,
                 host: dict | None = None, harness: str | None = None):
        """host: where the figures are measured (default: this machine, clocks.this_host);
        {"id": None, ...} when that is not known (a LAVA server's worker). harness: whose
        baselines judge (baselines.HARNESSES; default the pytest suites')."""
        self.harness, self.run_dir = harness, Path(run_dir)
        self.host_load: dict | None = None   # what else ran on the host (build.alongside): host-clock figures say so
        self.path = self.run_dir / "results.json"
        self.baselines_root = baselines_root
        self.metrics: list[Metric] = []
        host = host if host is not None else clocks.this_host()
        self.meta = {"run_id": self.run_dir.name, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                     "host": host["id"], "host_info": host}
        if harness:
            self.meta["harness"] = harness   # whose floors judged (a report of two runs uses them too)
        self._baselines = {}
        self._boards = {}
        self._health_seen: set = set()
        if self.path.exists():   # a resumed run keeps what it had
            data = json.loads(self.path.read_text())
            self.meta.update(data.get("meta", {}))
            self.metrics = [Metric(**m) for m in data.get("metrics", [])]

    def baselines(self, board, kernel) -> dict:
        if (board, kernel) not in self._baselines:
            self._baselines[(board, kernel)] = bl.load(kernel, board, self.baselines_root,
                                                       self.harness)
        return self._baselines[(board, kernel)]

    def board_facts(self, board) -> Board:
        """The facts of a board: the Board a caller passed (the strategy's own, loaded
        once), else loaded by name."""
        if isinstance(board, Board):
            self._boards[board.name] = board
            return board
        if board not in self._boards:
            self._boards[board] = load_board(board)
        return self._boards[board]

    def identify(self, board: str, kernel: str, identity: dict | None):
        """What the kernel a run calls `kernel` is (measure.kernelid), in meta.kernels."""
        if identity:
            known = self.meta.setdefault("kernels", {})
            known[f"{board}/{kernel}"] = kernelid.merge(known.get(f"{board}/{kernel}"), identity)

    def identity(self, board: str, kernel: str) -> dict | None:
        return self.meta.get("kernels", {}).get(f"{board}/{kernel}")

    def record(self, board, kernel, suite, name, value, unit=None, direction=None, samples=(),
               test="", qemu_clock=None, identity=None, settings=None) -> Metric:
        """A catalogue metric (a caller naming unit and direction must agree) with its samples,
        judged against the baseline's. qemu_clock: the virtual board's (default its facts').
        identity (measure.kernelid) or settings (cyclictest's run length, what shared the
        host) other than the baseline's: not judged against it."""
        spec = catalogue.spec(f"{suite}.{name}")
        if unit not in (None, spec.unit) or direction not in (None, spec.direction):
            raise bl.BaselineError(f"{spec.key}: measured in {unit!r} ({direction} is better), "
                                   f"but the catalogue says {spec.unit!r} ({spec.direction})")
        facts = self.board_facts(board)   # board: a Board (its facts as loaded) or a name
        board = facts.name
        self._note_board_health(board)
        self.identify(board, kernel, identity)
        clock = clocks.metric_clock(suite, name, spec.unit, facts, qemu_clock)
        settings = families.figure_settings(suite, facts.isa, settings)   # whose programs measured it
        if clock == clocks.HOST and self.host_load:
            settings = {**(settings or {}), **self.host_load}
        m = Metric(board, kernel, suite, name, float(value), spec.unit, spec.direction,
                   [float(s) for s in samples] or [float(value)], test=test, clock=clock,
                   host=self.meta["host"], settings=settings or None)
        base = self.baselines(board, kernel).get(m.key)
        if base is not None:
            base = base.for_settings(m.settings)
            if base.unit != spec.unit:
                raise bl.BaselineError(f"{bl.baseline_path(kernel, board, self.baselines_root)}: "
                                       f"metrics.{m.key}.unit is {base.unit!r}, the catalogue "
                                       f"says {spec.unit!r}")
            m.baseline = base.to_dict(others=False)
            v = decide(spec, Figures(base.values(), base.clock(), base.host_id(),
                                     bl.load_identity(kernel, board, self.baselines_root), base.settings(),
                                     stated=base.stated()),
                       Figures(m.samples, clock, m.host, self.identity(board, kernel), m.settings),
                       facts, harness=self.harness)
            m.verdict, m.comparison = v.outcome, v.to_dict()
            if v.compared:
                limit = base.limit(self.harness)
                m.limit = round(limit, 6) if limit is not None else None
        self.metrics = [x for x in self.metrics
                        if (x.board, x.kernel, x.key) != (board, kernel, m.key)] + [m]
        self.save()
        return m

    def _note_board_health(self, board: str) -> None:
        """A board drifting from its own level (judge.boardhealth) when this run measured
        it: said in the run's meta, so no one reads its figures as the kernel's."""
        if board in self._health_seen:
            return
        self._health_seen.add(board)
        health = boardhealth.health_of(board)
        if health is not None and health.state == boardhealth.DRIFTING:
            self.meta.setdefault("board_drifting", {})[board] = health.line()

    def mark_missing(self, board: str, kernel: str, suites, expected: dict | None = None) -> list[Metric]:
        """Each metric of these suites the baseline holds and this run did not produce:
        recorded as 'missing' (it fails its suite; nothing goes missing in silence).
        expected: {suite: [metric name]} that a LAVA job said it would report (its
        expected test cases), instead of the baseline's."""
        have = {m.key for m in self.metrics if (m.board, m.kernel) == (board, kernel)}
        bases = self.baselines(board, kernel)
        keys = ({f"{s}.{n}" for s, names in expected.items() for n in names} if expected is not None
                else {k for k in bases if k.split(".")[0] in suites})
        out = []
        for key in sorted(keys):
            if key not in have and key in catalogue.METRICS:
                spec, base = catalogue.METRICS[key], bases.get(key)
                out.append(Metric(board, kernel, spec.suite, spec.name, None, spec.unit, spec.direction,
                                  [], base.to_dict(others=False) if base else None, verdict=vd.MISSING,
                                  host=self.meta["host"]))
        self.metrics += out
        if out:
            self.save()
        return out

    def save(self):
        doc = {"meta": self.meta, "metrics": [asdict(m) for m in self.metrics]}
        atomic_write(self.path, json.dumps(doc, indent=1) + "\n")

    def update_baselines(self) -> list[Path]:
        """Write the run's metrics as baselines (only when asked: --update-baselines)."""
        return update_baselines([self.metrics], self.baselines_root, harness=self.harness,
                                facts=self._boards, identities=self.meta.get("kernels", {}))


class BadRun(InputError):
    """A run directory or results.json that cannot be read as one."""


METRIC_FIELDS = frozenset(f.name for f in fields(Metric))


def load_run(path, reference: bool = False, judged: bool = False) -> dict:
    """A run's results.json (the directory, or the file itself); BadRun naming the file
    when it is missing, empty, truncated or not a run's results, BadFigure when a figure is
    no number (catalogue.usable). reference: its figures are what others are judged against
    (side A, baselines to be); judged: each metric must be the catalogue's, in its unit."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise BadRun(f"{p}: no results.json (is it a run directory?)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BadRun(f"{p}: cannot be read: {e}") from None
    if not text.strip():
        raise BadRun(f"{p}: empty (the run was cut off before its first metric?)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadRun(f"{p}: not valid JSON at line {e.lineno} column {e.colno}: {e.msg} "
                     f"(truncated?)") from None
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) \
            or not isinstance(data.get("metrics"), list):
        raise BadRun(f"{p}: not a run's results (no 'meta' mapping and 'metrics' list)")
    for i, m in enumerate(data["metrics"]):
        missing = [k for k in ("board", "kernel", "suite", "name", "value", "unit", "verdict")
                   if not isinstance(m, dict) or k not in m]
        extra = sorted(set(m) - METRIC_FIELDS) if not missing else []
        if missing or extra:
            raise BadRun(f"{p}: field 'metrics[{i}]' " + (f"lacks {', '.join(missing)}" if missing else
                         f"has {', '.join(map(repr, extra))}, which no run's metric has"))
        _check_figures(m, f"{p}: metrics[{i}] {m['suite']}.{m['name']}", reference, judged)
    return data


def _check_figures(m: dict, where: str, reference: bool, judged: bool):
    key = f"{m['suite']}.{m['name']}"
    spec = catalogue.METRICS.get(key)
    if judged and (spec is None or spec.unit != m["unit"]):   # no floor to judge it by
        raise BadRun(f"{where}: " + (f"in {m['unit']!r}, the catalogue says {spec.unit!r}" if spec else
                                     "not in the catalogue (boardlab/measure/catalogue.py)"))
    if m["value"] is not None:   # None: missing, nothing measured
        catalogue.usable(key, [m["value"]], where, reference)
        if m.get("samples") == []:   # a run records every sample: none beside a value is a hand's edit
            raise BadRun(f"{where}: samples [] beside the value {m['value']!r}: a measured figure keeps "
                         f"its samples (a baseline pooled from it would hold one)")
        if m.get("samples"):     # not said: the value alone (a run of an older boardlab)
            catalogue.usable(key, m["samples"], where, reference)
