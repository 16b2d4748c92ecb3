"""LAVA job definitions per (board, kernel, root, suites): deploy to TFTP (uImage +
ramdisk, or NFS root), boot with the u-boot method, lava-test-shell definitions from
jobs/testdefs/, which print their programs' output raw and tagged and report one test
case, `measured`; `boardlab lava results` parses and judges it off the board, as the
pytest suites do (measure.tagged, judge.decide)."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import yaml

from boardlab.facts.board import NFSROOT_TARBALL, Board
from boardlab.measure import baselines as bl
from boardlab.lava.errors import LavaError, LavaInputError
from boardlab.lava.files import TESTDEFS_DIR, device_type_name
from boardlab.lava.limits import BOOT_ATTEMPTS, RETRY_SLACK_S
from boardlab.lava.logs import login_prompt
from boardlab.lava.suites import DEFAULT_SUITES, HARNESS, SUITES
from boardlab.measure import catalogue, families, workloads


def normalise_suites(suites) -> list[str]:
    out = []
    for s in suites:
        if s not in SUITES:
            raise LavaInputError(f"unknown suite {s!r} (known: {', '.join(SUITES)})")
        if s not in out:
            out.append(s)
    return out


EXPECTED_PREFIX = "boardlab.expected."


def expected_cases(board: Board, kernel: str, suite: str, root: Path = bl.KERNELS_DIR) -> list[str]:
    """The test cases a suite's definition must report: the metrics of the suite that
    LAVA's definitions report (the catalogue says which) and its stored baselines hold.
    As upstream LAVA's `expected` list (which the LAVA 2023.1 here does not know):
    carried in the job's metadata, a case missing from the results is 'missing' and
    fails (`boardlab lava results`)."""
    base = bl.load(kernel, board.name, root, HARNESS)
    return sorted(m.name for m in catalogue.of_suite(suite, lava=True) if m.key in base)


def expected_of(job: dict) -> dict[str, list[str]]:
    """{suite: [case]} a job expects (its metadata; {} for a job rendered before lists)."""
    meta = job.get("metadata") or {}
    return {k[len(EXPECTED_PREFIX):]: str(v).split() for k, v in meta.items()
            if k.startswith(EXPECTED_PREFIX)}


def settings_of(job: dict) -> dict[str, dict]:
    """{suite: how its figures were measured} where that changes them, from the job's test
    definitions (jitter: cyclictest's run length, as the pytest suite records it)."""
    out: dict[str, dict] = {}
    for action in job.get("actions", []):
        for d in (action.get("test") or {}).get("definitions", []):
            params = d.get("parameters") or {}
            said = {**(families.get(d["name"]).settings(params) if d.get("name") in families.BY_NAME else {}),
                    **families.tool_settings(params.get("TOOLS"))}   # the project's programs say so
            if said:
                out[d["name"]] = said
    return out


def testdefs_tarball(dest: Path, own_isas=()) -> Path:
    """jobs/testdefs as the tarball a `from: url` test definition names, with the project's
    programs (own/<cpu>/) for each of own_isas (own_isas_of: a job whose root carries
    Debian's set runs a family measured by the project's programs alone, mem_bw): only for
    such a job, as LAVA's overlay is in the board's RAM (280 kB of it, its memory figures)."""
    from boardlab.images import ownprograms
    dest.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(TESTDEFS_DIR.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                tar.add(p, arcname=str(p.relative_to(TESTDEFS_DIR)))
        for isa in own_isas:
            tar.add(ownprograms.build(isa), arcname=f"own/{isa}/{ownprograms.BINARY}")
            names = tarfile.TarInfo(f"own/{isa}/programs")
            text = " ".join(ownprograms.PROGRAMS).encode() + b"\n"
            names.size, names.mode = len(text), 0o644
            tar.addfile(names, io.BytesIO(text))
    dest.write_bytes(buf.getvalue())
    return dest


def job_testdefs(work: Path, board: Board, suites) -> Path:
    """The definitions' tarball a job of these suites on this board needs, written in work:
    with the programs own_isas_of names (its file name says which), so no caller forgets them."""
    own = own_isas_of(board, suites)
    return testdefs_tarball(work / ("boardlab-testdefs" + "".join(f"-own-{i}" for i in own) + ".tar.gz"), own)


def debian_set_cpus() -> list[str]:
    """The CPUs of the project's programs whose boards' roots carry Debian's set of some
    family (armhf): the roots a family measured by the project's programs alone lacks them."""
    from boardlab.images import ownprograms
    return [isa for isa in ownprograms.CPUS
            if any(families.tool_set(f.name, isa) == families.DEBIAN for f in families.FAMILIES if f.tools)]


def own_isas_of(board: Board, suites) -> tuple:
    """The CPUs whose programs a job's definitions must bring: the board's, when its root
    carries Debian's set and a suite of the job runs the project's programs."""
    if board.isa not in debian_set_cpus():
        return ()
    return (board.isa,) if any(families.get(s).tools is not None and families.tool_set(s, board.isa) == families.OWN
                               for s in suites if s in families.BY_NAME) else ()


def _image_url(board: Board, name: str, image_base: str | None) -> str:
    if image_base:
        return image_base.rstrip("/") + "/" + name
    return (Path(board.images.dir) / name).as_uri()


def _deploy(board: Board, kinfo, root: str, image_base: str | None) -> dict:
    deploy = {"to": "tftp", "os": "oe", "timeout": {"minutes": 5},
              "kernel": {"url": _image_url(board, kinfo.uimage, image_base), "type": "uimage"}}
    ramdisk = {"url": _image_url(board, board.images.ramdisk or "", image_base), "header": "u-boot"}
    if root == "ramdisk":
        deploy["ramdisk"] = ramdisk
    else:
        deploy["nfsrootfs"] = {"url": _image_url(board, NFSROOT_TARBALL, image_base),
                               "compression": "xz"}
        if kinfo.nfs_loader:   # NIC and NFS client are modules: the loader ramdisk
            deploy["ramdisk"] = ramdisk
    return deploy


def _boot(board: Board, root: str) -> dict:
    """One boot attempt: power-on to U-Boot, two loads, load command to shell. LAVA tries
    BOOT_ATTEMPTS times; each attempt is capped on its own (uboot-commands) so a stalled
    first attempt leaves the second its whole time, and the wait for the kernel and the
    login (auto-login-action) by the board's boot time."""
    t = board.timeouts
    attempt = int(t.uboot_s + 2 * t.load_s + t.boot_s)
    return {"method": "u-boot", "commands": root,   # bootm: from the uimage kernel type
            "prompts": [board.shell.prompt],
            "auto_login": {"login_prompt": login_prompt(board),
                           "username": board.shell.username},
            "failure_retry": BOOT_ATTEMPTS,
            "timeout": {"seconds": BOOT_ATTEMPTS * (attempt + RETRY_SLACK_S)},
            "timeouts": {"uboot-commands": {"seconds": attempt},
                         "auto-login-action": {"seconds": int(t.boot_s)}}}


def _tests(board: Board, suites, *, quick, jitter_duration, testdefs_url) -> tuple[list, int]:
    """The test definitions of the suites and their minutes."""
    options = families.Options(quick=quick, small=workloads.small_board(board.ram_mb),
                               jitter_s=jitter_duration)
    definitions, test_minutes = [], 0
    for s in suites:
        if SUITES[s] is None:
            continue
        params = families.get(s).params(options)
        if families.get(s).tools is not None:   # whose programs: said in the job, as in results
            params = dict(params, TOOLS=families.tool_set(s, board.isa))
            if params["TOOLS"] == families.OWN:   # a root without them: theirs from the definitions
                params["OWN_ISA"] = board.isa
        definitions.append({"repository": testdefs_url, "from": "url", "compression": "gz",
                            "path": SUITES[s], "name": s, **({"parameters": params} if params else {})})
        test_minutes += families.get(s).minutes(params, quick)
    return definitions, test_minutes


def check_request(board: Board, kernel: str | None, suites, root: str | None) -> tuple:
    """(kernel, root, suites) of a job request, with the board's defaults; LavaInputError
    naming the board's file for what it cannot run. Nothing is written before it."""
    kernel = kernel or board.images.default_kernel
    root = root or board.root.default
    try:
        suites = normalise_suites(suites)
    except LavaError as e:
        raise LavaInputError(str(e)) from None
    if kernel not in board.images.kernels:
        raise LavaInputError(f"{board.path}: no kernel {kernel!r} in images.kernels "
                             f"(has: {', '.join(board.images.kernels)})")
    if root not in board.root.bootargs:
        raise LavaInputError(f"{board.path}: no root mode {root!r} in root.bootargs "
                             f"(has: {', '.join(board.root.bootargs)})")
    for s in suites:   # a family measured on one root only (its record's)
        only = families.get(s).root
        if only and root != only:
            raise LavaInputError(f"suite {s} is measured on the {only} root, as in the study "
                                 f"(board {board.name} was asked for root {root})")
    return kernel, root, suites


def render_job(board: Board, kernel: str | None = None, suites=DEFAULT_SUITES, root: str | None = None,
               *, quick: bool = False, jitter_duration: int | None = None,
               testdefs_url: str, image_base: str | None = None,
               baselines_root: Path = bl.KERNELS_DIR) -> dict:
    """A LAVA job definition (as data) for a board, a kernel, a root mode and suites.
    baselines_root: whose stored figures name the test cases the job expects."""
    kernel, root, suites = check_request(board, kernel, suites, root)
    kinfo = board.images.kernels[kernel]
    deploy, boot = _deploy(board, kinfo, root, image_base), _boot(board, root)
    definitions, test_minutes = _tests(board, suites, quick=quick, jitter_duration=jitter_duration,
                                       testdefs_url=testdefs_url)
    actions = [{"deploy": deploy}, {"boot": boot}]
    if definitions:
        actions.append({"test": {"timeout": {"minutes": test_minutes}, "definitions": definitions}})
    job = {
        "device_type": device_type_name(board),
        "job_name": f"boardlab {board.name} {kernel} {root}: {' '.join(suites)}",
        "timeouts": {"job": {"minutes": deploy["timeout"]["minutes"] + test_minutes + 2
                             + -(-boot["timeout"]["seconds"] // 60)},
                     "action": {"minutes": 5}, "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
        "metadata": {"boardlab.board": board.name, "boardlab.kernel": kernel,
                     "boardlab.root": root, "boardlab.suites": " ".join(suites),
                     "boardlab.quick": str(quick).lower()},
        "actions": actions,
    }
    for d in definitions:
        job["metadata"][EXPECTED_PREFIX + d["name"]] = " ".join(
            expected_cases(board, kernel, d["name"], baselines_root))
    if kinfo.console:   # Linux 2.4 names the same UART differently
        job["context"] = {"console_device": kinfo.console}
    return job


def dump_job(job: dict) -> str:
    return yaml.safe_dump(job, sort_keys=False, width=200)

