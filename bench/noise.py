#!/usr/bin/env python3
"""Noise of the virtual board per clock: the coefficient of variation (stdev / mean) of
each metric over N boots, on QEMU's deterministic clock (icount) and on the realtime
clock, without and with a CPU hog on the other core. Conditions interleave boot by boot
(det, real, det+hog, real+hog, det, ...) so host drift hits all of them alike.

Each boot goes the real path (power switch, U-Boot, TFTP, ser2net, the strategy) and
measures one figure set per family: boot (host-arrival and guest-time milestones),
memory (free, mem_eat), lmbench (the quick suite's latencies and bandwidths), jitter
(a short cyclictest under the suite's load). Prints a table and, per family, the median
CV of each condition and the ratio realtime / deterministic.

    .venv/bin/python bench/noise.py [--boots 5] [--no-hog] [--jitter-s 5]

Goals (issue #9): guest-time boot milestones CV <= 0.1 %, lmbench <= 1 %, memory
identical on every boot; the same with the hog. Brings the virtual lab up if it is not
(and down again at the end)."""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from boardlab import parsers, target_load  # noqa: E402
from boardlab.vlab.host import VirtualLab  # noqa: E402

QUICK = "ENOUGH=100000 TIMING_O=0 LOOP_O=0 "


def lmbench(shell) -> dict:
    def lm(cmd):
        out, _, rc = shell.run(f"{QUICK}{cmd} 2>&1", timeout=900)
        assert rc == 0, out
        return "\n".join(out)
    r = parsers.parse_lmbench("\n".join([
        lm("lat_syscall null"), lm("lat_proc fork"), lm("lat_pipe"), lm("lat_unix"),
        lm("lat_udp -s; sleep 0.2; lat_udp 127.0.0.1; lat_udp -S 127.0.0.1"),
        lm("lat_select -n 100 file"), lm("bw_pipe"), lm("bw_unix")]))
    shell.run("dd if=/dev/zero of=/tmp/lmfile bs=1024 count=1024 2>/dev/null")
    r["lat_pagefault_us"] = parsers.parse_lmbench(lm("lat_pagefault /tmp/lmfile"))["lat_pagefault_us"]
    r["lat_mmap_1m_us"] = parsers.parse_size_value(lm("lat_mmap 1m /tmp/lmfile"))[1]
    ctx = parsers.parse_lat_ctx(lm("lat_ctx -s 0 2 8"))[0]
    r.update({"lat_ctx_0k_2p_us": ctx[2], "lat_ctx_0k_8p_us": ctx[8]})
    return r


def memory(shell) -> dict:
    free = parsers.parse_free("\n".join(shell.run_check("free")))
    out, _, _ = shell.run("dmesg -n 1; mem_eat > /tmp/m.log 2>&1; tail -n 3 /tmp/m.log", timeout=300)
    return {"free_used_kb": free["used"], "free_free_kb": free["free"],
            "mem_eat_kb": parsers.parse_mem_eat("\n".join(out))["kb"]}


def jitter(shell, seconds) -> dict:
    """The jitter suite's cyclictest under its load (boardlab.target_load), shorter."""
    shell.run_check(target_load.install_command())
    out, _, _ = shell.run(target_load.under_load(
        f"cyclictest -m -p 80 -i 1000 -l {seconds * 1000} -h 20000 --json=/tmp/c.json -q "
        f">/dev/null 2>&1"), timeout=seconds * 20 + 60)
    assert out[-1] == "rc=0", out
    t = parsers.parse_cyclictest_json("\n".join(shell.run_check("cat /tmp/c.json")))["thread"]["0"]
    return {"avg_us": t["avg"], "max_us": t["max"],
            "p99_us": parsers.percentile_from_histogram(t["histogram"], 99)}


def one_boot(strategy, shell_driver, jitter_s) -> dict:
    rec = strategy.reboot()
    figures = {("boot", k): v for k, v in rec.milestones.items() if k != "starting_kernel"}
    figures.update({("boot", "guest_" + k): v for k, v in rec.guest_milestones.items()})
    sh = shell_driver()
    figures.update({("memory", k): v for k, v in memory(sh).items()})
    strategy.transition("off")   # mem_eat leaves the board without caches: a fresh boot
    strategy.transition("shell")
    sh = shell_driver()
    figures.update({("lmbench", k): v for k, v in lmbench(sh).items()})
    figures.update({("jitter", k): v for k, v in jitter(sh, jitter_s).items()})
    return figures


