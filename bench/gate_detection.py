#!/usr/bin/env python3
"""The verdict's error rates on the virtual board: false alarms in A/A comparisons of the
unchanged kernel with itself, and detection of injected changes, per metric family.

Boots go the real path (power switch, U-Boot, TFTP, ser2net, the strategy). One pool of
boots of the unchanged board (all families), and one pool per injected change (only the
family it targets), each change a root file system variant made here from the board's
own tree:
  boot     the login prompt 3 % of its time later (an init script sleeps that long)
  memory   1 % less free memory (a file of that size in the ramdisk, taken at boot)
  lmbench  the kernel's read path slower (the sys_enter_read tracepoint enabled at boot:
           lat_pipe about +20 %; a CPU hog does not do it, lmbench keeps its best runs)
  jitter   p99 worse (a loop reading /proc/interrupts and /proc/slabinfo beside the
           suite's load; a dd loop did not move p99, a second copy of the suite's own load
           cannot be stopped by its load_stop)
  hackbench  the group count doubled (a wrapper in hackbench's place runs -g 2N for -g N)
A comparison draws boots one a side at a time without replacement (A/A: two disjoint draws
from the unchanged pool), as the suites and compare sample, until no metric of the family
is unknown or --per-side boots a side, and judges every metric of the family with
boardlab.judge.decide; a family raises a false alarm when any of its metrics is 'regressed'
or 'improved', and detects a change when its target metric is 'regressed'. Two rules judge
the same draws side by side: 'before' (until 2026-11-26: a real difference whose median is
within the floor was 'same') and 'after' (same only when the interval lies within the
floor). Draws from pools are resamplings, said so: the pools bound how independent the
trials are. Saved pools (results/bench-gate-detection-<board>/pools.json): --pools P, no boots:
    .venv/bin/python bench/gate_detection.py [--board B] [--pool 10] [--trials 20] [--per-side 5] [--pools P]

Families whose programs the board's image lacks (qemu-ppc: lmbench and rt-tests) are
left out, and said so. Goals (issue #10): no false alarm in 20 A/A comparisons for every
family; each injected change detected in >= 19 of 20 trials with 5 boots a side."""
import argparse, json, random, shutil, statistics, subprocess, sys, tempfile, time  # noqa: E401
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab.boot.session import board_session
from boardlab.facts.board import load_board
from boardlab.facts.labfacts import default_board
from boardlab.judge import verdict as vd
from boardlab.judge.decide import Figures, decide
from boardlab.measure import catalogue, clocks, sample
from boardlab.images import images
from boardlab.vlab.lab import kept_up

TARGET = {"boot_time": "boot_time.guest_login", "memory": "memory.free_free_kb",
          "lmbench": "lmbench.lat_pipe_us", "jitter": "jitter.p99_us", "hackbench": "hackbench.time_s"}
DOUBLE_GROUPS = (ROOT / "bench/data/hackbench-double-groups.sh").read_text()   # -g N runs as -g 2N


def rootfs_variant(board, work: Path, name: str, script: str | None = None,
                   ballast_kb: int = 0) -> Path:
    """The board's root tree with an init script and/or a ballast file, as a ramdisk uImage."""
    tree = work / name
    subprocess.run(["cp", "-a", f"{board.images.dir}/nfsroot/.", str(tree)], check=True)
    shutil.rmtree(tree / "dev")
    (tree / "dev").mkdir()
    if script:
        path = tree / "etc/init.d/S45inject"
        path.write_text("#!/bin/sh\n" + script + "\n")
        path.chmod(0o755)
    if ballast_kb:
        (tree / "ballast").write_bytes(bytes(range(256)) * (ballast_kb * 4))
    cpio = work / f"{name}.cpio"
    cpio.write_bytes(images.cpio_newc(images.tree_entries(
        tree, devices=[("dev/console", 5, 1), ("dev/null", 1, 3)])))
    out = work / f"{name}.uImage"
    images.mkimage("ramdisk", cpio, out, board, f"boardlab {name}")
    return out


def pool(strategy, shell_driver, ramdisk: str, families, n: int, label: str, jitter_s: int):
    strategy.select(kernel="", root="ramdisk", ramdisk=ramdisk)
    out = []
    for i in range(n):
        t0 = time.monotonic()
        figures, _ = sample.one_sample(strategy, shell_driver, families, jitter_s)
        out.append(figures)
        print(f"  {label} {i + 1}/{n}: {time.monotonic() - t0:.0f} s", flush=True)
    return out


def samples(boots, key):
    return [b[key] for b in boots if key in b]


