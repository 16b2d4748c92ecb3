"""What the project's own measurement programs print (target/measure/METHODS.md): integer
counts and nanoseconds on '@raw' lines, the figures computed here, on the host (the
programs hold no floating point: the TQM860L's kernel has no FPU emulation). A line that
does not parse is the program's or the image's fault, never the kernel's."""
from __future__ import annotations

from boardlab.errors import TestFault
from boardlab.measure.parsers import ParseError

OWN = "own"   # the project's programs, as a family's tool set names them (measure.families)


class ProgramOutputError(TestFault, RuntimeError):
    """The project's own program printed nothing, or what is no figure: the test's fault
    (our program, or the image it came in), never the kernel's."""


RAW_KEYS = {"lat": ("n", "ns"), "bw": ("bytes", "ns"), "rate": ("n", "ns"),
            "ctx": ("size", "procs", "hops", "ns", "ovr_hops", "ovr_ns"),
            "wakeups": ("cycles", "min", "max", "sum"), "messaging": ("tasks", "ns")}


def parse_raw(text: str) -> list[dict]:
    """The '@raw KIND [NAME] key=N ...' lines of the project's programs -> [{'kind', 'name',
    key: int}], in order. A line of a known kind lacking one of its keys, or whose counts
    are no whole numbers, is a ParseError naming it (a board's garbage is never a figure)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("@raw "):
            continue
        words = line.split()[1:]
        kind = words[0] if words else ""
        if kind not in RAW_KEYS:
            raise ParseError(f"unknown @raw line: {line.strip()[:80]!r}")
        rec: dict = {"kind": kind, "name": ""}
        for w in words[1:]:
            k, eq, v = w.partition("=")
            if not eq:
                rec["name"] = w
            elif v.isdigit():
                rec[k] = int(v)
            else:
                raise ParseError(f"@raw {kind}: {k}={v[:20]!r} is no whole number")
        lacking = [k for k in RAW_KEYS[kind] if k not in rec]
        if lacking:
            raise ParseError(f"@raw {kind} {rec['name']}: no {lacking[0]}= in {line.strip()[:80]!r}")
        out.append(rec)
    return out


def raw_value(rec: dict) -> float:
    """A figure of one @raw record, in the catalogue's unit (us, MB/s, 1/s); a count of
    zero is a ParseError (no run, no figure)."""
    kind = rec["kind"]
    if kind in ("lat", "rate", "bw") and (rec["ns"] == 0 or rec.get("n", rec.get("bytes")) == 0):
        raise ParseError(f"@raw {kind} {rec['name']}: a run of no time or no operations")
    if kind == "lat":
        return rec["ns"] / rec["n"] / 1000.0
    if kind == "rate":
        return rec["n"] * 1e9 / rec["ns"]
    if kind == "bw":
        return rec["bytes"] / 1e6 / (rec["ns"] / 1e9)   # the original's MB: 10^6 bytes (lib_timing.c)
    if kind == "ctx":
        if not rec["hops"] or not rec["ovr_hops"]:
            raise ParseError(f"@raw ctx size={rec['size']} procs={rec['procs']}: no hops")
        return (rec["ns"] / rec["hops"] - rec["ovr_ns"] / rec["ovr_hops"]) / 1000.0   # <= 0: no figure
    if kind == "messaging":
        return rec["ns"] / 1e9
    raise ParseError(f"@raw {kind}: no single figure")


# runs.sh's labels -> the program that prints its figure (the project's programs' names)
_PROGRAM_OF = {"lat_syscall_null_us": "lat_syscall", "lat_proc_fork_us": "lat_proc", "lat_select_100fd_us": "lat_select",
               "lat_mmap_1m_us": "lat_mmap", "lat_fs_0k": "lat_fs", "bw_file_reread_mb_s": "bw_file_rd",
               "lat_ctx_0k": "lat_ctx", "lat_ctx_1k": "lat_ctx", "lat_ctx_16k": "lat_ctx"}


def figures(label: str, text: str) -> dict:
    """One run's figures from the project's programs' '@raw' lines (integers: computed
    here); a line that does not parse is the run's fault, raised (MeasureError)."""
    program = _PROGRAM_OF.get(label, label.split("_us")[0].split("_mb_s")[0])
    try:
        recs = parse_raw(text)
        if label.startswith("lat_ctx_"):   # a switch no longer than its overhead is no figure, as the original's
            ctx = {f"lat_ctx_{r['size']}k_{r['procs']}p_us": raw_value(r)
                   for r in recs if r["kind"] == "ctx" and r["procs"] in (2, 4, 8, 16)}
            return {k: v for k, v in ctx.items() if v > 0}
        if label == "lat_fs_0k":
            rates = {r["name"]: raw_value(r) for r in recs if r["kind"] == "rate"}
            return {f"lat_fs_{op}_0k_per_s": rates[f"fs_{op}_0k"] for op in ("create", "delete")
                    if f"fs_{op}_0k" in rates}
        return {label: raw_value(recs[-1])} if recs else {}
    except ParseError as e:
        raise ProgramOutputError(f"{program} (the project's, for {label}) printed what is no figure: {e}") from None
