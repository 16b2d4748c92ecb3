"""Whether a config fragment's options survived the kernel's own configuration: every =y
must be in the resulting .config (a missing dependency is an error, not a silent no),
except an option the fragment names as gone in later kernels and this tree does not
define (one fragment serves 6.1 to 6.12: RANDOM_TRUST_BOOTLOADER left Kconfig in 6.2,
whose behaviour it turns on)."""
from __future__ import annotations

import subprocess
from pathlib import Path

GONE_DIRECTIVE = "# gone in later kernels:"   # followed by CONFIG_ names


def gone_later(fragment: Path) -> set[str]:
    """The options the fragment says later kernels no longer have."""
    return {w for ln in Path(fragment).read_text().splitlines() if ln.startswith(GONE_DIRECTIVE)
            for w in ln[len(GONE_DIRECTIVE):].replace(",", " ").split() if w.startswith("CONFIG_")}


def defined(src: Path, option: str) -> bool:
    """Whether any Kconfig file of the tree defines the option."""
    r = subprocess.run(["grep", "-rqsx", "--include=Kconfig*", f"config {option.removeprefix('CONFIG_')}",
                        str(src)], capture_output=True)
    return r.returncode == 0


def unset_options(config: Path, fragment: Path, src: Path | None = None) -> list[str]:
    """The fragment's =y options that are not in config (src: the tree, where an option
    gone in later kernels may be undefined)."""
    have = set(config.read_text().splitlines())
    want = [ln.strip() for ln in fragment.read_text().splitlines()
            if ln.strip().startswith("CONFIG_") and ln.strip().endswith("=y")]
    missing = [w.split("=")[0] for w in want if w not in have]
    gone = gone_later(fragment) if src is not None else set()
    return [m for m in missing if not (m in gone and not defined(src, m))]
