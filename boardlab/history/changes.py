"""Change points in the lab's history: each metric's series over the builds, per
environment (board, kernel flavour and clock), as SQUAD holds them, searched by Apache Otava (E-divisive
means with a t-test, the Hunter variant) in the history's own venv. A change point is
where a new level begins: the build, the builds before and after, its magnitude with a
95 % interval, its p-value. The smallest step looked for depends on the clock: on the
deterministic clock and for sizes (no clock) a 0.5 % step must be seen, so steps from
0.25 % count; on a host-bound clock, from 2.5 %; and never a step under the metric's floor. The builds where change points begin
are annotated in SQUAD (its charts show it) with a pointer to the history page, where each
is whole (history.notes)."""
from __future__ import annotations

import json
import math
import urllib.request
from dataclasses import dataclass

from boardlab.facts.board import PROJECT_ROOT
from boardlab.history.notes import POINTER
from boardlab.history.server import GROUP, VENV, HistoryError, HistoryServer, squad_python
from boardlab.measure import catalogue

WORKER = PROJECT_ROOT / "history" / "otava_worker.py"   # run by SQUAD's venv
MAX_PVALUE = 0.001
# Otava compares each candidate with this many points either side. Its default (50) is for
# long series: a nightly regression reverted after two to four nights (a bump: up, then
# down) was not found at all with it, and is found with 6 (both edges); a plain step is
# found either way (measured on the bench's own series, 2026-11-26)
WINDOW = 6
MIN_STEP = {"deterministic": 0.0025, "host-bound": 0.025}


def min_step(environment: str, metric: str | None = None, level: float | None = None) -> float:
    """The smallest relative step that counts: by the clock in the environment's name, and
    never under the metric's floor at its level (a change point under it starts a bisect
    that can only end 'did not regress': free_used's 64 kB is 1.6 % of 4 MB, not 0.25 %)."""
    from boardlab.history.submit import parse_environment
    clock = parse_environment(environment)["clock"]
    step = MIN_STEP["deterministic" if clock in ("guest-deterministic", "none") else "host-bound"]
    spec = catalogue.METRICS.get((metric or "").replace("/", "."))
    if spec is not None and level:
        step = max(step, spec.floor(level) / abs(level))
    return step


@dataclass
class ChangePoint:
    metric: str
    environment: str
    build: str            # the first build of the new level
    before: str           # the last build of the old level
    after: list           # builds of the new level (up to the next change point)
    change_pct: float
    interval_pct: tuple
    pvalue: float

    def worse(self) -> bool | None:
        """A change for the worse, by the metric's direction; None: not a metric of the
        catalogue."""
        try:
            spec = catalogue.spec(self.metric.replace("/", "."))
        except catalogue.UnknownMetric:
            return None
        return self.change_pct > 0 if spec.direction == "lower" else self.change_pct < 0

    def line(self) -> str:
        lo, hi = self.interval_pct
        return (f"{self.metric} on {self.environment}: {self.change_pct:+.2f} % "
                f"(95 % {lo:+.2f}..{hi:+.2f}) from build {self.build} (after {self.before}), "
                f"p={self.pvalue:.2g}")


def _get(server: HistoryServer, path: str) -> dict:
    with urllib.request.urlopen(f"{server.url}{path}", timeout=60) as r:
        return json.loads(r.read())


def api_list(server: HistoryServer, path: str) -> list:
    sep = "&" if "?" in path else "?"
    out, url = [], f"{path}{sep}limit=500"
    while url:
        page = _get(server, url)
        out += page["results"]
        nxt = page.get("next")
        url = nxt[len(server.url):] if nxt else None
    return out


def _project(server: HistoryServer) -> tuple[dict, dict, list]:
    """(the lab's SQUAD project, {environment url: slug}, its builds oldest first)."""
    try:
        project = api_list(server, f"/api/projects/?slug={server.project}&group__slug={GROUP}")[0]
    except (OSError, IndexError):
        raise HistoryError(f"no project {GROUP}/{server.project} at {server.url}: boardlab history up") from None
    envs = {e["url"]: e["slug"] for e in api_list(server, f"/api/environments/?project={project['id']}")}
    builds = sorted(api_list(server, f"/api/projects/{project['id']}/builds/"), key=lambda b: b["datetime"])
    return project, envs, builds


def sample_series(server: HistoryServer, board: str | None = None, metric: str | None = None,
                  since: str | None = None) -> tuple[dict, list]:
    """({(metric, environment): [(build, [every sample])] in build order}, builds)."""
    _, envs, builds = _project(server)
    if since:
        builds = [b for b in builds if b["datetime"] >= since]
    out = {}
    for b in builds:
        per = {}
        for m in api_list(server, f"/api/builds/{b['id']}/metrics/"):
            env = envs.get(m["environment"], "")
            if (board and not env.startswith(board + ".")) or (metric and m["name"] != metric.replace(".", "/")):
                continue
            per.setdefault((m["name"], env), []).extend(m.get("measurement_list") or [float(m["result"])])
        for key, values in per.items():
            out.setdefault(key, []).append((b["version"], values))
    return out, builds


