"""What a reader of a sweep gets: every metric as a series across the linux-source
versions (each version's samples an error bar, 6.1 and 6.12 on one axis), the change points
found by Otava and marked, looked at in a real browser."""
from boardlab.judge.results import RunResults
from boardlab.kernel import sweep

# guest login of the sweep as measured on qemu-arm (s, guest-deterministic clock)
LOGIN = {"6.1.170-3": 20.7131, "6.1.176-1": 20.7142, "6.1.187-1": 20.7139, "6.1.190-1": 20.7135,
         "6.1.192-1": 20.7140, "6.1.192-2": 20.7140, "6.12.107-1~deb12u1": 19.2601,
         "6.12.111-1~deb12u1": 19.2598, "6.12.117-1~deb12u1": 19.2602}


def a_sweep(tmp_path) -> dict:
    state = sweep._load(tmp_path / "sweep.json", list(LOGIN), "virt-nfs")
    for version, login in LOGIN.items():
        e = state[version]
        res = RunResults(tmp_path / e.name, baselines_root=tmp_path / "none")
        res.record("qemu-arm", e.name, "boot_time", "guest_login", login)
        res.record("qemu-arm", e.name, "boot_time", "login", login / 8)   # host clock: left out
        e.status, e.run_dir = "measured", str(tmp_path / e.name)
    return state


def test_the_series_runs_across_both_series_labelled_by_source_version(tmp_path):
    found = sweep.series(a_sweep(tmp_path))
    assert list(found) == [("boot_time/guest_login", "qemu-arm.virt-nfs.guest-deterministic")]
    labels = [v for v, _ in found[("boot_time/guest_login", "qemu-arm.virt-nfs.guest-deterministic")]]
    assert labels[4:7] == ["6.1.192-1", "6.1.192-2", "6.12.107-1"]   # both print release 6.1.192


def test_the_series_page_as_a_browser_shows_it(tmp_path):
    from browser import dom, pixels_near, screenshot
    page = sweep.series_page(tmp_path, a_sweep(tmp_path))
    text = dom(page.as_uri())
    assert "1 change point(s)" in text
    assert "<td>6.12.107-1</td><td>6.1.192-2</td><td>-7.02 %</td>" in text
    shot = screenshot(page.as_uri(), tmp_path / "series.png")
    assert pixels_near(shot, (204, 0, 0), 40) > 60, "no change-point line drawn"
