"""`boardlab report RUN [RUN2]`: the study-style table as Markdown, and an HTML page (a
Jinja2 template) with the run's plots. A run is a results directory, or
'baseline:<board>:<kernel>' for stored baselines (e.g. the study's numbers).

One run: per metric its value, baseline, delta, clock, verdict and why. Two: per metric
A, B and the delta; where both sides have samples, the verdict of B against A
(boardlab.judge.verdict, as `boardlab compare` judges)."""
from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2

from boardlab.errors import KERNEL, WORDS, BoardlabError
from boardlab.facts.board import load_board
from boardlab.measure import baselines as bl
from boardlab.judge import outcomes
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.judge.results import load_run
from boardlab.measure import catalogue
from boardlab.measure.families import of_family

TEMPLATES = Path(__file__).parent / "templates"
HISTORY_PAGE = "history/history.html"   # the run's series in the lab's history, where it keeps one


def load_side(spec: str, reference: bool = False) -> tuple[str, dict, list]:
    """-> (label, {(board, suite.metric): metric as results.json has it}, plot files).
    reference: the side the other is judged against (results.load_run)."""
    if spec.startswith("baseline:"):
        board, kernel, base = bl.load_stored(spec)
        return (f"{board} {kernel}",
                {(board, k): {"value": b.value, "unit": b.unit, "samples": b.values(),
                              "verdict": "", "clock": b.clock() or "", "host": b.host_id()}
                 for k, b in base.items()}, [])
    data = load_run(spec, reference=reference)
    metrics, kernels = {}, set()
    for m in data["metrics"]:
        metrics[(m["board"], f"{m['suite']}.{m['name']}")] = dict(m, harness=data["meta"].get("harness"))
        kernels.add(m["kernel"])
    run_dir = Path(spec)
    label = f"{data['meta'].get('run_id', run_dir.name)} ({', '.join(sorted(kernels))})"
    return label, metrics, sorted(run_dir.glob("*.png")) if run_dir.is_dir() else []


def delta_pct(a, b):
    if a in (None, 0) or b is None:
        return None
    return (b - a) / abs(a) * 100.0


def _fmt(v):
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else f"{int(v)}"


def _pct(d):
    return "-" if d is None else f"{d:+.1f} %"


def _order(key):
    suite = key[1].split(".")[0]
    return (of_family(suite), key[0], key[1])


@dataclass
class Row:
    """One metric's line: its cells as the table shows them, and what the page draws."""
    cells: list
    metric: str           # "<board> <suite.name>"
    verdict: str          # as the table words it
    why: str
    delta: float | None   # %, B against A (or the run against its baseline)
    floor: float | None   # the metric's floor there, % of A

    @property
    def family(self) -> str:
        return self.metric.split(" ", 1)[1].split(".")[0]


def _floor_pct(name: str, reference) -> float | None:
    spec = catalogue.METRICS.get(name)
    if spec is None or reference in (None, 0):
        return None
    return 100.0 * spec.floor(reference) / abs(reference)


def _unjudged_why(m: dict) -> str:
    """Why a run's figure was not judged: whose host or clock its baseline is of."""
    source = (m.get("baseline") or {}).get("source") or {}
    if m.get("verdict") == vd.OTHER_HOST:
        return f"baseline measured on {source.get('host_id', '?')}, this run on {m.get('host', '?')}"
    if m.get("verdict") == vd.OTHER_CLOCK:
        return f"baseline on the {source.get('clock', '?')} clock, this run on {m.get('clock', '?')}"
    return ""


def single_rows(a: dict) -> list[Row]:
    rows = []
    for (board, name) in sorted(a, key=_order):
        m = a[(board, name)]
        base = (m.get("baseline") or {}).get("value")
        why = (m.get("comparison") or {}).get("why", "") or _unjudged_why(m)
        verdict = vd.WORDS.get(m["verdict"], m["verdict"])
        delta = delta_pct(base, m["value"])
        rows.append(Row([f"{board} {name}", m["unit"], _fmt(m["value"]), _fmt(base), _pct(delta),
                         m.get("clock") or "-", verdict, why], f"{board} {name}", verdict, why,
                        delta, _floor_pct(name, base)))
    return rows


