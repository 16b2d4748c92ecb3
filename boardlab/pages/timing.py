"""Where a run's time went: its steps (set-up, lab up, a board's images, each suite,
the report), on the host clock of the machine that ran it. The main job appends each
step to <run>/steps.tsv as it ends; the suites' share comes from pytest's junit.xml
(each test's setup, call and teardown, summed per suite file)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from boardlab.errors import InputError
from boardlab.measure import clocks

STEPS = "steps.tsv"


def add_step(run_dir: Path, name: str, seconds: float):
    with open(Path(run_dir) / STEPS, "a", encoding="utf-8") as f:
        f.write(f"{name}\t{seconds:.1f}\n")


def read_steps(run_dir: Path) -> list[tuple[str, float]]:
    path = Path(run_dir) / STEPS
    try:
        rows = [ln.split("\t") for ln in path.read_text().splitlines() if ln.strip()]
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (the main job writes it)") from None
    try:
        return [(name, float(s)) for name, s in rows]
    except ValueError:
        raise InputError(f"{path}: each line must be 'step<TAB>seconds'") from None


def suite_seconds(junit: Path) -> dict:
    """{suite file stem: seconds} from a pytest junit.xml, in the order the suites ran."""
    out = {}
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return out
    for case in root.iter("testcase"):
        suite = case.get("classname", "").rsplit(".", 1)[-1]
        out[suite] = round(out.get(suite, 0.0) + float(case.get("time") or 0.0), 3)   # no 47.808000000001
    return out


def _built_alongside(run_dir: Path) -> float | None:
    """The kernel build's own seconds when it ran beside the board's suites (--build-alongside)."""
    try:
        return json.loads((Path(run_dir) / "results.json").read_text())["meta"].get("build_alongside_s")
    except (OSError, ValueError, KeyError):
        return None


def table(run_dir: Path, host: str | None = None) -> str:
    """The steps as a markdown table, the suites inside the 'suites' step, and the total."""
    host = host or clocks.this_host()["id"]
    rows, total = [], 0.0
    beside = _built_alongside(run_dir)
    for name, s in read_steps(run_dir):
        total += s
        rows.append(f"| {name} | {s:.1f} |")
        if name == "suites":
            rows += [f"| - {suite} | {t:.1f} |" if not (beside and suite == "test_build") else
                     f"| - {suite}: the build ran beside the suites above ({beside:.1f} s from the "
                     f"session's start); waited for it, then its boot | {t:.1f} |"
                     for suite, t in suite_seconds(Path(run_dir) / "junit.xml").items()]
    return "\n".join([f"Where the time went (host clock, s, on {host}):", "",
                      "| step | s |", "|---|---:|", *rows, f"| total | {total:.1f} |"]) + "\n"