def rule_before(a, b, spec):
    """The verdict rule as it was until 2026-11-26, for the side-by-side figures: an exact
    metric's medians against the floor; a noisy one 'same' when its interval lay within the
    floor (from any number of samples, one included) or when a real difference (p < alpha)
    had its median delta within the floor, whatever its interval."""
    a, b = [float(x) for x in a], [float(x) for x in b]
    ma, mb = statistics.median(a), statistics.median(b)
    floor, delta = spec.floor(ma), mb - ma
    worse = vd.REGRESSED if (delta > 0) == (spec.direction == "lower") else vd.IMPROVED
    if spec.exact and max(max(a) - min(a), max(b) - min(b)) <= floor / 4:
        return vd.SAME if abs(delta) <= floor else worse
    p = vd.rank_test(a, b)
    lo, hi = vd.bootstrap_ci(a, b)
    if p < vd.ALPHA and (lo > floor or hi < -floor):
        return worse
    if -floor <= lo and hi <= floor:
        return vd.SAME
    return vd.SAME if p < vd.ALPHA and abs(delta) <= floor else vd.UNKNOWN


RULES = {"before": rule_before,   # after: the judge's, on boots of one session on this host
         "after": lambda a, b, spec: decide(spec, *(Figures(x, host=clocks.this_host()["id"]) for x in (a, b)),
                                            interleaved=True).outcome}


def family_outcomes(a_boots, b_boots, family, rule):
    """{metric: outcome} of one comparison of a family's metrics."""
    out = {}
    for spec in catalogue.of_suite(family):
        a, b = samples(a_boots, spec.key), samples(b_boots, spec.key)
        if a and b and not spec.not_judged:   # min: information only
            out[spec.key] = rule(a, b, spec)
    return out


def sequential(a_pool, b_pool, family, rule, per_side, rng, at_least=1):
    """Boots drawn one a side at a time, as the suites and compare sample, until no metric
    of the family is unknown or per_side boots a side: (outcomes, boots a side)."""
    a_draw, b_draw = rng.sample(a_pool, per_side), rng.sample(b_pool, per_side)
    for n in range(at_least, per_side + 1):
        outcomes = family_outcomes(a_draw[:n], b_draw[:n], family, rule)
        if vd.UNKNOWN not in outcomes.values():
            break
    return outcomes, n


def aa_trials(base, family, trials, per_side, rng, rule, per_metric=None):
    """(false alarms, trials all 'same', mean boots a side) of A/A comparisons; per_metric:
    {metric: trials 'same'}, filled in when given."""
    alarms = same = boots = 0
    for _ in range(trials):
        draw = rng.sample(base, 2 * per_side)
        outcomes, n = sequential(draw[:per_side], draw[per_side:], family, rule, per_side, rng)
        alarms += any(o in (vd.REGRESSED, vd.IMPROVED) for o in outcomes.values())
        same += all(o == vd.SAME for o in outcomes.values())
        boots += n
        for key, o in outcomes.items():
            if per_metric is not None:
                per_metric[key] = per_metric.get(key, 0) + (o == vd.SAME)
    return alarms, same, boots / trials


def shift_pct(base, changed, key) -> float | None:
    a, b = samples(base, key), samples(changed, key)
    ma, mb = (statistics.median(a), statistics.median(b)) if a and b else (0, 0)
    return (mb - ma) / ma * 100 if ma else None


def detection(base, changed, family, key, trials, per_side, rng, rule) -> tuple[int, float]:
    """(trials in which the metric `key` of the changed board is judged 'regressed', mean
    boots a side)."""
    found = boots = 0
    per_side = min(per_side, len(changed))
    for _ in range(trials):
        outcomes, n = sequential(base, changed, family, rule, per_side, rng)
        found += outcomes.get(key) == vd.REGRESSED
        boots += n
    return found, boots / trials


def moved(base, changed, family) -> list:
    """The family's metrics the change moved by more than their floor (and the target)."""
    out = []
    for spec in catalogue.of_suite(family):
        s = shift_pct(base, changed, spec.key)
        if s is None or spec.not_judged:
            continue
        floor_pct = spec.floor(statistics.median(samples(base, spec.key))) / abs(
            statistics.median(samples(base, spec.key)) or 1) * 100
        if spec.key == TARGET[family] or abs(s) > floor_pct:
            out.append((spec.key, s))
    return out


def changed_pools(strategy, shell, board, work, base, families, args) -> dict:
    """{family: boots of the board with that family's change injected}."""
    login = statistics.median(samples(base, "boot_time.guest_login") or [20.0])
    free = statistics.median(samples(base, "memory.free_free_kb") or [90000])
    variants = {
        "boot_time": dict(script=f"sleep {0.03 * login:.3f}"),
        "memory": dict(ballast_kb=int(0.01 * free) + 1),
        "lmbench": dict(script="mount -t tracefs nodev /sys/kernel/tracing; echo 1 > "
                               "/sys/kernel/tracing/events/syscalls/sys_enter_read/enable"),
        # not the suite's own programs: its load_stop would fight a loop of them
        "jitter": dict(script="(while :; do cat /proc/interrupts /proc/slabinfo "
                              ">/dev/null 2>&1; done) &"),
        "hackbench": dict(script=DOUBLE_GROUPS),
    }
    changed = {}
    for family in families:
        rd = rootfs_variant(board, work, f"inject-{family}", **variants[family])
        print(f"injected change for {family}: {variants[family]}", flush=True)
        try:
            changed[family] = pool(strategy, shell, str(rd), [family], args.changed,
                                   f"changed {family}", args.jitter_s)
        except Exception as e:  # noqa: BLE001 - report the others' figures anyway
            print(f"  changed {family}: failed ({type(e).__name__}: "
                  f"{str(e).splitlines()[0][:200]})", flush=True)
            strategy.transition("off")
    return changed


