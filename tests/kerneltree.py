"""A kernel tree with a history, for the bisect tests and bench/bisect.py: Debian's
linux-source-6.1 as a git repository, then 18 commits of ordinary changes (comments in
files the virt-nfs kernel builds, a README fix) among which three cause a real
regression in the kernel:

  size     a 96 KiB lookup table and a 96 KiB back buffer in init/main.c: three sizes at
           once (size puts the table in data on ARM: data +98304 bytes, the buffer in bss:
           bss +98304, vmlinux +4.8 %; text +0), free memory -192 KiB
  boot     virtio-net's initcall sleeps 300 ms and a 128 KiB settle log joins its bss:
           three metrics on two clocks at once (guest_freeing_init and guest_login later
           on the board's clock, vmlinux bss +131072 bytes, no clock)
  syscall  getppid() walks the parent chain up to init: lmbench's lat_syscall null slower

Made once under BOARDLAB_CACHE (a stamp holds the recipe's digest; fixed authors and
dates make the same commits every time); nothing is downloaded."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from boardlab.kernelbuilds.buildenv import CACHE_DIR
from boardlab.kernelbuilds.kbuild import SOURCE_TARBALL

TREE = CACHE_DIR / "bisect-demo" / "linux-source-6.1"


@dataclass(frozen=True)
class Change:
    subject: str
    path: str
    old: str | None     # replaced by new (it must occur exactly once); None: new goes after line 1
    new: str
    culprit: str | None = None   # the regression it causes: size, boot, syscall
    also: tuple = ()             # more (old, new) replacements in the same file, each once


def _comment(subject, path, note) -> Change:
    return Change(subject, path, None, f"/* {note} */\n")


SIZE_TABLE = """static int kernel_init(void *);

/*
 * Console character map for early boot, precomputed so that no code has to build it
 * before the console is up.
 */
const u32 early_console_charmap[24576] = { [0 ... 24575] = 0x20202020 };
u32 early_console_backbuffer[24576];	/* drawn into before the console is up */
"""
SETTLE_LOG = ("static __init int virtio_net_driver_init(void)\n",
              "u8 virtnet_settle_log[131072];\t/* what the link said while it settled */\n\n"
              "static __init int virtio_net_driver_init(void)\n")
BOOT_DELAY = """	msleep(300);	/* let the host side of the link settle before probing */
	ret = register_virtio_driver(&virtio_net_driver);