def _facts(board: str):
    """A board's facts, None when this checkout has none of it (taken as virtual)."""
    try:
        return load_board(board)
    except BoardlabError:
        return None


def _figures(m: dict) -> Figures:
    return Figures(m.get("samples") or [m["value"]], m.get("clock") or None, m.get("host"))


def pair_rows(a: dict, b: dict) -> list[Row]:
    rows = []
    for key in sorted(set(a) | set(b), key=_order):
        va, vb = a.get(key), b.get(key)
        unit = (va or vb)["unit"]
        verdict, why = "", ""
        if va and vb and key[1] in catalogue.METRICS:
            # a LAVA run beside a pytest run is judged with LAVA's (wider) floor
            v = decide(key[1], _figures(va), _figures(vb), _facts(key[0]),
                       harness=va.get("harness") or vb.get("harness"))
            verdict, why = vd.WORDS.get(v.outcome, v.outcome), v.why
        ref = va["value"] if va else None
        delta = delta_pct(ref, vb["value"] if vb else None)
        rows.append(Row([f"{key[0]} {key[1]}", unit, _fmt(ref), _fmt(vb["value"] if vb else None),
                         _pct(delta), verdict, why], f"{key[0]} {key[1]}", verdict, why, delta,
                        _floor_pct(key[1], ref)))
    return rows


def table(spec_a: str, spec_b: str | None = None) -> tuple[list[str], list[Row], list]:
    la, a, plots = load_side(spec_a, reference=bool(spec_b))
    if spec_b:
        lb, b, plots_b = load_side(spec_b)
        return (["metric", "unit", la, lb, "delta", "verdict", "why"], pair_rows(a, b),
                plots + plots_b)
    return (["metric", "unit", la, "baseline", "delta", "clock", "verdict", "why"],
            single_rows(a), plots)


TEXT_COLUMNS = ("clock", "verdict", "why")   # left-aligned, as metric and unit; figures right


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i < 2 or h in TEXT_COLUMNS else "---:" for i, h in enumerate(head)) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def markdown(spec_a: str, spec_b: str | None = None, with_summary: bool = False) -> str:
    head, rows, _ = table(spec_a, spec_b)
    broke = [line for spec in (spec_a, spec_b) if spec for line in who_broke(spec)]
    return ((summary_text(rows) + "".join(f"{line}\n" for line in broke) + ("\n" if broke else "")
             if with_summary else "") + markdown_table(head, [r.cells for r in rows]))


JUNIT_ERROR = re.compile(r'^failed on (?:setup|teardown) with "(.*)"$')   # pytest's junit wording


def who_broke(spec: str) -> list[str]:
    """Who broke a run, before its figures: each fail of what happened to its kernel
    (judge.outcomes: its boot, build, a suite's test) is 'your kernel broke'; each error
    says whose it was as its why does ('the lab broke: power: ...'), else that it is one."""
    if spec.startswith("baseline:"):
        return []
    out = []
    for (board, kernel), said in sorted(outcomes.of_run(Path(spec), load_run(spec)).items()):
        for test, (result, why) in sorted(said.items()):
            why = JUNIT_ERROR.sub(r"\1", why)
            if result not in (outcomes.FAIL, outcomes.ERROR):
                continue
            head = WORDS[KERNEL] if result == outcomes.FAIL else "error"
            said_whose = why.startswith(tuple(WORDS.values()))
            out.append(f"{'' if said_whose else head + ': '}{why} ({board} {kernel}, {test})")
    return out


JUDGED = (vd.SAME, vd.IMPROVED, vd.REGRESSED)