def measure(args, board):
    """The pools: {"base": [boots], "changed": {family: [boots]}, "families": [...]}."""
    work = Path(tempfile.mkdtemp(prefix="gate-power-"))
    try:
        with kept_up("vlab"), board_session(
                ROOT / f"lab/{board.name}.yaml",
                ROOT / f"results/bench-gate-detection-{board.name}") as (strategy, shell):
            strategy.select(kernel="", root="ramdisk", ramdisk="")
            strategy.transition("shell")
            families, lacking = sample.measurable(shell(), args.families.split(","))
            for fam, why in lacking.items():
                print(f"{board.name}: no {fam} figures: {why}", flush=True)
            print(f"unchanged board: {args.pool} boots ({', '.join(families)})", flush=True)
            base = pool(strategy, shell, "", families, args.pool, "unchanged", args.jitter_s)
            changed = changed_pools(strategy, shell, board, work, base, families, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"base": base, "changed": changed, "families": families, "host": clocks.this_host()["id"],
            "jitter_s": args.jitter_s, "date": time.strftime("%Y-%m-%d")}


def table(pools, args):
    base, changed, families = pools["base"], pools["changed"], pools["families"]
    print(f"\n{args.trials} comparisons per family and rule, boots drawn one a side at a time until "
          f"decided, at most {args.per_side} a side, from pools ({len(base)} unchanged boots, "
          f"{args.changed} per change: resampled trials); the same draws for both rules\n")
    print("| family | rule | A/A false alarms | A/A all same | boots a side (A/A) | injected change moved "
          "| measured shift | detected | boots a side |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|")
    same_per_metric = {}
    for family in families:
        for rule_name, rule in RULES.items():
            rng = random.Random(10)      # the same draws for both rules
            alarms, same, aa_boots = aa_trials(base, family, args.trials, args.per_side, rng, rule,
                                               same_per_metric.setdefault(rule_name, {}))
            head = (f"| {family} | {rule_name} | {alarms} of {args.trials} | {same} of {args.trials} | "
                    f"{aa_boots:.1f} |")
            if family not in changed:
                print(f"{head} {TARGET[family]} | - | no boots | - |")
                continue
            for n, (key, shift) in enumerate(moved(base, changed[family], family)):
                found, boots = detection(base, changed[family], family, key, args.trials, args.per_side,
                                         rng, rule)
                target = " (target)" if key == TARGET[family] else ""
                lead = head if n == 0 else "| | | | | |"
                print(f"{lead} {key}{target} | {shift:+.2f} % | {found} of {args.trials} | {boots:.1f} |")
    print(f"\nA/A trials judged 'same', metric by metric (of {args.trials}; the others 'unknown' unless "
          f"counted as false alarms above):\n")
    print("| metric | " + " | ".join(RULES) + " |\n|---|" + "---:|" * len(RULES))
    for key in sorted(same_per_metric["after"]):
        print(f"| {key} | " + " | ".join(str(same_per_metric[r].get(key, 0)) for r in RULES) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", type=int, default=10, help="boots of the unchanged board (>= 2 x per-side)")
    ap.add_argument("--changed", type=int, default=5, help="boots per injected change")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--per-side", type=int, default=5)
    ap.add_argument("--jitter-s", type=int, default=5)
    ap.add_argument("--families", default="boot_time,memory,lmbench,jitter,hackbench")
    ap.add_argument("--board", default=default_board(), help="the virtual board (lab/<board>.yaml; default: the lab's default board)")
    ap.add_argument("--pools", default=None, help="judge the pools a former run saved (pools.json), no boots")
    args = ap.parse_args()
    board = load_board(args.board)
    t_start = time.monotonic()
    if args.pools:
        pools = json.loads(Path(args.pools).read_text())
    else:
        pools = measure(args, board)
        out = ROOT / f"results/bench-gate-detection-{board.name}/pools.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(pools, indent=1) + "\n")
        print(f"pools: {out}")
    args.changed = max((len(v) for v in pools["changed"].values()), default=0)
    print(f"board {board.name}, pools measured on {pools.get('host')} {pools.get('date')} "
          f"(guest-deterministic for every judged figure but the host-arrival milestones)")
    table(pools, args)
    if not args.pools:
        print(f"\nboots: {len(pools['base']) + sum(len(v) for v in pools['changed'].values())}, "
              f"{(time.monotonic() - t_start) / 60:.1f} min (host clock, {clocks.this_host()['id']})")


if __name__ == "__main__":
    main()
