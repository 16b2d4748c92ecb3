"""The lab's history: runs become SQUAD test runs (one per board, kernel and clock, all
samples kept), queued on disk first, sent once; SQUAD itself brought up and down by PID."""
import json
import os
import re
import shutil
import socket
import urllib.request

import pytest

from boardlab.facts.board import load_board
from boardlab.history import submit
from boardlab.history.server import HistoryServer
from boardlab.judge.results import RunResults
from boardlab.measure import clocks


def a_run(tmp_path):
    """A run as the suites record it: boot times on the board's clock and the host's, memory."""
    board = load_board("qemu-arm")
    res = RunResults(tmp_path / "run")
    res.record(board, "armmp", "boot_time", "guest_login", 4.93, samples=[4.93, 4.93, 4.94])
    res.record(board, "armmp", "boot_time", "login", 7.1, samples=[7.0, 7.1, 7.3])
    res.record(board, "armmp", "memory", "mem_eat_kb", 88832)
    (tmp_path / "run" / "console").mkdir(exist_ok=True)
    (tmp_path / "run" / "console" / "boot-qemu-arm-armmp-ramdisk-001.log").write_text("U-Boot\n")
    return tmp_path / "run"


def test_a_run_is_one_submission_per_board_kernel_and_clock(tmp_path):
    run = a_run(tmp_path)
    subs = {s.environment: s for s in submit.submissions(run)}
    host = clocks.this_host()["id"]
    # a series per board, kernel flavour and clock (and host, for a host-bound clock)
    assert set(subs) == {"qemu-arm.armmp.guest-deterministic", f"qemu-arm.armmp.host.{host}", "qemu-arm.armmp.none"}
    guest = subs["qemu-arm.armmp.guest-deterministic"]
    assert guest.build == "armmp"
    assert guest.metrics == {"boot_time/guest_login": {"value": [4.93, 4.93, 4.94], "unit": "s"}}
    assert guest.tests["boot_time/guest_login"] in ("pass", "skip")
    assert guest.metadata["run_dir"] == str(run.resolve()) and guest.metadata["clock"] == "guest-deterministic"
    assert guest.attachments and guest.attachments[0].endswith("boot-qemu-arm-armmp-ramdisk-001.log")
    copied = tmp_path / "elsewhere"
    shutil.copytree(run, copied)
    assert sorted(s.job_id for s in submit.submissions(copied)) == sorted(s.job_id for s in subs.values())


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, r.read()