def cv_pct(values):
    m = statistics.mean(values)
    return 0.0 if len(values) < 2 or m == 0 else statistics.stdev(values) / abs(m) * 100


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boots", type=int, default=5, help="boots per condition (default 5)")
    ap.add_argument("--no-hog", action="store_true", help="skip the conditions with a CPU hog")
    ap.add_argument("--jitter-s", type=int, default=5, help="cyclictest seconds per boot")
    args = ap.parse_args()

    from labgrid import Environment
    lab = VirtualLab("vlab")
    was_up = lab.is_up()
    if not was_up:
        lab.up()
    env = Environment(str(ROOT / "lab" / "qemu-arm.yaml"))
    target = env.get_target("main")
    strategy = target.get_driver("Strategy")
    strategy.select(kernel="", root="", ramdisk="")
    strategy.log_dir = str(ROOT / "results" / "bench-noise")
    conditions = [(c, h) for h in ((False,) if args.no_hog else (False, True))
                  for c in ("deterministic", "realtime")]
    samples = {cond: {} for cond in conditions}
    host_s = {cond: [] for cond in conditions}
    hog = None
    try:
        for i in range(args.boots):
            for clock, with_hog in conditions:
                lab.clock(clock)
                if with_hog:   # one busy loop: QEMU has one core, the hog the other
                    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
                t0 = time.monotonic()
                try:
                    figures = one_boot(strategy, lambda: target.get_driver("ShellDriver"), args.jitter_s)
                finally:
                    if hog:
                        hog.kill()
                        hog.wait()
                        hog = None
                host_s[(clock, with_hog)].append(time.monotonic() - t0)
                for key, v in figures.items():
                    samples[(clock, with_hog)].setdefault(key, []).append(float(v))
                print(f"boot {i + 1}/{args.boots} {clock}{' +hog' if with_hog else ''}: "
                      f"{time.monotonic() - t0:.0f} s, login {figures.get(('boot', 'login'), 0):.2f} s, "
                      f"guest login {figures.get(('boot', 'guest_login'), 0):.4f} s, "
                      f"lat_pipe {figures[('lmbench', 'lat_pipe_us')]:.4g} us", flush=True)
    finally:
        strategy.transition("off")
        lab.clock("deterministic")
        env.cleanup()
        if not was_up:
            lab.down()

    names = lambda c: "det" if c[0] == "deterministic" else "real"  # noqa: E731
    head = " | ".join(f"{names(c)}{'+hog' if c[1] else ''} mean, CV" for c in conditions)
    print(f"\nCV over {args.boots} boots per condition (stdev / mean); det = icount, real = realtime\n")
    print(f"| family | metric | {head} |")
    print("|---|---|" + "---|" * len(conditions))
    keys = sorted({k for s in samples.values() for k in s})
    for fam, name in keys:
        cells = []
        for c in conditions:
            v = samples[c].get((fam, name), [])
            cells.append(f"{statistics.mean(v):.5g}, {cv_pct(v):.3f} %" if v else "-")
        print(f"| {fam} | {name} | " + " | ".join(cells) + " |")
    print("\nper family: median CV of its metrics; ratio realtime / deterministic\n")
    for fam in ("boot", "memory", "lmbench", "jitter"):
        row = []
        for hog_on in sorted({c[1] for c in conditions}):
            med = {}
            for clock in ("deterministic", "realtime"):
                cvs = [cv_pct(v) for (f, n), v in samples[(clock, hog_on)].items()
                       if f == fam and not (fam == "boot" and clock == "deterministic"
                                            and not n.startswith("guest_"))]
                med[clock] = statistics.median(cvs) if cvs else float("nan")
            ratio = med["realtime"] / med["deterministic"] if med["deterministic"] else float("inf")
            row.append(f"{'hog' if hog_on else 'quiet'}: det {med['deterministic']:.3f} %, "
                       f"real {med['realtime']:.3f} %, ratio {ratio:.3g}")
        print(f"  {fam:8s} " + "; ".join(row))
    print("  (boot on det: the guest-time milestones; host-arrival times are another clock)")
    print("\nhost seconds per boot (all families): " + ", ".join(
        f"{names(c)}{'+hog' if c[1] else ''} {statistics.median(v):.0f} s" for c, v in host_s.items()))


if __name__ == "__main__":
    main()
