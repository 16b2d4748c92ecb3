"""Every run lands in the history: a run directory's results (a pytest run of the suites,
`boardlab compare`, a bisect step, a LAVA job collected by `boardlab lava results`)
become SQUAD test runs through its submit API, one per board, kernel and clock:

- build: the kernel (its name here; "The study redone on real kernels" gives it its
  identity), environment: `<board>.<clock>`, and for a host-bound clock also the host;
- metrics `<suite>/<name>` with all their samples (SQUAD keeps the list, shows the mean);
- tests `<suite>/<name>`: pass, fail where the verdict is 'regressed', skip where there
  was nothing to judge by (no baseline, another host's, unknown); beside them what
  happened to the kernel (judge.outcomes: kernel/checkout, kernel/build, kernel/boot,
  lava/job, the suites' junit.xml as pytest/<file>.<test>), pass, fail or skip;
- metadata: host, clock, the project's commit, the run directory, the job id; each
  metric's verdict with its interval and sample counts (`verdicts`), what happened as it
  was said, with why (`outcomes`: a lab fault is an error there, which SQUAD's tests can
  only call skipped), and for a nightly build the kernel tree's commit, branch, repository
  and name (`tree`); the board's console logs of that kernel attached.

The job id is a digest of the run and the group, so submitting a run twice adds nothing
(SQUAD refuses a job id it has in that build). Each submission is queued on disk first
(<data>/queue/) and leaves the queue only when SQUAD took it (or had it): with the server
down, the runs wait there and go in with the next `boardlab history submit`."""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from boardlab.errors import BoardlabError
from boardlab.facts.board import PROJECT_ROOT, load_board
from boardlab.files import atomic_write
from boardlab.history.server import GROUP, HistoryServer
from boardlab.judge import outcomes as outcomes_of
from boardlab.judge import verdict as vd
from boardlab.judge.results import load_run
from boardlab.measure import clocks, kernelid

HOST_BOUND_CLOCKS = (clocks.HOST, clocks.GUEST_REALTIME)


@dataclass
class Submission:
    build: str
    environment: str
    job_id: str
    tests: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    attachments: list = field(default_factory=list)    # paths of files to attach


def _commit() -> str:
    r = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def _test_result(m: dict) -> str:
    if m.get("verdict") in (vd.REGRESSED, vd.MISSING):
        return "fail"
    return "pass" if m.get("verdict") in (vd.SAME, vd.IMPROVED) else "skip"


# SQUAD's tests are pass, fail or skip: a lab fault lands as skip (metadata outcomes: error)
SQUAD_RESULT = {outcomes_of.PASS: "pass", outcomes_of.FAIL: "fail", outcomes_of.SKIP: "skip",
                outcomes_of.ERROR: "skip"}


def judged(m: dict) -> dict:
    """A metric's verdict beside its figure: the outcome, the 95 % interval of the
    difference from the baseline (ci_pct, in %; None where not compared), the samples each
    side (n), why."""
    c = m.get("comparison") or {}
    n = c.get("n") or [len((m.get("baseline") or {}).get("samples") or []) or None,
                       len(m.get("samples") or [])]
    return {"verdict": m.get("verdict"), "ci_pct": c.get("ci_pct"), "delta_pct": c.get("delta_pct"),
            "n": {"baseline": n[0], "run": n[1]}, "why": c.get("why", "")}


def tree_of(meta: dict, kernel: str) -> dict:
    """The kernel tree a nightly build came from: {commit, branch, url, name}, {} for
    another kernel. Its name is the one the lab was told (`nightly --tree-name`, KernelCI's
    mainline, stable, next...), none where it was not: a directory's name is no tree's."""
    night = meta.get("nightly") or {}
    if not night.get("rev") or kernel != night["rev"][:12]:
        return {}
    url = re.sub(r"^(\w+://)[^/@]*@", r"\1", night.get("url") or "")   # never a password
    name = night.get("tree_name") or ""
    return {k: v for k, v in (("commit", night["rev"]), ("branch", night.get("branch", "")),
                              ("url", url), ("name", name)) if v}