@pytest.mark.vlab   # a daemon of its own: SQUAD's web server
def test_pytest_and_lava_runs_land_once_and_wait_in_the_queue_while_squad_is_down(tmp_path, monkeypatch, capsys):
    run = a_run(tmp_path)
    monkeypatch.setattr("boardlab.history.server.DATA_ROOT", tmp_path / "history")
    server = HistoryServer("vlab", port=_free_port(), data=tmp_path / "history" / "vlab")
    try:
        server.up()
        assert server.is_up()
        server.down()      # down: the run waits in the queue
        submit.enqueue(server, run)
        assert submit.flush(server, progress=lambda *_: None) == (0, 0, 3)
        server.up()
        assert submit.flush(server, progress=lambda *_: None) == (3, 0, 0)
        submit.enqueue(server, run)     # the same run again: SQUAD has it
        assert submit.flush(server, progress=lambda *_: None) == (0, 3, 0)
        base = server.url
        builds = json.loads(_get(f"{base}/api/builds/?version=armmp")[1])["results"]
        assert len(builds) == 1
        status = json.loads(_get(f"{base}/api/builds/{builds[0]['id']}/status/")[1])
        assert status["test_runs_total"] == 3
        metrics = json.loads(_get(f"{base}/api/builds/{builds[0]['id']}/metrics/")[1])["results"]
        login = next(m for m in metrics if m["name"] == "boot_time/guest_login")
        assert login["measurement_list"] == [4.93, 4.93, 4.94]
        for page in ("/", "/boardlab/vlab/", "/boardlab/vlab/build/armmp/", "/static/jquery.js"):
            assert _get(base + page)[0] == 200, page     # the web UI, its assets served here
        # as the main job lands its run: options before the run, the series beside its report
        from boardlab.cli import main
        capsys.readouterr()
        assert main(["history", "submit", "--if-kept", "--lab", "vlab", str(run)]) == 0
        assert "3 there already" in capsys.readouterr().out
        assert (run / "history" / "history.html").exists()
        # a LAVA job's results (a real job's log, as `boardlab lava results` reads it) land too
        from boardlab.lava import logs as lava_logs
        from paths import DATA
        lava_logs.results_from_log(lava_logs.read_log((DATA / "lava" / "qemu-arm-armmp-memory-jitter.job.log")
                                                      .read_text()), load_board("qemu-arm"), "armmp",
                                   tmp_path / "lava-run", "captured")
        assert "test runs added" in submit.land(tmp_path / "lava-run", "vlab", progress=lambda *_: None)
        runs = json.loads(_get(f"{base}/api/builds/{builds[0]['id']}/testruns/")[1])["results"]
        assert {json.loads(_get(r["metadata_file"])[1]).get("harness") for r in runs} == {"pytest", "lava"}
        # a kernel named by its identity is a build SQUAD takes (its names allow [A-Za-z0-9_.-])
        named = RunResults(tmp_path / "named")
        named.record(load_board("qemu-arm"), "virt-nfs-6.12.117-1~deb12u1", "memory", "mem_eat_kb", 108736,
                     identity={"release": "6.12.117", "source_version": "linux-source-6.12 6.12.117-1~deb12u1",
                               "config_sha256": "cd" * 32, "compiler": "gcc 12", "flavour": "virt-nfs-6.12"})
        assert "1 test runs added" in submit.land(tmp_path / "named", "vlab", progress=lambda *_: None)
        # for KernelCI: the history as KCIDB JSON, checked by kcidb-io's schema
        assert main(["history", "export", "--kcidb", "--out", str(tmp_path / "k.json")]) == 0
        assert "valid KCIDB v5" in capsys.readouterr().out
        doc = json.loads((tmp_path / "k.json").read_text())
        login = next(t for t in doc["tests"] if t["path"] == "boardlab.boot_time.guest_login")
        assert login["number"] == {"value": pytest.approx(4.9333, abs=1e-4), "unit": "s"}
        assert login["misc"]["samples"] == [4.93, 4.93, 4.94]
        assert login["environment"]["misc"]["clock"] == "guest-deterministic"
        assert login["environment"]["misc"]["flavour"] == "armmp"
        assert {b["architecture"] for b in doc["builds"]} == {"arm"}
    finally:
        server.down()
    assert not server.is_up()


def series_run(tmp_path, n, login_s):
    """Build n of a nightly series: kernel k<n>, the board's login time on its own clock."""
    res = RunResults(tmp_path / f"night-{n:02d}")
    res.meta["started"] = f"2026-11-{n + 1:02d}T02:15:00+0000"
    res.record(load_board("qemu-arm"), f"k{n:02d}", "boot_time", "guest_login", login_s,
               samples=[login_s, login_s])
    res.record(load_board("qemu-arm"), f"k{n:02d}", "memory", "mem_eat_kb", 88832)
    return tmp_path / f"night-{n:02d}"


@pytest.mark.vlab   # a daemon of its own: SQUAD's web server
def test_a_step_in_the_series_is_a_change_point_at_its_build(tmp_path):
    """12 nightly builds, the login 1 % slower from k08 on (a deterministic figure: a 0.5 %
    step must be seen): one change point, at k08; the flat memory figure has none."""
    from boardlab.history import changes
    server = HistoryServer("vlab", port=_free_port(), data=tmp_path / "history")
    try:
        server.up()
        for n in range(12):
            login = 4.930 * (1.01 if n >= 8 else 1.0) + (n % 3) * 0.0002
            submit.enqueue(server, series_run(tmp_path, n, login))
        assert submit.flush(server, progress=lambda *_: None)[0] == 24
        # what a night is judged against: the nights before it, newest first
        recent = changes.recent_samples(server, "qemu-arm", not_build="k11")
        assert [b for b, _, _ in recent["boot_time.guest_login"]][:3] == ["k10", "k09", "k08"]
        _, samples, env = recent["boot_time.guest_login"][0]
        assert samples == pytest.approx([4.930 * 1.01 + 0.0002] * 2) and env == "qemu-arm.guest-deterministic"
        points = changes.find(server, board="qemu-arm")
        assert [(c.metric, c.environment, c.build, c.before) for c in points] == [
            ("boot_time/guest_login", "qemu-arm.guest-deterministic", "k08", "k07")]
        c = points[0]
        assert 0.9 < c.change_pct < 1.1 and c.interval_pct[0] > 0.5 and c.pvalue < 0.001
        assert changes.annotate(server, points) == 1
        assert changes.annotate(server, points) == 0       # noted once
        from boardlab.history import notes
        assert changes.notes(server) == {"k08": [notes.POINTER]}   # SQUAD: a pointer to the page
        # what the bisect found: kept whole beside watched.json, shown on the page
        notes.keep(server.data, notes.key(c), {"change": c.line(), "state": "done",
                                               "note": f"first bad commit {'ab' * 6} 'net: sleep' (bisect x)"})
        look_at_the_pictures(server, tmp_path)
    finally:
        server.down()


