"""When each boot milestone is due, from the stored baselines (kernels/<kernel>/<board>.yaml:
the host-arrival boot_time.* figures), read by the strategy itself: a labgrid user's own
script (Environment -> Strategy -> transition) finds a hang when boardlab's entry points
do. A caller may only narrow it (Expected.narrowed: the earlier time of the two wins)."""
from __future__ import annotations

from pathlib import Path

import yaml

from boardlab.boot.bootwatch import MILESTONES, Expected
from boardlab.facts.board import PROJECT_ROOT
from boardlab import yamltext

KERNELS_DIR = PROJECT_ROOT / "kernels"


def _times(board: str, kernel: str, root: Path) -> dict:
    try:
        metrics = (yamltext.load((Path(root) / kernel / f"{board}.yaml").read_text()) or {}).get("metrics") or {}
    except (OSError, yaml.YAMLError, AttributeError):
        return {}
    return {n: float(metrics[f"boot_time.{n}"]["value"]) for n in MILESTONES
            if isinstance(metrics.get(f"boot_time.{n}"), dict) and "value" in metrics[f"boot_time.{n}"]}


def milestones_due(board: str, kernel: str, root: Path = KERNELS_DIR) -> Expected:
    """The kernel's own baseline; for a kernel with none, each milestone at the latest any
    other kernel of the board has it; empty when the board has no boot baseline at all."""
    own = _times(board, kernel, root)
    if own:
        return Expected(own, f"the baseline of kernel {kernel}")
    times, kernels = {}, []
    for path in sorted(Path(root).glob(f"*/{board}.yaml")):
        other = _times(board, path.parent.name, root)
        if other:
            kernels.append(path.parent.name)
        for name, t in other.items():
            times[name] = max(t, times.get(name, 0.0))
    if not times:
        return Expected()
    return Expected(times, f"the slowest baseline of the board's other kernels "
                           f"({', '.join(kernels)}; {kernel} has none of its own)")
