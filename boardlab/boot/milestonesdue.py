"""When each boot milestone is due, from the stored baselines (kernels/<kernel>/<board>.yaml:
the host-arrival boot_time.* figures), read by the strategy itself: a labgrid user's own
script (Environment -> Strategy -> transition) finds a hang when boardlab's entry points
do. A caller may only narrow it (Expected.narrowed: the earlier time of the two wins)."""
from __future__ import annotations

from pathlib import Path

from boardlab.boot.bootwatch import MILESTONES, Expected
from boardlab.facts.board import KERNELS_DIR
from boardlab.measure import baselines as bl


def _times(board: str, kernel: str, root: Path) -> dict:
    """The boot_time.* milestones of the kernel's stored baseline (the shared file, as
    pytest measures them); none when it has none or the file is unusable: the run's gate
    reports that file, a boot is not failed for it."""
    try:
        stored = bl.load(kernel, board, Path(root))
    except (OSError, bl.BaselineError):
        return {}
    return {n: stored[f"boot_time.{n}"].value for n in MILESTONES if f"boot_time.{n}" in stored}


def milestones_due(board: str, kernel: str, root: Path = KERNELS_DIR) -> Expected:
    """The kernel's own baseline; for a kernel with none, each milestone at the latest any
    other kernel of the board has it; empty when the board has no boot baseline at all."""
    own = _times(board, kernel, root)
    if own:
        return Expected(own, f"the baseline of kernel {kernel}")
    times, kernels = {}, []
    for other_kernel in bl.kernels_of(board, root):
        other = _times(board, other_kernel, root)
        if other:
            kernels.append(other_kernel)
        for name, t in other.items():
            times[name] = max(t, times.get(name, 0.0))
    if not times:
        return Expected()
    return Expected(times, f"the slowest baseline of the board's other kernels "
                           f"({', '.join(kernels)}; {kernel} has none of its own)")


def for_boot(board: str, kernel: str, root: str = "", narrowing=None) -> Expected:
    """What a boot is held to: the stored baselines' times (root: where they are, '':
    kernels/), narrowed by a caller's narrowing(board, kernel) -> Expected, if any."""
    own = milestones_due(board, kernel, root or KERNELS_DIR)
    return own.narrowed(narrowing(board, kernel)) if narrowing else own