"""
GETPPID = """SYSCALL_DEFINE0(getppid)
{
	int pid;

	rcu_read_lock();
	pid = task_tgid_vnr(rcu_dereference(current->real_parent));
"""
GETPPID_WALK = """SYSCALL_DEFINE0(getppid)
{
	struct task_struct *p;
	int pid, depth = 0;

	rcu_read_lock();
	/* a sanity check: the parent chain must reach init */
	for (p = current; p != &init_task && depth < 64; p = rcu_dereference(p->real_parent))
		depth++;
	WARN_ON_ONCE(depth == 64);
	pid = task_tgid_vnr(rcu_dereference(current->real_parent));
"""

CHANGES = (
    Change("README: say where the admin guide is", "README",
           "be rendered in a number of formats, like HTML and PDF.",
           "be rendered in a number of formats, like HTML and PDF (the admin guide is\n"
           "Documentation/admin-guide/)."),
    _comment("printk: note why the console lock is taken early", "kernel/printk/printk.c",
             "the console lock is taken before the first console registers"),
    _comment("proc/meminfo: name the unit of every line", "fs/proc/meminfo.c", "every figure is in kB"),
    _comment("fork: say what copy_process leaves to the caller", "kernel/fork.c",
             "copy_process() leaves waking the child to its caller"),
    Change("init: a precomputed early console character map", "init/main.c",
           "static int kernel_init(void *);\n", SIZE_TABLE, culprit="size"),
    _comment("mm/page_alloc: note the zone order", "mm/page_alloc.c", "zones are walked high to low"),
    _comment("lib/string: note which functions arches override", "lib/string.c",
             "architectures may override any of these with __HAVE_ARCH_*"),
    _comment("exec: note the point of no return", "fs/exec.c",
             "after begin_new_exec() there is no way back to the old image"),
    _comment("timekeeping: say which clock is the reference", "kernel/time/timekeeping.c",
             "CLOCK_MONOTONIC is the reference of every other clock here"),
    Change("virtio_net: give the link time to settle before probing", "drivers/net/virtio_net.c",
           "\tret = register_virtio_driver(&virtio_net_driver);\n", BOOT_DELAY, culprit="boot",
           also=(SETTLE_LOG,)),
    _comment("ipconfig: note the fallback when DHCP stays silent", "net/ipv4/ipconfig.c",
             "a silent DHCP server leaves the static ip= settings in force"),
    _comment("nfs/super: note the mount option precedence", "fs/nfs/super.c",
             "options given later on the command line win"),
    _comment("panic: note that panic=0 waits for ever", "kernel/panic.c",
             "panic=0 means wait for ever, not reboot at once"),
    _comment("exit: note who reaps an orphan", "kernel/exit.c",
             "orphans are reaped by the child subreaper or by init"),
    Change("sys: check the parent chain in getppid", "kernel/sys.c", GETPPID, GETPPID_WALK,
           culprit="syscall"),
    _comment("read_write: note the short read rule", "fs/read_write.c",
             "a short read is not an error; callers loop"),
    _comment("sched/core: note the rq lock order", "kernel/sched/core.c", "rq locks are taken in address order"),
    _comment("init: note when initcalls run", "init/main.c", "initcalls run in level order, then link order"),
)


@dataclass(frozen=True)
class Tree:
    path: Path
    base: str                    # Debian's source as it is: good for every metric
    head: str                    # all changes: bad for each culprit's metric
    culprits: dict               # size / boot / syscall -> commit
    commits: int


def _git(tree: Path, *args, when: int = 0) -> str:
    stamp = f"@{1767225600 + when * 3600} +0000"      # 2026-01-01, an hour a commit
    env = {**os.environ, "GIT_AUTHOR_NAME": "Kernel Developer", "GIT_AUTHOR_EMAIL": "dev@example.org",
           "GIT_COMMITTER_NAME": "Kernel Developer", "GIT_COMMITTER_EMAIL": "dev@example.org",
           "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    return subprocess.run(["git", "-C", str(tree), "-c", "gc.auto=0", *args], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _apply(tree: Path, change: Change):
    path = tree / change.path
    text = path.read_text()
    if change.old is None:
        first, rest = text.split("\n", 1)
        text = f"{first}\n{change.new}{rest}"
    edits = ([] if change.old is None else [(change.old, change.new)]) + list(change.also)
    for old, new in edits:
        if text.count(old) != 1:
            raise RuntimeError(f"{change.path}: the text to change occurs {text.count(old)} "
                               f"times, not once (another linux-source-6.1?): {old[:60]!r}")
        text = text.replace(old, new)
    path.write_text(text)


def _digest() -> str:
    recipe = repr((SOURCE_TARBALL.stat().st_size, CHANGES)).encode()
    return hashlib.sha256(recipe).hexdigest()[:16]


def make_tree(dest: Path = TREE) -> Tree:
    """The tree, made if it is not there with this recipe; reset to its head."""
    stamp = dest / ".git" / "boardlab-recipe"
    if not (stamp.exists() and stamp.read_text() == _digest()):
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xf", str(SOURCE_TARBALL), "-C", str(dest.parent)], check=True)
        ignore = dest / ".gitignore"   # Debian's last lines ignore everything at the top level
        ignore.write_text(ignore.read_text().split("# Debian packaging")[0].rstrip("#\n") + "\n")
        _git(dest, "init", "-q", "-b", "master")
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "Linux 6.1 as Debian's linux-source-6.1 ships it")
        _git(dest, "tag", "base")
        for n, change in enumerate(CHANGES, 1):
            _apply(dest, change)
            _git(dest, "commit", "-q", "-a", "-m", change.subject, when=n)
        stamp.write_text(_digest())
    if (dest / ".git" / "BISECT_START").exists():
        _git(dest, "bisect", "reset")
    _git(dest, "checkout", "-q", "-f", "master")
    log = _git(dest, "log", "--format=%H %s", "base..master").splitlines()
    by_subject = {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in log}
    culprits = {c.culprit: by_subject[c.subject] for c in CHANGES if c.culprit}
    return Tree(dest, _git(dest, "rev-parse", "base"), _git(dest, "rev-parse", "master"),
                culprits, len(log))
