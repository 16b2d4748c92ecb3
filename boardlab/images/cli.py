"""`boardlab images programs`: the project's measurement programs for a CPU, as a tarball
for someone's own board (the virtual boards' images carry them already: `vlab build`);
`boardlab images root`: a real board's whole NFS root (boardlab.images.realroot)."""
from __future__ import annotations

from pathlib import Path

from boardlab.errors import InputError
from boardlab.facts.board import load_board


def cmd_images(args):
    from boardlab.images import ownprograms
    if args.action == "root":
        from boardlab.images import realroot
        if not args.board:
            raise InputError("root: --board BOARD (a real board's facts: boards/<board>.yaml)")
        board = load_board(args.board)
        _, tarball, size = realroot.build_root(board, Path(args.out))
        print(f"{tarball}: unpack into the board's NFS export ({board.nfs.export})\n"
              + realroot.size_words(board, size))
        return 0
    if args.action == "programs":
        if bool(args.isa) == bool(args.board):
            raise InputError("programs: --isa ISA or --board BOARD (whose facts name its isa)")
        isa = args.isa or load_board(args.board).isa
        ownprograms.cpu(isa, args.board)
        path = ownprograms.tarball(isa, Path(args.out))
        print(f"{path}: the project's programs for {isa} ({ownprograms.CPUS[isa].what}); "
              f"unpack at / on the board: {ownprograms.ON_BOARD_DIR}")
        if args.board:
            from boardlab.images import realroot
            print(realroot.size_words(load_board(args.board), path.stat().st_size, "the programs' tarball",
                                      "compressed"))
    return 0


def add_parser(sub):
    from boardlab.images.ownprograms import ProgramBuildError
    i = sub.add_parser("images", help="programs: the project's measurement programs for a CPU (a tarball "
                                      "for your own board's root); root: the NFS root a real board needs "
                                      "to run the suites (busybox, mem_eat, the programs, the scripts)")
    i.add_argument("action", choices=["programs", "root"])
    i.add_argument("--isa", help="the CPU's (armhf, e500mc, 603e, mpc8xx)")
    i.add_argument("--board", help="or the board whose facts name it")
    i.add_argument("--out", default=".", help="where the tarball goes (default: here)")
    return i.set_defaults(func=cmd_images, errors=(ProgramBuildError,))