def look_at_the_pictures(server, tmp_path):
    """The history page and SQUAD's own chart, rendered by a real browser: the change
    point's line and its culprit are on the page, its note on SQUAD's chart."""
    from boardlab.history import charts
    from browser import dom, pixels_near, screenshot
    page = charts.page(server, tmp_path / "page")
    text = dom(page.as_uri())
    assert "1 change point(s)" in text and "first bad commit abababababab 'net: sleep'" in text
    assert text.count("<img") == 2                                  # login and memory series
    shot = screenshot(page.as_uri(), tmp_path / "history.png")
    assert pixels_near(shot, (204, 0, 0), 40) > 60, "no change-point line drawn"   # charts.CHANGE_COLOUR
    metric = "boot_time/guest_login"
    url = (f"{server.url}/boardlab/{server.project}/metrics/?environment=qemu-arm.guest-deterministic"
           f"&metric={metric}&range_{metric}=0,100")
    def panel(text):
        return f">{metric}<" in text.replace(" ", "")

    def note(img):   # SQUAD draws a build's note as a vertical line with a label on rgba(51,122,183,0.5)
        return pixels_near(img, (153, 188, 219), 12) > 500

    assert panel(dom(url, until=panel)), "SQUAD's page shows no chart panel"
    assert note(screenshot(url, tmp_path / "squad.png", until=note)), "SQUAD's chart shows no note"


def nightly_builds(tree) -> list:
    """The test kernel tree's nights: its base, every second commit, its head."""
    import subprocess
    revs = subprocess.run(["git", "-C", str(tree.path), "rev-list", "--reverse", f"{tree.base}..{tree.head}"],
                          capture_output=True, text=True, check=True).stdout.split()
    return [tree.base] + revs[1::2] + ([tree.head] if revs[-1] != tree.head else [])


@pytest.mark.slow
@pytest.mark.vlab   # SQUAD, and builds in the lab host's shared kernel tree
def test_the_nightly_size_series_bisects_itself_to_the_culprit(tmp_path, monkeypatch):
    """Nightly builds of the test kernel tree, every second commit (each a build named by
    its revision, its sizes submitted): the size change point is found between two
    nightly builds, and `watch` bisects between them to the commit that added the table."""
    from boardlab.bisect.nightly import nightly
    from boardlab.bisect.watch import watch
    from kerneltree import make_tree
    tree = make_tree()
    nights = nightly_builds(tree)
    monkeypatch.setattr("boardlab.history.server.DATA_ROOT", tmp_path / "no-lab-history")
    server = HistoryServer("vlab", port=_free_port(), data=tmp_path / "history")
    try:
        server.up()
        for n, rev in enumerate(nights):   # `boardlab nightly`, the build's sizes alone
            run = nightly(tree.path, rev, "qemu-arm", families=(), out=tmp_path / f"night-{n:02d}")
            submit.enqueue(server, run)
        submit.flush(server, progress=lambda *_: None)
        done = watch(server, tree.path, board="qemu-arm", metric="build.vmlinux_dec_bytes",
                     progress=lambda *_: None)
        assert len(done) == 1 and done[0]["first_bad"], done
        assert done[0]["first_bad"]["rev"] == tree.culprits["size"]
        # the table reverted on the bad night: built again, the size back within the floor
        assert done[0]["revert"] == "confirmed by revert", open(done[0]["report"]).read()
        assert watch(server, tree.path, board="qemu-arm", metric="build.vmlinux_dec_bytes",
                     progress=lambda *_: None) == []     # bisected once
    finally:
        server.down()