def submissions(run_dir: Path) -> list[Submission]:
    """The run's submissions, one per (board, kernel, clock): pure, from results.json."""
    run_dir = Path(run_dir).resolve()
    doc = load_run(run_dir)
    meta, groups = doc["meta"], {}
    for m in doc["metrics"]:
        groups.setdefault((m["board"], m["kernel"], m.get("clock") or clocks.NO_CLOCK), []).append(m)
    outcomes = outcomes_of.of_run(run_dir, doc)   # {(board, kernel): {test: (result, why)}}
    for board, kernel in outcomes:   # a kernel that did not build or boot: its tests alone
        if not any(g[:2] == (board, kernel) for g in groups):
            groups[(board, kernel, clocks.NO_CLOCK)] = []
    commit = _commit()
    out = []
    for (board, kernel, clock), metrics in sorted(groups.items()):
        host = (metrics[0].get("host") if metrics else None) or meta.get("host") or ""
        ident = meta.get("kernels", {}).get(f"{board}/{kernel}") or {}
        flavour = flavour_of(board, kernel, ident)
        env = environment(board, flavour, clock, host if clock in HOST_BOUND_CLOCKS else "")
        # the run as it was made, not where it lies now: a copied run is the same run
        key = "\n".join((meta.get("run_id", ""), meta.get("started", ""), meta.get("host", ""),
                         board, kernel, clock))
        job_id = "run-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        logs = sorted((run_dir / "console").glob(f"boot-{board}-{kernel}-*.log"))
        said = outcomes.pop((board, kernel), {})
        out.append(Submission(
            build=revision_or(kernel) or kernelid.build_name(kernel, ident), environment=env, job_id=job_id,
            tests={**{t: SQUAD_RESULT[r] for t, (r, _) in said.items()},
                   **{f"{m['suite']}/{m['name']}": _test_result(m) for m in metrics}},
            metrics={f"{m['suite']}/{m['name']}": {"value": m["samples"] or [m["value"]],
                                                   "unit": m["unit"]} for m in metrics
                     if m["value"] is not None},   # a missing metric is a failed test, no figure
            metadata={"job_id": job_id, "board": board, "kernel": kernel, "clock": clock,
                      "flavour": flavour, **{f"kernel_{k}": v for k, v in ident.items()},
                      "host": host, "run_dir": str(run_dir), "run_started": meta.get("started", ""),
                      "boardlab_commit": commit,
                      "verdicts": {f"{m['suite']}/{m['name']}": judged(m) for m in metrics},
                      "outcomes": {t: {"result": r, **({"why": why} if why else {})}
                                   for t, (r, why) in said.items()},
                      "tree": tree_of(meta, kernel),
                      # a sweep's kernels are a series by their release dates, not by when measured
                      "datetime": _iso(meta.get("kernel_date") or meta.get("started", "")),
                      "harness": meta.get("source") or "pytest",
                      # measured on a board drifting from its own level (judge.boardhealth): the lab's
                      **({"board_drifting": d} if (d := (meta.get("board_drifting") or {}).get(board)) else {})},
            attachments=[str(p) for p in logs]))
    return out



REVISION = re.compile(r"^(?:bisect-)?[0-9a-f]{7,40}$")
BISECT_STEP = re.compile(r"^bisect-[0-9a-f]{7,40}$")
BISECT_FLAVOUR = "bisect"   # a bisect's steps: a series of their own, never the nightly one
CLOCKS = (clocks.GUEST_DETERMINISTIC, clocks.GUEST_REALTIME, clocks.HOST, clocks.NO_CLOCK)


def revision_or(kernel: str) -> str | None:
    """A kernel named by its git revision (a nightly build, a bisect step) keeps that name."""
    return kernel if REVISION.match(kernel) else None


def flavour_of(board: str, kernel: str, ident: dict) -> str:
    """The series a kernel belongs to: what its maker said (a version built from a
    fragment), else the kernel's name when it is one of the board's; '' otherwise (the
    revisions of a tree: one series). A bisect's steps are a series of their own: they are
    measured out of order, and a watch of the tree's series must never see them."""
    if BISECT_STEP.match(kernel):
        return BISECT_FLAVOUR
    if ident.get("flavour"):
        return ident["flavour"]
    try:
        return kernel if kernel in load_board(board).images.kernels else ""
    except BoardlabError:
        return ""


def environment(board: str, flavour: str, clock: str, host: str = "") -> str:
    """SQUAD's environment: <board>[.<flavour>].<clock>[.<host>] -- a series per kernel
    flavour, clock and (for a host-bound clock) host."""
    return ".".join(p for p in (board, flavour, clock, host) if p)


