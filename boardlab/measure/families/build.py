"""A clean kernel build on the lab host: its times (this host's own, noisy: a rank test,
floor 10 %) and the kernel's sizes (exact by what they are: vmlinux and uImage; floor
0.5 %, ~25 kB of a 5 MB uImage, less than any config change the study compared). Work the
lab host does itself, measured by boardlab.kernelbuilds, not on a boot."""
from __future__ import annotations

from boardlab.measure.families.record import Family
from boardlab.measure.metric import HOST, NONE, MetricSpec

NAME = "build"
SIZES = {"uimage_data_bytes": "compressed kernel (uImage data)",
         "uncompressed_bytes": "uncompressed kernel image",
         "vmlinux_text_bytes": "vmlinux text", "vmlinux_data_bytes": "vmlinux data",
         "vmlinux_bss_bytes": "vmlinux bss", "vmlinux_dec_bytes": "vmlinux total (size)"}

METRICS = tuple(
    [MetricSpec(f"{NAME}.{n}_s", "s", "lower", HOST, 0.10, exact=False, lava=False,
                what=f"kernel build, {n} time") for n in ("real", "user", "sys")]
    + [MetricSpec(f"{NAME}.{n}", "bytes", "lower", NONE, 0.005, lava=False, what=w) for n, w in SIZES.items()])

FAMILY = Family(NAME, METRICS, HOST, order=40, listed=20, what="a clean kernel build: times and sizes", on_boot=False,
                lava=False, default=False, host_work=True)
