#!/usr/bin/env python3
"""A/A of the main job's suites: the unchanged kernel, run after run, each judged against
the stored baseline exactly as the main job judges it. By default the jitter suite; with
--tests and --family another (loopback TCP: --tests test_lmbench.py::test_latencies
test_lmbench.py::test_bandwidth --family lmbench --metrics bw_tcp_mb_s,lat_connect_us).

Each round is one pytest session of the tests in the main job's mode (quick: lmbench's
short timing; the jitter suite's 60 s cyclictest runs; sampled until decided, at most
--max-repeats, one boot a session), on the default board and kernel. The bench tallies each metric's
verdict over the rounds. Goal (issue "Answers a kernel maintainer can act on"): `same`
in at least 19 of 20 rounds on the unchanged kernel.

    .venv/bin/python bench/main_job_aa.py [--rounds 20] [--board qemu-arm] [--kernel armmp]
    .venv/bin/python bench/main_job_aa.py --windows DIR    # the max's run length, from saved rounds

Then, from every run's maximum the rounds took, what a longer run would do for the
maximum: runs of k x that length drawn as the worst of k runs (with replacement from the
pool: an estimate), 10 a side for the baseline and 5 for a run, judged A/A 200 times.

Figures: verdicts of guest-deterministic figures; run times on the host clock of
this machine (its id is printed)."""
import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.facts.board import env_path  # noqa: E402
from boardlab.measure.clocks import this_host  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402


