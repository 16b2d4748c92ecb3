"""`boardlab bisect`: the first commit of a kernel tree at which one or more metrics
regressed, measured on the board.

The good and the bad revision are built and measured first (the good one's samples are
what every step is judged against; a bad revision that is not 'regressed' against the
good one is refused: nothing to bisect). Then `git bisect run` calls this module's step
for each revision git picks: build incrementally through ccache (boardlab.kernelbuilds.kbuild), boot
the uImage on the board the real way (power, U-Boot, TFTP, the strategy), measure the
metrics (one build, one boot a sample for every family they need; one boot when the
catalogue says a metric is exact, --repeats boots when it is noisy, more while a verdict
is unknown) and judge each with the lab's own comparison (boardlab.judge.verdict): any
regressed -> bad (exit 1), none regressed and every one same or improved -> good (0), a
build or boot that fails or a verdict still unknown -> skip (125). A size metric needs no
boot: the build decides. Several metrics that moved over one range are bisected once; a
metric the bad revision does not regress is dropped before the steps, and said.

Everything lands in one run directory: bisect.json (the setup and every step), per step
results.json and console logs, bisect.log (git's). The tree is left as it was found
(`git bisect reset`), also on Ctrl-C, and the board is off.

Only the kernel's own failure (a panic, a hang, an image bootm refuses) is a failed
boot (--failed-boot skip|bad). A lab fault (board busy, console or power down, TFTP,
staging) answers nothing about the revision: the bisect stops there and says so, rather
than skipping every revision of an outage or naming a commit for it."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.errors import BoardlabError, InputError, KernelFault, LabFault
from boardlab.files import atomic_write
from boardlab.log import progress
from boardlab.measure import catalogue
from boardlab.measure.families import on_boot

GOOD, BAD, SKIP = 0, 1, 125      # what `git bisect run` takes from a step
STOP = 255                       # above 127: `git bisect run` aborts (a lab fault)
ANSWER = {GOOD: "good", BAD: "bad", SKIP: "skip", STOP: "stop"}
ANSWER_CODE = {v: k for k, v in ANSWER.items()}
STATE = "bisect.json"


class BisectError(BoardlabError):
    pass


class BisectInputError(BisectError, InputError):
    """A tree, revision, metric, config or environment the bisect cannot take (exit 2)."""


class MetricMissing(BisectError, KernelFault):
    """The kernel booted but its boot gave no figure of the metric."""


class BisectLabFault(BisectError, LabFault):
    """The lab, not the revision, failed a step (board busy, ser2net down, power, TFTP,
    staging): no answer can be given for the revision, so the bisect stops."""


@dataclass
class Step:
    rev: str
    subject: str
    role: str                  # good, bad (the endpoints) or step
    answer: str = ""           # good, bad, skip
    build_s: float | None = None
    boot_s: list = field(default_factory=list)      # power-on -> shell, per boot
    measure_s: list = field(default_factory=list)   # the measurement, per boot
    samples: dict = field(default_factory=dict)    # {metric: [its samples]}
    verdict: str | None = None  # the step's: regressed if any metric did (step.combined)
    why: str = ""
    dir: str = ""
    verdicts: dict = field(default_factory=dict)   # {metric: its outcome}
    measured_at: float | None = None   # when its last boot was measured (epoch s): the drift rule's


@dataclass
class Bisect:
    tree: str
    good: str
    bad: str
    metrics: list              # catalogue names; "a,b" or one name is taken too
    board: str
    env: str
    config: str
    run_dir: str
    root: str = ""
    repeats: int = 5           # samples a revision for a noisy metric
    max_repeats: int = 10
    failed_boot: str = "skip"  # or bad: when a boot that fails is what is being hunted
    steps: list = field(default_factory=list)
    first_bad: dict | None = None
    candidates: list = field(default_factory=list)   # no first bad commit: the skipped ones it is among
    hint: str = ""             # a boot metric's leading span change, good -> bad (judge.bootspans)
    dropped: dict = field(default_factory=dict)      # {metric: why}: not regressed at the bad end

    def __post_init__(self):
        self.metrics = metric_list(self.metrics)

    # ---- the state file, shared by the parent and every step process -----------------
    @classmethod
    def load(cls, run_dir) -> "Bisect":
        data = json.loads((Path(run_dir) / STATE).read_text())
        if "metric" in data:     # a state written before bisects took several metrics
            data["metrics"] = data.pop("metric")
        metrics = metric_list(data["metrics"])
        steps = []
        for s in data.pop("steps"):
            if isinstance(s.get("samples"), list):
                s["samples"] = {metrics[0]: s["samples"]} if s["samples"] else {}
            steps.append(Step(**s))
        return cls(**data, steps=steps)

    def save(self):
        atomic_write(Path(self.run_dir) / STATE, json.dumps(asdict(self), indent=1) + "\n")

    @property
    def metric(self) -> str:
        """The metrics as one name, comma-separated (a single metric: its name)."""
        return ",".join(self.metrics)

    @property
    def specs(self) -> dict:
        return {m: catalogue.spec(m) for m in self.metrics}

    @property
    def spec(self) -> catalogue.MetricSpec:
        """The first metric's spec (a single-metric bisect's)."""
        return catalogue.spec(self.metrics[0])

    @property
    def families(self) -> list:
        """The families a boot measures for the metrics, in the families record's order (memory
        first: before any workload); [] when the build decides every one."""
        wanted = {s.suite for s in self.specs.values()}
        return [f for f in on_boot() if f in wanted]

    @property
    def needs_boot(self) -> bool:
        return bool(self.families)

    def good_samples(self) -> dict:
        return next(s.samples for s in self.steps if s.role == "good")

    def build_dir(self) -> Path:
        return build_dir_of(Path(self.tree), self.board, Path(self.config))


def metric_list(metrics) -> list:
    """"a,b", "a" or ["a", "b"] -> ["a", "b"] (each once, in order)."""
    if isinstance(metrics, str):
        metrics = metrics.split(",")
    out = []
    for m in (str(m).strip() for m in metrics):
        if m and m not in out:
            out.append(m)
    return out


def build_dir_of(tree: Path, board: str, config: Path) -> Path:
    """One incremental build directory per (tree, board, config), kept between runs: a
    bisect's and the nightly builds' of that tree."""
    key = hashlib.sha256(f"{Path(tree).resolve()}|{board}|{config}".encode())
    return CACHE_DIR / "kbuild" / f"bisect-{board}-{key.hexdigest()[:12]}"


def git(tree, *args, check=True) -> str:
    r = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise BisectError(f"git {' '.join(args)} in {tree} failed: {(r.stderr or r.stdout).strip()}")
    return r.stdout.strip()


def check_tree(tree: Path, good: str, bad: str) -> tuple[str, str, str]:
    """The tree can be bisected as it is -> (where it stands, to go back to; good and bad
    as commit ids, resolved once: a name like HEAD~2 moves with every checkout)."""
    if not (tree / ".git").exists():
        raise BisectInputError(f"{tree}: not a git work tree (--tree names a kernel source checkout)")
    if (tree / ".git" / "BISECT_START").exists():
        raise BisectInputError(f"{tree}: a bisect is already in progress there "
                          f"(`git -C {tree} bisect reset` ends it)")
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no")
    if dirty:
        raise BisectInputError(f"{tree}: uncommitted changes ({dirty.splitlines()[0].strip()} ...): "
                          f"commit or stash them first; a bisect checks out other revisions")
    for rev in (good, bad):
        if subprocess.run(["git", "-C", str(tree), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
                          capture_output=True).returncode != 0:
            raise BisectInputError(f"{tree}: no revision {rev!r}")
    if subprocess.run(["git", "-C", str(tree), "merge-base", "--is-ancestor", good, bad]).returncode:
        raise BisectInputError(f"{tree}: the good revision {good} is not an ancestor of the bad one {bad}")
    origin = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False) or git(tree, "rev-parse", "HEAD")
    return origin, git(tree, "rev-parse", f"{good}^{{commit}}"), git(tree, "rev-parse", f"{bad}^{{commit}}")


TREE_WAIT_S = 8 * 3600     # a bisect on a real board takes hours; a night's is over by morning
TREE_POLL_S = 5.0
TREE_SAY_S = 600           # a waiter says who holds the tree again every so often


def _holder(fd: int) -> str:
    return os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"


def _wait_for(fd: int, tree: Path, wait_s: float, say):
    """The flock on fd, waited for in turn up to wait_s (polled: flock itself has no
    deadline), saying who holds the tree when the wait begins and now and then after."""
    t0 = time.monotonic()
    said = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - t0
        if waited >= wait_s:
            raise BisectInputError(f"{tree}: still held after {waited:.0f} s by {_holder(fd)}; "
                                   f"not waiting longer (bisect a copy of the tree, or run again)")
        if said is None or waited - said >= TREE_SAY_S:
            say(f"{tree}: held by {_holder(fd)}; waiting for it (up to {wait_s:.0f} s)")
            said = waited
        time.sleep(min(TREE_POLL_S, wait_s - waited))


@contextlib.contextmanager
def tree_lock(tree: Path, what: str = "bisect", wait_s: float | None = None, say=None):
    """Hold the tree for one bisect or nightly build (an flock on .git/boardlab-bisect.lock,
    gone with its process): another one of the same tree waits its turn (up to wait_s,
    default TREE_WAIT_S) instead of moving the checkout under the first. The file holds
    the holder's pid and what it does, for the waiter to say."""
    path = Path(tree) / ".git" / "boardlab-bisect.lock"
    if not path.parent.is_dir():
        yield   # not a git work tree: check_tree says so
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        _wait_for(fd, Path(tree), TREE_WAIT_S if wait_s is None else wait_s, say or progress)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, {what} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        yield
    finally:
        os.close(fd)
