"""The culprit confirmed by revert: reverted on the bad revision (a throwaway commit on a
detached HEAD in the bisect's own tree, so the build is the bisect's incremental one),
built and measured by the bisect's own step and judged against the good revision's
samples. Back within the floor (or better) confirms the culprit; still regressed or
undecided does not; a revert that does not apply is said. The answer is kept in
<run_dir>/revert.json for the report (bisect.robot)."""
from __future__ import annotations

import json
import subprocess
from dataclasses import asdict
from pathlib import Path

from boardlab.bisect import Bisect, Step, git
from boardlab.bisect import step as bisect_step
from boardlab.errors import BoardlabError
from boardlab.files import atomic_write
from boardlab.judge import verdict as vd
from boardlab.log import progress

REVERT = "revert.json"
CONFIRMED, NOT_CONFIRMED, NO_APPLY, NOT_TRIED = ("confirmed by revert", "not confirmed",
                                                 "revert does not apply", "revert not tried")


def _answer(state: str, why: str = "", step: Step | None = None) -> dict:
    return {"state": state, "why": why, "step": asdict(step) if step else None}


def _revert_commit(tree: Path, culprit: str) -> tuple[str | None, str]:
    """(the revert's commit on HEAD, "") or (None, why it does not apply), the tree clean."""
    r = subprocess.run(["git", "-C", str(tree), "-c", "user.name=boardlab", "-c",
                        "user.email=boardlab@localhost", "revert", "--no-edit", culprit],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return git(tree, "rev-parse", "HEAD"), ""
    said = [ln.strip() for ln in (r.stdout + r.stderr).splitlines()
            if ln.startswith(("CONFLICT", "error:", "fatal:"))]
    git(tree, "revert", "--abort", check=False)     # a conflict leaves the tree mid-revert
    git(tree, "reset", "-q", "--hard", check=False)
    return None, "; ".join(said) or (r.stderr or r.stdout).strip().splitlines()[0]


def confirm(b: Bisect, measure=None) -> dict:
    """Revert b.first_bad on b.bad, measure the result (measure: step.measure_revision's
    signature, the build and boots), judge it against the good revision; the answer kept
    in revert.json and returned. The tree is left where it stood."""
    measure = measure or bisect_step.measure_revision
    tree, culprit = Path(b.tree), b.first_bad["rev"]
    origin = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False) or git(tree, "rev-parse", "HEAD")
    try:
        git(tree, "checkout", "-q", "--detach", b.bad)
        rev, why = _revert_commit(tree, culprit)
        if rev is None:
            answer = _answer(NO_APPLY, f"{culprit[:12]} reverted on {b.bad[:12]}: {why}")
        else:
            answer = _measured(b, Step(rev, git(tree, "log", "-1", "--format=%s", rev), "revert",
                                       dir=str(Path(b.run_dir) / f"revert-{rev[:12]}")), measure)
    except BoardlabError as e:   # git itself: said, the culprit stands unconfirmed
        answer = _answer(NOT_TRIED, str(e).splitlines()[0])
    finally:
        git(tree, "checkout", "-q", origin, check=False)
    atomic_write(Path(b.run_dir) / REVERT, json.dumps(answer, indent=1) + "\n")
    progress(f"revert of {culprit[:12]} on {b.bad[:12]}: {answer['state']}"
             + (f": {answer['why']}" if answer["why"] else ""))
    return answer


def _measured(b: Bisect, step: Step, measure) -> dict:
    """The reverted kernel built, measured and judged like a bisect step."""
    Path(step.dir).mkdir(parents=True, exist_ok=True)
    progress(f"revert {step.rev[:12]} {step.subject!r}: building")
    try:
        measure(b, step, b.good_samples())
    except BoardlabError as e:   # build, boot, lab: no figure, so no confirmation
        return _answer(NOT_CONFIRMED, f"the reverted kernel was not measured: {type(e).__name__}: "
                                      f"{str(e).splitlines()[0]}", step)
    bisect_step.judge(b, step)
    if step.verdict in (vd.SAME, vd.IMPROVED):
        return _answer(CONFIRMED, f"{step.verdict} against the good revision: {step.why}", step)
    return _answer(NOT_CONFIRMED, f"{step.verdict} against the good revision: {step.why}", step)


def not_tried(b: Bisect, why: str) -> dict:
    answer = _answer(NOT_TRIED, why)
    atomic_write(Path(b.run_dir) / REVERT, json.dumps(answer, indent=1) + "\n")
    return answer


def load(run_dir) -> dict:
    path = Path(run_dir) / REVERT
    return json.loads(path.read_text()) if path.exists() else _answer(NOT_TRIED, f"no {REVERT}")
