"""`boardlab bisect ...` and `boardlab history watch`: the bisect's verbs."""
from __future__ import annotations

from boardlab.judge.decide import EXACT_SHOWN
from boardlab.judge.mdc import DEFAULT_BUDGET
from boardlab.measure import families


def cmd_bisect(args):
    from pathlib import Path

    from boardlab.bisect import robot, run
    b = run.start(args.tree, args.good, args.bad, args.metric, board=args.board, env=args.env,
                  config=args.config, root=args.root or "", repeats=args.repeats,
                  max_repeats=args.max_repeats, failed_boot=args.failed_boot, out=args.out,
                  revert=not args.no_revert)
    # git bisect run's last line ends without a newline
    print("\n" + run.summary(b), end="")
    report = Path(b.run_dir) / robot.REPORT
    if b.first_bad and report.exists():
        print(f"report: {report}")
    return 0 if b.first_bad else 1


def cmd_watch(args):
    """`boardlab history watch` (its parser is the history's)."""
    from boardlab.bisect.watch import cmd_watch as watch
    return watch(args)


def add_parser(sub):
    from boardlab.bisect import BisectError
    from boardlab.kernelbuilds.kbuild import KernelBuildError
    bi = sub.add_parser("bisect", help="the first commit of a kernel tree at which a metric (or "
                                       "several) regressed, measured on the board (git bisect run)")
    bi.add_argument("--tree", required=True, help="the kernel source, a git work tree")
    bi.add_argument("--good", required=True, help="a revision without the regression")
    bi.add_argument("--bad", required=True, help="a revision with it")
    bi.add_argument("--metric", required=True,
                    help=f"a catalogue name, e.g. {', '.join(f.shown for f in families.FAMILIES if f.shown)}, "
                         "build.vmlinux_text_bytes (a build metric needs no boot); several, comma-"
                         "separated, are bisected at once: one build and one boot a sample for all, "
                         "a step bad when any regressed")
    bi.add_argument("--board", default=None, help="board facts name (default: the lab's default board, places/lab.yaml)")
    bi.add_argument("--env", default=None, help="labgrid environment (default lab/<board>.yaml; "
                                                "lab/remote/<board>.yaml for a reserved place)")
    bi.add_argument("--config", default=None,
                    help="kernel config fragment, merged over allnoconfig or the defconfig "
                         "its '# base:' line names (default: kernels/virt-nfs/<board>.config, "
                         "else the board's one kernels/*/<board>.config)")
    bi.add_argument("--root", default=None, choices=["ramdisk", "nfs"], help="root file system "
                    "of the boots (default: the board's)")
    bi.add_argument("--repeats", type=int, default=5,
                    help="boots a revision for a noisy metric (an exact one needs one; default 5)")
    bi.add_argument("--max-repeats", type=int, default=10,
                    help="more boots while a noisy verdict is unknown, up to this many (default 10)")
    bi.add_argument("--failed-boot", choices=["skip", "bad"], default="skip",
                    help="a revision whose boot fails: skip it (default), or count it bad when the "
                         "failure is what you are hunting")
    bi.add_argument("--no-revert", action="store_true",
                    help="do not confirm the culprit by reverting it on the bad revision "
                         "(built and measured once more) before the report")
    bi.add_argument("--out", default=None, help="run directory (default results/bisect-<time>)")
    bi.set_defaults(func=cmd_bisect, errors=(BisectError, KernelBuildError))
    add_nightly_parser(sub)


def cmd_nightly(args):
    from boardlab.bisect.nightly import failed, nightly
    families = tuple(f for f in args.families.split(",") if f)
    run_dir = nightly(args.tree, args.branch, args.board, families, args.boots, args.config,
                      args.root or "", args.out, args.tree_name or "")
    bad = failed(run_dir)
    for test, why in bad.items():
        print(f"{test}: fail ({why})")
    return 1 if bad else 0


def add_nightly_parser(sub):
    from boardlab.bisect import BisectError
    from boardlab.bisect.nightly import DEFAULT_FAMILIES
    ni = sub.add_parser("nightly", help="a kernel tree's branch head: built, measured on the board, "
                                        "landed in the history named by its revision (what "
                                        "`history watch` bisects)")
    ni.add_argument("--tree", required=True, help="the kernel source, a git work tree")
    ni.add_argument("--branch", default="HEAD", help="the branch (or revision) whose head is built (default HEAD)")
    ni.add_argument("--board", default=None, help="board facts name (default: the lab's default board, places/lab.yaml)")
    ni.add_argument("--families", default=",".join(DEFAULT_FAMILIES),
                    help=f"what each boot measures (default {','.join(DEFAULT_FAMILIES)}: exact, one boot "
                         f"decides; '' for the build's sizes alone, no boot)")
    ni.add_argument("--boots", type=int, default=DEFAULT_BUDGET,
                    help=f"at most this many boots of the kernel (default {DEFAULT_BUDGET}); fewer where the "
                         f"figures decide against the nights before: one where their level is shown exact, "
                         f"{EXACT_SHOWN} where a figure must show it repeats, none beyond out of reach")
    ni.add_argument("--config", default=None, help="kernel config fragment (default: the board's, as bisect)")
    ni.add_argument("--root", default=None, choices=["ramdisk", "nfs"], help="root file system (default: the board's)")
    ni.add_argument("--out", default=None, help="run directory (default results/nightly-<rev>-<time>)")
    ni.add_argument("--tree-name", default=None,
                    help="the tree's name as KernelCI names trees (mainline, stable, next...; KCIDB's "
                         "tree_name): none is guessed")
    ni.set_defaults(func=cmd_nightly, errors=(BisectError,))