def parse_environment(env: str) -> dict:
    """{board, flavour, clock, host} of an environment's name."""
    parts = env.split(".")
    at = next((i for i, p in enumerate(parts) if p in CLOCKS), len(parts))
    return {"board": parts[0], "flavour": ".".join(parts[1:at]) if at > 1 else "",
            "clock": parts[at] if at < len(parts) else "", "host": ".".join(parts[at + 1:])}


def _iso(started: str) -> str:
    """results.json's '2026-11-25T13:00:49+0000' as SQUAD's datetime field takes it."""
    return started[:-2] + ":" + started[-2:] if len(started) > 5 and started[-5] in "+-" else started


def _multipart(fields: dict, files: list) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     .encode() + value.encode() + b"\r\n")
    for path in files:
        p = Path(path)
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="attachment"; '
                     f'filename="{p.name}"\r\nContent-Type: text/plain\r\n\r\n'.encode()
                     + p.read_bytes() + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def post(server: HistoryServer, s: Submission) -> str:
    """'added' or 'had it' (SQUAD refused the job id as one it has); raises OSError when
    the server cannot be reached or refuses for another reason."""
    body, ctype = _multipart({"tests": json.dumps(s.tests), "metrics": json.dumps(s.metrics),
                              "metadata": json.dumps(s.metadata)},
                             [a for a in s.attachments if Path(a).exists()])
    url = f"{server.url}/api/submit/{GROUP}/{server.project}/{s.build}/{s.environment}"
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": ctype, "Auth-Token": server.token()})
    try:
        urllib.request.urlopen(req, timeout=60).read()
        return "added"
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        if e.code == 400 and "already a test run with job_id" in text:
            return "had it"
        raise OSError(f"{url}: HTTP {e.code}: {text.strip()[:300]}") from None


def queue_dir(server: HistoryServer) -> Path:
    return server.data / "queue"


def enqueue(server: HistoryServer, run_dir: Path) -> list[Path]:
    """The run's submissions written to the queue (a run queued twice: the same files)."""
    return queue(server, submissions(run_dir))   # read and checked before the queue is made


def queue(server: HistoryServer, subs: list[Submission]) -> list[Path]:
    """Submissions written to the queue."""
    q = queue_dir(server)
    q.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in subs:
        path = q / f"{s.job_id}.json"
        atomic_write(path, json.dumps(asdict(s), indent=1) + "\n")
        paths.append(path)
    return paths


def flush(server: HistoryServer, progress=print) -> tuple[int, int, int]:
    """Each queued submission posted, oldest first: (added, had already, left queued)."""
    added = had = left = 0
    for path in sorted(queue_dir(server).glob("*.json"), key=lambda p: p.stat().st_mtime):
        s = Submission(**json.loads(path.read_text()))
        try:
            outcome = post(server, s)
        except OSError as e:
            left += 1
            progress(f"  {s.build} {s.environment}: left queued ({e})")
            continue
        path.unlink()
        added += outcome == "added"
        had += outcome == "had it"
        progress(f"  {s.build} {s.environment}: {outcome} ({s.job_id})")
    return added, had, left


def land(run_dir: Path, lab: str = "vlab", progress=print) -> str | None:
    """A finished run into the lab's history, if the lab has one (`boardlab history up`
    was run once: its submit token exists): queued, then sent when SQUAD is up. One
    line said; None when the lab keeps no history."""
    server = HistoryServer(lab)
    if not server.keeps_history() or not (Path(run_dir) / "results.json").exists():
        return None
    enqueue(server, Path(run_dir))
    if not server.is_up():
        line = f"history {lab}: run queued ({queue_dir(server)}): SQUAD is down; boardlab history up"
    else:
        added, had, left = flush(server, progress=lambda *_: None)
        line = (f"history {lab}: {added} test runs added, {had} there already"
                + (f", {left} left queued" if left else "") + f": {server.url}/{GROUP}/{lab}/")
    progress(line)
    return line


def land_compare(compare_json: Path, progress=print) -> str | None:
    """A `boardlab compare` run (its booted kernels' results.json beside compare.json)
    into its board's lab's history."""
    board = json.loads(Path(compare_json).read_text())["meta"].get("board")
    if not board:
        return None
    return land(Path(compare_json).parent, load_board(board).lab_host, progress)
