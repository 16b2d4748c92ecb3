#!/usr/bin/env python3
"""How well `compare --phases` judges initcalls: false alarms in A/A comparisons of the
unchanged kernel with itself, and detection of an initcall slowed by a known amount.

The kernel: the test tree's base (tests/kerneltree.py: Debian's linux-source-6.1, the
virtual board's config) with one change made here, a boot parameter that slows one
initcall:
  boardlab_delay_us=N   chr_dev_init (drivers/char/mem.c) busy-waits N us first
                        (mdelay/udelay: on the board's clock)
built once, incrementally through ccache, into the cache. Every boot is of that one
image, from the ramdisk, with the kernel's phase log, the real way (power switch,
U-Boot, TFTP, ser2net, the strategy); side A passes boardlab_delay_us=0000, side B
=2000 (the same length: the command lines differ in one digit).

The boots alternate A, B, A, B, ... (--pairs of each). Then:
  A/A        --trials comparisons of 5 A boots against 5 other A boots, drawn without
             replacement from the A pool (resampled: the pool bounds how independent
             they are), judged by boardlab.judge.bootspans: every span flagged is a false alarm;
  detection  each pair (one boot a side, no boot used twice) judged the same way: found
             when chr_dev_init is 'regressed' by 2 ms +- 10 %; every other span flagged
             is a false alarm.

    .venv/bin/python bench/initcall_detection.py [--pairs 20] [--trials 20] [--delay-us 2000]

Goals (#27): A/A with 5 boots a side, 0 spans flagged; the 2 ms found in >= 19 of 20.
Figures are on the guest-deterministic clock (the board's printk and initcall times)."""
import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from boardlab.boot.session import board_session  # noqa: E402
from boardlab.kernelbuilds.buildenv import CACHE_DIR  # noqa: E402
from boardlab.kernelbuilds.kbuild import build_tree  # noqa: E402
from boardlab.facts.board import env_path, load_board  # noqa: E402
from boardlab.judge import bootspans  # noqa: E402
from boardlab.measure import clocks, phases  # noqa: E402
from boardlab.vlab.host import prepare_if_virtual, virtual_host_of  # noqa: E402
from boardlab.vlab.lab import kept_up  # noqa: E402

TARGET = "initcall.chr_dev_init"
SOURCE = CACHE_DIR / "initcall-bench" / "linux-source-6.1"
DELAY_PARAM = """static unsigned int boardlab_delay_us;

/* bench/initcall_detection.py: slow chr_dev_init by a known amount (boardlab_delay_us=N) */
static int __init boardlab_delay_setup(char *s)
{
	return kstrtouint(s, 10, &boardlab_delay_us) == 0;
}
__setup("boardlab_delay_us=", boardlab_delay_setup);

static int __init chr_dev_init(void)
{
	int minor;
	unsigned int left = boardlab_delay_us;

	for (; left >= 1000; left -= 1000)
		mdelay(1);
	udelay(left);
"""


def kernel(board) -> Path:
    """The base of the test tree with the delay parameter, built (incrementally)."""
    from kerneltree import make_tree
    tree = make_tree()
    if not (SOURCE / ".git").exists():
        SOURCE.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(tree.path), "worktree", "prune"], check=True)
        subprocess.run(["git", "-C", str(tree.path), "worktree", "add", "-q", "--detach", str(SOURCE),
                        tree.base], check=True)
    mem = SOURCE / "drivers" / "char" / "mem.c"
    text = mem.read_text()
    if "boardlab_delay_us" not in text:
        old = "static int __init chr_dev_init(void)\n{\n\tint minor;\n"
        assert text.count(old) == 1, "drivers/char/mem.c: chr_dev_init is not as expected"
        text = text.replace(old, DELAY_PARAM).replace("#include <linux/mm.h>\n",
                                                      "#include <linux/mm.h>\n#include <linux/delay.h>\n", 1)
        mem.write_text(text)
    uimage = CACHE_DIR / "initcall-bench" / "delay.uImage"
    t0 = time.monotonic()
    build_tree(board, SOURCE, CACHE_DIR / "kbuild" / f"initcall-bench-{board.name}",
               ROOT / "kernels" / "virt-nfs" / f"{board.name}.config", uimage)
    print(f"kernel with boardlab_delay_us built in {time.monotonic() - t0:.0f} s (host clock): {uimage}",
          flush=True)
    return uimage