def one_round(board: str, kernel: str, run_dir: Path, extra: list[str], tests: list[str],
              family: set[str], metrics: set[str]) -> tuple[dict, float, int]:
    """({family.metric: (verdict, samples)}, host seconds, pytest's exit status) of one session."""
    t0 = time.monotonic()
    r = subprocess.run([str(ROOT / ".venv/bin/pytest"), "-q", "-p", "no:cacheprovider",
                        "--lg-env", str(env_path(board)), "--kernel", kernel, "--quick",
                        "--run-dir", str(run_dir), *(str(ROOT / "testsuites" / t) for t in tests), *extra],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - t0
    verdicts = verdicts_of(run_dir, family, metrics)
    if not verdicts:
        print(r.stdout[-2000:])
    return verdicts, seconds, r.returncode


def verdicts_of(run_dir: Path, family: set[str], metrics: set[str]) -> dict:
    """{family.metric: (verdict, samples, why)} of a round's results.json ({}: none)."""
    try:
        got = json.loads((run_dir / "results.json").read_text())["metrics"]
    except (OSError, ValueError, KeyError):
        return {}
    return {f'{m["suite"]}.{m["name"]}': (m["verdict"], len(m.get("samples") or [m["value"]]),
                                          m.get("comparison", {}).get("why", ""))
            for m in got if m["suite"] in family and (not metrics or m["name"] in metrics)}


def windows(out: Path, trials: int = 200) -> None:
    """The A/A `same` rate of jitter.max_us for runs of k x the rounds' run length, from their maxima."""
    import random
    from boardlab.judge import verdict as vd
    from boardlab.judge.decide import Figures, decide
    from boardlab.measure.clocks import GUEST_DETERMINISTIC
    maxima = [m for d in sorted(out.glob("round-*")) if (d / "results.json").exists()
              for m in json.loads((d / "results.json").read_text())["metrics"]
              if m["suite"] == "jitter" and m["name"] == "max_us"]
    pool = [s for m in maxima for s in m["samples"]]
    run_s = {(m.get("settings") or {}).get("run_s") for m in maxima}
    run_s = run_s.pop() if len(run_s) == 1 and None not in run_s else None
    if len(pool) < 10:
        print(f"windows: {len(pool)} maxima under {out}: too few")
        return
    rng = random.Random(1)
    if run_s is None:
        print("windows: the rounds' runs are of several lengths or do not say theirs")
        return
    print(f"\njitter.max_us from {len(pool)} maxima of {run_s} s runs ({min(pool):g}-{max(pool):g} us, "
          f"guest-deterministic), A/A with 10 runs a side for the baseline, 5 for the run:")
    print("| run length | same | unknown | a change (false alarm) | not compared |\n|---|---:|---:|---:|---:|")
    for k in (1, 3, 6, 12):
        out_ = collections.Counter()
        for _ in range(trials):
            a, b = ([max(rng.choices(pool, k=k)) for _ in range(n)] for n in (10, 5))
            out_[decide("jitter.max_us", Figures(a, GUEST_DETERMINISTIC), Figures(b, GUEST_DETERMINISTIC),
                         interleaved=True, effort=0.2).outcome] += 1
        print(f"| {run_s * k} s | {out_['same']} of {trials} | {out_['unknown']} | "
              f"{out_['regressed'] + out_['improved']} | {trials - sum(out_[o] for o in vd.OUTCOMES)} |")
    print("(drawn with replacement from the pool, so a long run's maximum never exceeds the pool's: an "
          "optimistic estimate for the longer runs)")


def rounds_with(rounds_of: dict, family: str, verdicts: tuple) -> int:
    """In how many rounds some metric of the family had one of the verdicts."""
    hit = {i for name, by in rounds_of.items() if name.startswith(f"{family}.")
           for i, v in by.items() if v in verdicts}
    return len(hit)


class Tally:
    """The rounds' verdicts per metric and per family."""

    def __init__(self):
        self.counts = collections.defaultdict(collections.Counter)
        self.samples = collections.defaultdict(list)
        self.whys = collections.defaultdict(list)
        self.rounds_of: dict = {}
        self.rounds = 0

    def add(self, verdicts: dict) -> None:
        for name, (verdict, n, why) in verdicts.items():
            self.rounds_of.setdefault(name, {})[self.rounds] = verdict
            self.counts[name][verdict] += 1
            self.samples[name].append(n)
            if verdict not in ("same", "info"):
                self.whys[name].append(why)
        self.rounds += 1

    def print(self, families: list[str]) -> None:
        print("| metric | same | unknown | regressed | improved | info | runs a round (mean) |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name in sorted(self.counts):
            c = self.counts[name]
            print(f"| {name} | {c['same']} | {c['unknown']} | {c['regressed']} | {c['improved']} | "
                  f"{c['info']} | {sum(self.samples[name]) / len(self.samples[name]):.1f} |")
        for name, w in sorted(self.whys.items()):
            print(f"\n{name}, first reason not `same`: {w[0]}")
        print("\n| family | rounds | rounds with a false verdict (regressed or improved) | with an unknown |")
        print("|---|---:|---:|---:|")
        for fam in families:
            print(f"| {fam} | {self.rounds} | {rounds_with(self.rounds_of, fam, ('regressed', 'improved'))} | "
                  f"{rounds_with(self.rounds_of, fam, ('unknown',))} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20, help="rounds with results (a round that gave none, "
                    "a session that failed, is run again, at most --rounds times more)")
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--kernel", default="armmp")
    ap.add_argument("--tests", nargs="+", default=["test_jitter.py"], help="under testsuites/ (pytest node ids)")
    ap.add_argument("--family", default="jitter", help="comma separated: several families of one session "
                    "(--tests in the suites' order: what ran before a figure is part of its baseline)")
    ap.add_argument("--metrics", default="", help="comma separated names within the family (default: all)")
    ap.add_argument("--windows", type=Path, help="only the run-length estimate, from this bench's saved rounds")
    ap.add_argument("--tally", type=Path, nargs="+", help="only the tables, of the rounds saved under these "
                    "directories (this bench's run directories), the first --rounds with results")
    ap.add_argument("pytest_args", nargs="*", help="more pytest options (after --)")
    args = ap.parse_args()
    families = args.family.split(",")
    wanted = (set(families), set(filter(None, args.metrics.split(","))))
    if args.windows:
        windows(args.windows)
        return 0
    tally = Tally()
    if args.tally:
        rounds = sorted(d for top in args.tally for d in top.glob("round-*"))
        for d in rounds:
            verdicts = verdicts_of(d, *wanted)
            if verdicts and tally.rounds < args.rounds:
                tally.add(verdicts)
        print(f"{tally.rounds} rounds with results of {len(rounds)} saved under "
              f"{', '.join(map(str, args.tally))}\n")
        tally.print(families)
        return 0 if tally.rounds == args.rounds else 1
    out = Path(tempfile.mkdtemp(prefix="main-job-aa-", dir="/var/tmp"))
    failed, took = 0, []
    print(f"host {this_host()['id']}; {args.rounds} rounds of the main job's {' '.join(args.tests)} "
          f"({args.board}, {args.kernel}, quick); run directories under {out}", flush=True)
    with kept_up("vlab", boards=[args.board]):
        while tally.rounds < args.rounds and failed < args.rounds:
            i = tally.rounds + failed
            verdicts, seconds, status = one_round(args.board, args.kernel, out / f"round-{i + 1:02d}",
                                                  args.pytest_args, args.tests, *wanted)
            took.append(seconds)
            if verdicts:
                tally.add(verdicts)
            else:
                failed += 1
            words = ", ".join(f"{k} {v[0]} ({v[1]})" for k, v in sorted(verdicts.items()))
            print(f"round {i + 1}: {seconds:.0f} s, exit {status}: {words or 'no results (run again)'}", flush=True)
    print(f"\n{tally.rounds} rounds with results, {failed} without (each run again); host seconds a "
          f"session {min(took):.0f}-{max(took):.0f} (median {sorted(took)[len(took) // 2]:.0f})\n")
    tally.print(families)
    if args.family == "jitter":
        windows(out)
    return 0 if tally.rounds == args.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