@pytest.mark.slow
@pytest.mark.vlab   # SQUAD, and builds in the lab host's shared kernel tree
def test_one_commit_moving_three_sizes_is_one_bisect_and_every_note_lasts(tmp_path, monkeypatch):
    """The nightly loop on a tree where one commit (a table and a buffer) moves three sizes
    at once (data, bss, vmlinux): one bisect for all of them, each metric named at the culprit, one report,
    confirmed by revert; then ten more nights and mornings (`nightly`, `history changes`,
    `watch`): every change point's note still whole on the page's record."""
    from boardlab.bisect import run
    from boardlab.bisect.nightly import nightly
    from boardlab.bisect.watch import watch
    from boardlab.history import changes, notes
    from kerneltree import make_tree
    tree = make_tree()
    nights = nightly_builds(tree)
    monkeypatch.setattr("boardlab.history.server.DATA_ROOT", tmp_path / "no-lab-history")
    server = HistoryServer("vlab", port=_free_port(), data=tmp_path / "history")
    try:
        server.up()
        for n, rev in enumerate(nights):
            submit.enqueue(server, nightly(tree.path, rev, "qemu-arm", families=(), boots=1,
                                           out=tmp_path / f"night-{n:02d}"))
        submit.flush(server, progress=lambda *_: None)
        bisects = []
        done = watch(server, tree.path, board="qemu-arm", progress=lambda *_: None,
                     bisect=lambda *a, **k: bisects.append(a[3]) or run.start(*a, **k))
        moved = [e for e in done if e.get("first_bad")]
        assert len(bisects) == 1 and len(moved) >= 3, (bisects, [e["result"] for e in done])
        assert {e["first_bad"]["rev"] for e in moved} == {tree.culprits["size"]}
        named = moved[0]["first_bad"]["metrics"]
        assert len(named) >= 3 and all(v["verdict"] == "regressed" for v in named.values()), named
        assert {e["report"] for e in moved} == {moved[0]["report"]}           # one report
        assert moved[0]["revert"] == "confirmed by revert", open(moved[0]["report"]).read()
        first = {k: r["note"] for k, r in notes.read(server.data).items()}
        for n in range(10):   # ten more nights at the head, and each morning's look
            submit.enqueue(server, nightly(tree.path, tree.head, "qemu-arm", families=(), boots=1,
                                           out=tmp_path / f"later-{n:02d}"))
            submit.flush(server, progress=lambda *_: None)
            changes.annotate(server, changes.find(server, board="qemu-arm"))
            assert watch(server, tree.path, board="qemu-arm", progress=lambda *_: None) == []
        kept = {k: r["note"] for k, r in notes.read(server.data).items()}
        assert all(kept.get(k) == note for k, note in first.items()), (first, kept)
        print(f"notes after ten more nights: {len(kept)}, longest {max(map(len, kept.values()))} chars")
    finally:
        server.down()


def test_an_export_kcidb_refuses_is_named_by_its_field():
    from boardlab.history import kcidb
    from boardlab.history.server import HistoryError
    doc = {"version": {"major": 5, "minor": 3},
           "tests": [{"id": "boardlab:vlab:x", "build_id": "boardlab:vlab:b", "origin": "boardlab",
                      "path": "boot time!"}]}
    with pytest.raises(HistoryError, match=r"tests/0/path: 'boot time!' does not match"):
        kcidb.validate(doc)
    doc["tests"][0]["path"] = "boardlab.boot_time.guest_login"
    assert kcidb.validate(doc).startswith("v5")


@pytest.mark.vlab   # PostgreSQL (the host's cluster) and SQUAD's web server
def test_the_history_can_keep_its_database_in_the_lava_servers_postgresql(tmp_path):
    """`history up --db postgresql`: SQUAD's database in the host's PostgreSQL cluster; the
    cluster is started if it was down, shared (another user of it keeps it running when
    the history goes down) and stopped by its last user; the data dir remembers the choice."""
    from boardlab.services import postgres
    from boardlab.errors import InputError
    was = postgres.status()
    lab = f"pgtest{os.getpid()}"
    server = HistoryServer(lab, port=_free_port(), data=tmp_path / "history", db="postgresql")
    try:
        server.up()
        assert postgres.status() == "online"
        submit.enqueue(server, a_run(tmp_path))
        assert submit.flush(server, progress=lambda *_: None) == (3, 0, 0)
        builds = json.loads(_get(f"{server.url}/api/builds/?version=armmp")[1])["results"]
        assert len(builds) == 1
        assert postgres.psql("SELECT count(*) FROM core_build", database=server.pg_name) == "1"
        with pytest.raises(InputError, match="keeps its data in postgresql"):
            HistoryServer(lab, data=tmp_path / "history", db="sqlite")
        postgres.up("another-user", echo=lambda *_: None)     # e.g. the LAVA server
        server.down()
        assert postgres.status() == "online"                  # still in use
        postgres.down("another-user", echo=lambda *_: None)
        assert postgres.status() == was                       # stopped by its last user, if the lab started it
    finally:
        server.down()
        postgres.down("another-user", echo=lambda *_: None)
        if postgres.status() == "online":
            postgres.drop_database(server.pg_name, server.pg_name)
        else:
            postgres.up("cleanup", echo=lambda *_: None)
            postgres.drop_database(server.pg_name, server.pg_name)
            postgres.down("cleanup", echo=lambda *_: None)


