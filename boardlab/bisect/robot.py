"""The report a maintainer acts on, for a culprit a bisect named, in the manner of the
kernel test robot's (LKP) regression mails: the metric and its change (interval,
samples each side), the commit and its subject, the good and first bad figures, whether
the revert confirms it (bisect.revert), the other boards and configs the history
measured over the same range, and the command that re-runs it. `report` is the text
from the state, nothing else; `write` puts it in <run_dir>/report.txt."""
from __future__ import annotations

import shlex
import statistics
from pathlib import Path

from boardlab.bisect import Bisect, Step
from boardlab.bisect import revert as rv
from boardlab.bisect.step import _verdict   # the judge, as the bisect judged its steps
from boardlab.facts.board import load_board
from boardlab.files import atomic_write
from boardlab.judge.verdict import Verdict
from boardlab.measure import catalogue

REPORT = "report.txt"


def first_bad_step(b: Bisect) -> Step | None:
    """The measured step git named (a step, or the bad revision itself)."""
    return next((s for s in reversed(b.steps) if b.first_bad and s.rev == b.first_bad["rev"]), None)


def lead_samples(samples, b: Bisect, metric: str | None = None) -> list:
    """A step's samples of one metric (default the bisect's first: a step keeps {metric:
    samples} since a bisect judges several)."""
    return samples.get(metric or b.metrics[0], []) if isinstance(samples, dict) else list(samples or [])


def _figures(samples: list, unit: str) -> tuple[str, str]:
    if not samples:
        return "-", "-"
    return f"{statistics.median(samples):g} {unit}", " ".join(f"{x:g}" for x in samples)


def _change(b: Bisect, bad: Step | None, change: Verdict | None) -> list[str]:
    if change is None or change.delta_pct is None:
        why = bad.why if bad else "not among the measured steps"
        return [f"change:  not measured at the first bad commit ({why})"]
    ci = f" (95 % interval {change.ci_pct[0]:+.2f}..{change.ci_pct[1]:+.2f} %)" if change.ci_pct else ""
    each = "a boot" if b.needs_boot else "a build"
    return [f"change:  {change.delta_pct:+.2f} %{ci}: {change.outcome}, {change.why}",
            f"samples: {change.n[0]} of the good revision, {change.n[1]} of the first bad, {each} each"]


def _revert(b: Bisect, revert: dict, metrics: list) -> list[str]:
    lines = [f"revert:  {revert['state']}" + (f": {revert['why']}" if revert["why"] else "")]
    s = revert.get("step")
    if s:
        for metric in metrics:
            median, samples = _figures(lead_samples(s["samples"], b, metric), catalogue.spec(metric).unit)
            lines.append(f"         {s['rev'][:12]} ({s['subject']!r} on {b.bad[:12]}): "
                         + (f"{metric} " if len(metrics) > 1 else "") + f"median {median}, samples {samples}")
    return lines


def _others(b: Bisect, others: list | None) -> list[str]:
    head = "other boards and configs over the same range (the history's builds):"
    if others is None:
        return [head, "  not looked up (a bisect run by hand; `boardlab history watch` adds them)"]
    if not others:
        return [head, "  none were measured"]
    return [head] + [f"  {o['environment']} {o['metric']}: {o['before']:g} -> {o['after']:g} "
                     f"({o['change_pct']:+.2f} %): {o['status']}" for o in others]


def reproduce(b: Bisect) -> str:
    """The command that re-runs this bisect as it ran."""
    args = ["boardlab", "bisect", "--tree", b.tree, "--good", b.good, "--bad", b.bad, "--metric",
            b.metric, "--board", b.board, "--env", b.env, "--config", b.config]
    args += ["--root", b.root] if b.root else []
    args += ["--repeats", str(b.repeats), "--max-repeats", str(b.max_repeats),
             "--failed-boot", b.failed_boot]
    return shlex.join(args)


def kernel_image(step: Step) -> Path | None:
    """The uImage a measured step booted, kept in its directory (step.measure_revision)."""
    path = Path(step.dir) / f"bisect-{step.rev[:12]}.uImage" if step.dir else None
    return path if path and path.is_file() else None


def compare_line(b: Bisect) -> str | None:
    """The command that measures the good revision's kernel against the first bad one's
    again, boots in turn (`boardlab compare`), from the images the bisect kept; None: a
    build figure (the build is the measurement) or an image not kept."""
    good = next((s for s in b.steps if s.role == "good"), None)
    bad = first_bad_step(b)
    images = [kernel_image(s) for s in (good, bad) if s]
    if not b.needs_boot or len(images) != 2 or None in images:
        return None
    env = ["--board", b.board] if Path(b.env).name == f"{b.board}.yaml" else ["--env", b.env]
    return shlex.join(["boardlab", "compare", *env, "--kernel", str(images[0]), "--kernel", str(images[1]),
                       "--families", ",".join(b.families), "--root", b.root or load_board(b.board).root.default])


