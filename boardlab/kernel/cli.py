"""`boardlab kernel show | build | pin`: kernels by what they are."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from boardlab.kernelbuilds import registry
from boardlab.errors import InputError
from boardlab.facts.board import KERNELS_DIR, PROJECT_ROOT, load_board
from boardlab.facts.kernelpin import load_pin
from boardlab.facts.labfacts import default_board
from boardlab.measure.baselines import load_identity
from boardlab.measure import kernelid


def _image_of(board, name) -> Path | None:
    if name in board.images.kernels:
        return Path(board.images.dir) / board.images.kernels[name].uimage
    return registry.lookup(board.name, name)


def show(board, names=()) -> list[str]:
    """Per kernel of the board (facts and registered; or the named ones): pin, image,
    baseline identity."""
    known = list(board.images.kernels) + registry.registered(board.name)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"board {board.name} has no kernel {', '.join(unknown)} "
                         f"(its kernels: {', '.join(known)})")
    lines = []
    for name in names or known:
        pin, image, base = load_pin(name), _image_of(board, name), load_identity(name, board.name)
        ident = kernelid.of_image(image)
        other = kernelid.differs(base, ident)
        lines.append(f"{name}: pinned to {pin.line() if pin else '(no pin)'}")
        lines.append(f"  image:    {kernelid.describe(ident) if ident else '(not built yet)'}"
                     + (f" ({image})" if ident else ""))
        lines.append(f"  baseline: {kernelid.describe(base) if base else '(none, or no identity)'}"
                     + (" -- OTHER KERNEL than the image" if other else ""))
    return lines


def _fragment(args, board) -> Path:
    """--config, checked before any source is fetched: a file of this tree (a build names
    its fragment by its path in the tree, so that the build can be made again)."""
    if not args.config:
        return KERNELS_DIR / "virt-nfs" / f"{board.name}.config"
    path = Path(args.config).resolve()
    if not path.is_file():
        raise InputError(f"--config {args.config}: no such file")
    if not path.is_relative_to(PROJECT_ROOT.resolve()):
        raise InputError(f"--config {args.config}: outside this tree ({PROJECT_ROOT}); a build names "
                         f"its fragment by its path in the tree: put it under kernels/<kernel>/")
    return path


def _sweep(args, board) -> int:
    """`kernel sweep`: the versions measured and their pairs decided; 1 if one was not measured."""
    from boardlab.kernel import sweep
    if args.budget < 0:
        raise InputError(f"--budget {args.budget}: boots a side, 0 or more")
    if args.jitter_seconds is not None and args.jitter_seconds < 1:
        raise InputError(f"--jitter-seconds {args.jitter_seconds}: seconds of cyclictest, 1 or more")
    versions = args.words or sweep.default_versions()
    for v in versions:
        sweep.sources.package_of(v)   # a malformed version: exit 2 before anything is built
    out = Path(args.out or PROJECT_ROOT / "results" / f"sweep-{board.name}")
    fragment = _fragment(args, board)
    from boardlab.vlab.host import virtual_host_of
    from boardlab.vlab.lab import kept_up
    lab = virtual_host_of(board)
    # a virtual board's lab is brought up for the sweep (and down after, if it was down)
    with kept_up(lab, boards=(board.name,)) if lab else contextlib.nullcontext():
        state = sweep.sweep(board, versions, out, fragment, board.lab_host, args.budget,
                            args.jitter_seconds)
    print(sweep.summary(state), end="")
    if args.budget:
        from boardlab.kernel import neighbours
        print("\n" + neighbours.summary(neighbours.load(out / "sweep.json")), end="")
    failed = [e.name for e in state.values() if e.status != "measured"]
    print(f"sweep: {len(state) - len(failed)} measured" + (f", not measured: {', '.join(failed)}" if failed else "")
          + f" ({out / 'sweep.json'})")
    return 1 if failed else 0


def cmd_kernel(args):
    board = load_board(args.board or default_board())
    if args.action == "show":
        print("\n".join(show(board, args.words)))
        return 0
    if args.action == "build":
        from boardlab.kernel.frombuild import build_version
        if len(args.words) != 1:
            print("boardlab kernel build VERSION: one linux-source version (e.g. 6.12.117-1~deb12u1)",
                  file=sys.stderr)
            return 2
        args.version = args.words[0]
        fragment = _fragment(args, board)
        r = build_version(board, args.version, fragment, args.name)
        for c in r.changes:
            print(f"  {c}")
        print(f"kernel {r.name}: {kernelid.describe(r.identity)}; boot it with --kernel {r.name}")
        return 0
    if args.action == "sweep":
        return _sweep(args, board)
    if args.action == "answer":
        from boardlab.kernel import answerpage
        if args.own and args.name and not args.words:
            from boardlab.kernel import sensitivity
            data = sensitivity.keep(args.name, Path(args.own))
            print(f"wrote {data} (`boardlab gen` writes docs/own-programs-{args.name}.md from it)")
            return 0
        if args.also and args.name and not args.words:
            data, md = answerpage.add_stage(args.name, Path(args.also), args.why)
        elif not args.out or not args.name or len(args.words) not in (0, 2):
            raise InputError("kernel answer [A B] --out SWEEP_DIR --name PAGE: a sweep's pair (default "
                             "its two ends) as docs/data/PAGE.json and docs/PAGE.md; --name PAGE --also "
                             "COMPARE_DIR: a later compare of the two added")
        else:
            data, md = answerpage.write(Path(args.out), args.name, *(args.words or (None, None)),
                                        budget=args.budget)
        print(f"wrote {data} and {md} (`boardlab gen` writes the page from the data again)")
        return 0
    from boardlab.kernel.pinmove import move
    if len(args.words) != 2:
        print("boardlab kernel pin KERNEL VERSION --why TEXT: the kernel and its new version", file=sys.stderr)
        return 2
    kernel, version = args.words
    run = move(board, kernel, version, args.why or "", args.package)
    print(f"kernel {kernel}: pinned to {load_pin(kernel).line()}; measured in {run}")
    return 0


def add_parser(sub):
    k = sub.add_parser("kernel", help="kernels by what they are: show (pins, images, baselines' identities); "
                                      "build VERSION (from Debian's linux-source at that version, registered); "
                                      "pin (move a kernel's pin and re-measure); sweep (many versions measured, resumable); "
                                      "answer (a sweep's pair as a page generated from data kept in docs/data)")
    k.add_argument("action", choices=["show", "build", "pin", "sweep", "answer"])
    k.add_argument("words", nargs="*", metavar="ARG",
                   help="show [KERNEL...]; build VERSION (6.12.117-1~deb12u1); "
                        "pin KERNEL VERSION (a package's: 6.1.176-1); "
                        "sweep [VERSION...] (default: every linux-source 6.1 and 6.12 version apt serves); "
                        "answer [A B] (default: the sweep's two ends)")
    k.add_argument("--out", help="sweep: its directory (default results/sweep-<board>; a second call resumes); "
                                  "answer: the sweep's")
    k.add_argument("--board", default=None, help="board facts name (default: the lab's default board, places/lab.yaml)")
    k.add_argument("--budget", type=int, default=10,
                   help="sweep: boots a side to decide each pair of neighbouring versions (and the two "
                        "ends) where one boot each leaves a metric unknown (default 10; 0: one boot each)")
    k.add_argument("--jitter-seconds", type=int, default=None,
                   help="sweep: cyclictest per boot where a pair is booted in turn (default the suite's "
                        "60; a worst case that comes later needs longer: 180)")
    k.add_argument("--also", help="answer: a later `boardlab compare` of the page's two kernels (its directory), "
                                   "whose figures replace the earlier ones' of what it measured")
    k.add_argument("--own", help="answer: a `boardlab compare --tools own` of the page's two kernels (its "
                                  "directory), kept beside the page: docs/own-programs-<name>.md")
    k.add_argument("--name", help="build: the registered name (default <fragment's kernel>-<version>); "
                                   "answer: the page's (docs/<name>.md)")
    k.add_argument("--config", help="build: the config fragment (default kernels/virt-nfs/<board>.config)")
    k.add_argument("--package", help="pin: another package (an ABI bump: linux-image-6.1.0-51-armmp)")
    k.add_argument("--why", help="pin: why it moves (kept in the pin); answer --also: why that compare was "
                                  "added (the page says it; default: the families left unknown measured again)")
    k.set_defaults(func=cmd_kernel)
    return k