def test_a_kernel_is_a_build_by_its_identity_in_a_series_of_its_flavour(tmp_path):
    ident = {"release": "6.1.192", "source_version": "linux-source-6.1 6.1.190-1", "config_sha256": "ab" * 32,
             "compiler": "arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0", "flavour": "virt-nfs"}
    res = RunResults(tmp_path / "run")
    res.record(load_board("qemu-arm"), "virt-nfs-6.1.190-1", "memory", "mem_eat_kb", 90000, identity=ident)
    sub, = submit.submissions(tmp_path / "run")
    assert sub.environment == "qemu-arm.virt-nfs.none"          # beside the pinned virt-nfs, not armmp
    assert re.fullmatch(r"6\.1\.192_[0-9a-f]{8}", sub.build)   # SQUAD's names: [A-Za-z0-9][A-Za-z0-9_.-]*
    assert sub.metadata["kernel_source_version"] == "linux-source-6.1 6.1.190-1"
    assert submit.parse_environment("qemu-arm.armmp.host.vm-1") == {
        "board": "qemu-arm", "flavour": "armmp", "clock": "host", "host": "vm-1"}
    assert submit.parse_environment("qemu-arm.guest-deterministic")["flavour"] == ""


def test_secrets_are_private_from_the_start_and_never_in_arguments(tmp_path, monkeypatch):
    """The history's secret key and database password are 0600 when they are created (no
    moment under the default umask); a password given to psql goes on its standard input,
    not its arguments (which `ps` shows); the lab host's /run is reached through a private
    directory of an unpredictable name."""
    import stat
    import subprocess
    from pathlib import Path

    from boardlab.services import postgres
    from boardlab.services import daemons
    server = HistoryServer("vlab", port=_free_port(), data=tmp_path / "h")
    (tmp_path / "h").mkdir()
    created = []
    real_replace = os.replace

    def watching(src, dst):   # the file's mode at the moment it appears under its name
        created.append(stat.S_IMODE(os.stat(src).st_mode))
        real_replace(src, dst)
    monkeypatch.setattr(os, "replace", watching)
    secret = server._secret("pgpassword")
    assert created == [0o600] and stat.S_IMODE((tmp_path / "h" / "pgpassword").stat().st_mode) == 0o600
    seen = []
    monkeypatch.setattr(postgres.subprocess, "run",
                        lambda argv, **kw: seen.append((argv, kw.get("input"))) or
                        subprocess.CompletedProcess(argv, 0, "", ""))
    postgres.ensure_database("squad_x", "squad_x", secret)
    assert seen and all(secret not in " ".join(argv) for argv, _ in seen)
    assert any(secret in (given or "") for _, given in seen)
    prefix = " ".join(daemons.private_run(Path("/run/boardlab/vlab")))
    assert "/tmp/boardlab-run-" not in prefix and "mktemp -d" in prefix and 'rmdir "$keep"' in prefix


def test_a_change_point_is_searched_from_the_metric_s_floor_not_under_it():
    """Memory change points were searched from 0.25 %, under free_used's 64 kB floor: they
    started bisects that ended 'did not regress' (issue 'Answers without holes')."""
    from boardlab.history import changes, submit
    env = submit.environment("qemu-arm", "armmp", "none")
    assert changes.min_step(env, "memory/free_used_kb", 4096.0) == pytest.approx(64 / 4096)
    assert changes.min_step(env, "memory/free_used_kb", 1e6) == changes.MIN_STEP["deterministic"]
    assert changes.min_step(env) == changes.MIN_STEP["deterministic"]     # not a catalogue metric: the clock's
    det = submit.environment("qemu-arm", "armmp", "guest-deterministic")
    assert changes.min_step(det, "lmbench/lat_pipe_us", 14.0) == pytest.approx(0.03)   # lmbench's 3 % floor