def summary(rows: list[Row]) -> dict:
    """What a reader wants first: how many metrics got each verdict, which regressed (by
    how much), and which could not be judged, and why."""
    counts = {}
    for r in rows:
        counts[r.verdict or "not judged"] = counts.get(r.verdict or "not judged", 0) + 1
    order = [vd.REGRESSED, vd.IMPROVED, vd.SAME, vd.UNKNOWN]
    return {"counts": dict(sorted(counts.items(), key=lambda kv: (
                order.index(kv[0]) if kv[0] in order else len(order), kv[0]))),
            "regressed": [(r.metric, _pct(r.delta)) for r in rows if r.verdict == vd.REGRESSED],
            "unjudged": [(r.metric, r.verdict or "not judged", r.why)
                         for r in rows if r.verdict not in JUDGED]}


def summary_text(rows: list[Row]) -> str:
    s = summary(rows)
    out = [" | ".join(f"{n} {v}" for v, n in s["counts"].items()) + f" | of {len(rows)} metrics"]
    out += [f"regressed: {m} {d}" for m, d in s["regressed"]]
    out += [f"not judged: {m}: {why if why.startswith(v) else f'{v} ({why})' if why else v}" for m, v, why in s["unjudged"]]
    return "\n".join(out) + "\n\n"


def run_ending(run_dir: Path) -> list[str]:
    """A suites run's last lines in the terminal (pytest's summary): where its results
    are, the verdicts' counts, and, with a phase-log boot, where the boot time went."""
    _, rows, _ = table(str(run_dir))
    out = [f"{run_dir}: {summary_text(rows).splitlines()[0]}; the report: boardlab report {run_dir}"]
    out += who_broke(str(run_dir))
    phases = Path(run_dir) / "boot-phases.json"
    if phases.exists():
        doc = json.loads(phases.read_text())
        spans = [s for s in doc["spans"] if s.get("leaf")]
        longest = sorted(spans, key=lambda s: -s["dur_s"])[:3]
        on = f" ({doc['clocks'].removeprefix('clocks: ')})" if doc.get("clocks") else ""
        out.append(f"where the boot time went ({phases.with_suffix('.md')}), longest of {len(spans)} "
                   f"spans{on}: " + ", ".join(f"{s['key']} {s['dur_s'] * 1000:.1f} ms" for s in longest))
    return out


def delta_svg(r: Row, width: int = 160, height: int = 14) -> str:
    """The delta drawn against its floor: the grey band is +-floor, the mark the delta
    (red beyond the floor, grey where not judged; the scale +-max(2 floors, |delta|))."""
    if r.delta is None:
        return ""
    floor = r.floor or 0.0
    span = max(2 * floor, abs(r.delta), 1e-9) * 1.1
    x = lambda v: width / 2 + v / span * (width / 2)   # noqa: E731
    colour = ("#999" if r.verdict not in JUDGED else "#c00" if abs(r.delta) > floor else "#06c")
    return (f'<svg class="delta" width="{width}" height="{height}"><title>{r.delta:+.2f} % '
            f'(floor {floor:.2g} %)</title>'
            f'<rect x="{x(-floor):.1f}" y="2" width="{x(floor) - x(-floor):.1f}" height="{height - 4}" fill="#ddd"/>'
            f'<line x1="{width / 2}" y1="0" x2="{width / 2}" y2="{height}" stroke="#888"/>'
            f'<circle cx="{x(r.delta):.1f}" cy="{height / 2}" r="4" fill="{colour}"/></svg>')


def families(rows: list[Row]) -> list[tuple[str, list[Row]]]:
    out = {}
    for r in rows:
        out.setdefault(r.family, []).append(r)
    return list(out.items())


def html_page(spec_a: str, spec_b: str | None, path: Path) -> Path:
    head, rows, plots = table(spec_a, spec_b)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html", "j2"]))
    path.write_text(env.get_template("report.html.j2").render(
        title=spec_a + (f" vs. {spec_b}" if spec_b else ""), head=head, families=families(rows),
        summary=summary(rows), delta_svg=delta_svg, total=len(rows),
        broke=[line for spec in (spec_a, spec_b) if spec for line in who_broke(spec)],
        history=HISTORY_PAGE if (Path(spec_a) / HISTORY_PAGE).exists() else None,
        plots=[{"title": p.stem, "data": base64.b64encode(p.read_bytes()).decode()} for p in plots]))
    return path