def regzbot_line(b: Bisect) -> str:
    """What a maintainer sends to have regzbot track the regression (its `introduced`)."""
    return f"#regzbot introduced: {b.first_bad['rev'][:12]}"


def _what(metric: str, change: Verdict | None) -> str:
    if change is None or change.delta_pct is None:
        return f"{metric}: a failed boot"
    return f"a {change.delta_pct:+.2f} % {'regression' if change.outcome == 'regressed' else change.outcome} of {metric}"


def _section(b: Bisect, metric: str, change: Verdict | None, others: list | None, seen: str) -> list[str]:
    """One metric's part of the report: its change, its own figures each side, its seen
    line and its other boards."""
    bad, spec = first_bad_step(b), catalogue.spec(metric)
    good = next(s for s in b.steps if s.role == "good")
    good_median, good_samples = _figures(lead_samples(good.samples, b, metric), spec.unit)
    bad_median, bad_samples = _figures(lead_samples(bad.samples, b, metric) if bad else [], spec.unit)
    return [f"metric:  {metric} ({spec.unit}, {spec.direction} is better)", *([f"seen:    {seen}"] if seen else []),
            *_change(b, bad, change), "",
            f"{'':9}{'good ' + good.rev[:12]:<28}first bad {b.first_bad['rev'][:12]}",
            f"{'median':9}{good_median:<28}{bad_median}",
            f"{'samples':9}{good_samples:<28}{bad_samples}", "", *_others(b, others), ""]


def report(b: Bisect, change: Verdict | None, revert: dict, others: list | None, seen: str = "") -> str:
    """The report of the bisect's first metric. change: the judge's verdict on the first
    bad commit's samples against the good revision's (None: it has none, e.g. a failed boot
    counted bad); revert: bisect.revert's answer; others: `alongside`'s rows (None: not
    looked up); seen: the history's change point that started the bisect, if one did."""
    return report_of(b, revert, [(b.metrics[0], change, others, seen)])


def report_of(b: Bisect, revert: dict, sections: list) -> str:
    """One report for the culprit, a section per metric it moved: [(metric, change,
    others, seen)], each with its own figures."""
    what = "; ".join(_what(m, change) for m, change, _, _ in sections)
    steps = sum(1 for s in b.steps if s.role == "step")
    lines = [f"boardlab bisect: {what} on {b.board}", "",
             f"commit:  {b.first_bad['rev']}", f"         {b.first_bad['subject']!r}",
             f"range:   {b.good[:12]}..{b.bad[:12]} (good..bad) in {b.tree}, {steps} steps",
             f"board:   {b.board}, kernel config {b.config}" + (f", root {b.root}" if b.root else ""), ""]
    for metric, change, others, seen in sections:
        lines += _section(b, metric, change, others, seen)
    again = compare_line(b)
    lines += [*_revert(b, revert, [m for m, _, _, _ in sections]), "", "reproduce:",
              *([f"  {again}", "  (the two kernels again, boots in turn; the whole bisect:)"] if again else []),
              f"  {reproduce(b)}", "",
              f"details: {b.run_dir} (bisect.json: every step; bisect.log: git's; {rv.REVERT})", "",
              regzbot_line(b)]
    return "\n".join(lines) + "\n"


def alongside(c, series: dict, points: list) -> list[dict]:
    """The change point's metric on the other environments (boards, configs, clocks) the
    history measured at both of its builds: each one's means there, and whether a change
    point begins there too (history.changes: series and change points)."""
    rows = []
    for (metric, env), builds in sorted(series.items()):
        at = dict(builds)
        if metric != c.metric or env == c.environment or c.before not in at or c.build not in at:
            continue
        before, after = (sum(at[x]) / len(at[x]) for x in (c.before, c.build))
        found = next((p for p in points if (p.metric, p.environment, p.build) == (metric, env, c.build)), None)
        status = ("no change point" if found is None else
                  f"{'regressed' if found.worse() else 'improved'} (a change point, {found.change_pct:+.2f} %)")
        rows.append({"environment": env, "metric": metric, "before": before, "after": after,
                     "change_pct": 100.0 * (after - before) / before if before else 0.0, "status": status})
    return rows


def write(run_dir, others: list | None = None, seen: str = "", sections: dict | None = None) -> Path:
    """<run_dir>/report.txt from the bisect's state and its revert.json: one report, a
    section per metric (sections: {metric: {"others": rows, "seen": line}}, the change
    points' that started it; default: every metric the bisect judged, with others and seen)."""
    b = Bisect.load(run_dir)
    bad = first_bad_step(b)
    wanted = sections or {m: {"others": others, "seen": seen} for m in b.metrics}
    parts = []
    for metric in (m for m in b.metrics if m in wanted):
        got = lead_samples(bad.samples, b, metric) if bad else []
        change = _verdict(b, metric, lead_samples(b.good_samples(), b, metric), got) if got else None
        parts.append((metric, change, wanted[metric].get("others"), wanted[metric].get("seen", "")))
    path = Path(run_dir) / REPORT
    atomic_write(path, report_of(b, rv.load(run_dir), parts))
    return path