def boots(env: Path, uimage: Path, pairs: int, delay_us: int, log_dir: Path) -> tuple[list, list, dict]:
    """pairs x (A: no delay, B: delay_us), alternating -> each side's boots' {span: s},
    and each span's source."""
    a, b, sources = [], [], {}
    width = len(str(delay_us))
    with board_session(env, log_dir) as (strategy, _shell):
        for n in range(pairs):
            for side, us in ((a, 0), (b, delay_us)):
                strategy.select(kernel=str(uimage), root="ramdisk", ramdisk="", phase_log=True,
                                kernel_args=f"boardlab_delay_us={us:0{width}d}")
                spans = phases.of_boot(strategy.reboot())
                side.append(phases.durations(spans))
                sources.update(phases.sources(spans))
            print(f"  pair {n + 1}/{pairs}: {TARGET} {a[-1][TARGET] * 1000:.3f} ms / "
                  f"{b[-1][TARGET] * 1000:.3f} ms, login {sum(v for k, v in a[-1].items() if bootspans.is_leaf(k)):.4f} s",
                  flush=True)
    return a, b, sources


def judge(a_boots, b_boots, sources):
    return bootspans.compare_spans(a_boots, b_boots, sources, sources)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="qemu-arm")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--per-side", type=int, default=5)
    ap.add_argument("--delay-us", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    board = load_board(args.board)
    host = clocks.this_host()["id"]
    print(f"initcall power on {args.board}, host {host}, {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    uimage = kernel(board)
    log_dir = CACHE_DIR / "initcall-bench" / "console"
    with kept_up(virtual_host_of(board), boards=(board.name,)):
        prepare_if_virtual(board)
        t0 = time.monotonic()
        a, b, sources = boots(env_path(board.name), uimage, args.pairs, args.delay_us, log_dir)
        print(f"{2 * args.pairs} boots in {time.monotonic() - t0:.0f} s (host clock)", flush=True)
    rng = random.Random(args.seed)
    aa_flagged, aa_spans = [], 0
    for _ in range(args.trials):
        draw = rng.sample(range(len(a)), 2 * args.per_side)
        w = judge([a[i] for i in draw[:args.per_side]], [a[i] for i in draw[args.per_side:]], sources)
        aa_flagged += [r.key for r in w.changed]
        aa_spans += w.spans
    found, false_alarms, deltas, others, explained = 0, [], [], {}, []
    for x, y in zip(a, b):
        w = judge([x], [y], sources)
        explained.append(w.explained_fraction)
        for r in w.changed:
            if r.key != TARGET:
                others.setdefault(r.key, []).append(r.delta_s)
        hit = next((r for r in w.changed if r.key == TARGET), None)
        if hit and hit.cmp.outcome == "regressed" and abs(hit.delta_s - args.delay_us / 1e6) <= 0.1 * args.delay_us / 1e6:
            found += 1
            deltas.append(hit.delta_s)
        false_alarms += [r.key for r in w.changed if r.key != TARGET]
    print(f"\nA/A: {args.trials} comparisons of {args.per_side} boots a side (drawn from {len(a)} boots): "
          f"{len(aa_flagged)} spans flagged of {aa_spans} judged"
          + (f" ({', '.join(sorted(set(aa_flagged)))})" if aa_flagged else ""))
    print(f"detection: {TARGET} +{args.delay_us} us found in {found} of {len(a)} comparisons of one boot a "
          f"side" + (f", measured +{min(deltas) * 1e3:.3f} .. +{max(deltas) * 1e3:.3f} ms" if deltas else ""))
    spans = len(a[0])
    print(f"false alarms there: {len(false_alarms)} of {len(a) * (spans - 1)} other span verdicts"
          + (f" ({', '.join(sorted(set(false_alarms)))})" if false_alarms else ""))
    for key, ds in sorted(others.items()):
        print(f"  {key}: flagged in {len(ds)} of {len(a)}, {min(ds) * 1e3:+.3f} .. {max(ds) * 1e3:+.3f} ms")
    shown = [e for e in explained if e is not None]
    if shown:
        print(f"login change explained by the flagged spans: {100 * min(shown):.0f} .. {100 * max(shown):.0f} %")
    print(f"goals: A/A 0 flagged: {'met' if not aa_flagged else 'NOT met'}; found >= 19 of 20: "
          f"{'met' if found >= 0.95 * len(a) else 'NOT met'}")


if __name__ == "__main__":
    main()