def recent_samples(server: HistoryServer, board: str, not_build: str = "", builds_back: int = 10) -> dict:
    """{metric key (suite.name): [(build, [samples], environment)] newest first}: this
    board's figures in the newest builds_back builds other than not_build (what a night
    is judged against before it lands)."""
    from boardlab.history.submit import parse_environment
    _, envs, builds = _project(server)
    out: dict = {}
    for b in [b for b in reversed(builds) if b["version"] != not_build][:builds_back]:
        per: dict = {}
        for m in api_list(server, f"/api/builds/{b['id']}/metrics/"):
            env = envs.get(m["environment"], "")
            if parse_environment(env)["board"] == board:
                per.setdefault((m["name"].replace("/", "."), env), []).extend(
                    m.get("measurement_list") or [float(m["result"])])
        for (key, env), values in per.items():
            out.setdefault(key, []).append((b["version"], values, env))
    return out


def detect(values: dict, steps: dict) -> dict:
    """{key: [values]} and {key: smallest relative step} -> {key: [Otava's change points]}
    (the one call of the detector: `changes` and bench/history_detection.py)."""
    req = {"series": values, "max_pvalue": MAX_PVALUE, "min_magnitude": steps, "window": WINDOW}
    r = squad_python(WORKER, input=json.dumps(req))
    if r.returncode != 0:
        raise HistoryError(f"Otava in {VENV} failed: {(r.stderr or r.stdout).strip()[-400:]}")
    return json.loads(r.stdout)


def _level(points) -> float:
    """A series' level: the median of its builds' values."""
    values = sorted(v for _, v in points)
    return values[len(values) // 2] if values else 0.0


def find(server: HistoryServer, board=None, metric=None, since=None, samples=None) -> list[ChangePoint]:
    """samples: sample_series' answer when the caller has it already."""
    samples = samples if samples is not None else sample_series(server, board, metric, since)[0]
    found = {k: [(b, sum(v) / len(v)) for b, v in pts] for k, pts in samples.items()}
    keys = {f"{m}@{e}": (m, e) for m, e in found}
    detected = detect({k: [v for _, v in found[keys[k]]] for k in keys},
                      {k: min_step(keys[k][1], keys[k][0], _level(found[keys[k]])) for k in keys})
    out = []
    for k, cps in detected.items():
        metric_name, env = keys[k]
        points = found[keys[k]]
        for i, c in enumerate(cps):
            m1, m2 = c["mean_1"], c["mean_2"]
            se = math.sqrt(c["std_1"] ** 2 / max(c["n_1"], 1) + c["std_2"] ** 2 / max(c["n_2"], 1))
            pct = 100.0 * (m2 - m1) / m1 if m1 else math.inf
            half = 100.0 * 1.96 * se / abs(m1) if m1 else math.inf
            end = cps[i + 1]["index"] if i + 1 < len(cps) else len(points)
            out.append(ChangePoint(metric_name, env, points[c["index"]][0], points[c["index"] - 1][0],
                                   [p[0] for p in points[c["index"]:end]], round(pct, 3),
                                   (round(pct - half, 3), round(pct + half, 3)), c["pvalue"]))
    return sorted(out, key=lambda c: (c.environment, c.metric))


def _send(server: HistoryServer, path: str, method: str, doc: dict) -> None:
    req = urllib.request.Request(f"{server.url}{path}", data=json.dumps(doc).encode(), method=method,
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Token {server.token()}"})
    urllib.request.urlopen(req, timeout=30).read()


def annotate(server: HistoryServer, points: list[ChangePoint]) -> int:
    """The builds where change points begin, annotated with notes.POINTER (SQUAD's charts
    show it); what each change point is and what its bisect found are kept whole in
    notes.json and shown on the history page: SQUAD's one field a build keeps 1024
    characters, and a build's notes cut to it lost the culprit. Returns how many builds
    were annotated; raises HistoryError when SQUAD does not take one."""
    builds = {b["version"]: b for b in api_list(server, f"/api/builds/?project__slug={server.project}")}
    done = 0
    for name in sorted({c.build for c in points} & set(builds)):
        build = builds[name]
        had = api_list(server, f"/api/annotations/?build={build['id']}")
        if had and had[0]["description"] == POINTER:
            continue
        try:
            if had:
                _send(server, f"/api/annotations/{had[0]['id']}/", "PATCH", {"description": POINTER})
            else:
                _send(server, "/api/annotations/", "POST", {"build": build["url"], "description": POINTER})
        except OSError as e:   # said, never swallowed
            raise HistoryError(f"SQUAD at {server.url} did not take the note on build {name}: {e}") from None
        done += 1
    return done


def notes(server: HistoryServer) -> dict:
    """{build: its annotation's lines} (the pointer, where a change point begins)."""
    builds = {b["url"]: b["version"] for b in api_list(server, f"/api/builds/?project__slug={server.project}")}
    return {builds[a["build"]]: (a["description"] or "").splitlines()
            for a in api_list(server, "/api/annotations/") if a["build"] in builds}
