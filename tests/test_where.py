"""Where the boot time went (boardlab.judge.bootspans): real boots of the test tree's
virtio-net msleep(300) commit and its parent, one each, judged span by span, and the
picture of both in a real browser."""
import pytest

from boardlab.judge import bootspans
from boardlab.ab import compare
from boardlab.measure import phases
from paths import ROOT

DATA = ROOT / "tests" / "data" / "phases"


def _spans(name):
    return phases.from_kernel_log((DATA / f"qemu-arm-virtio-sleep-{name}.kmsg").read_text().splitlines())


def _side(name):
    side = compare.Side(name, kernel=f"{name}.uImage", clock="deterministic")
    side.add_spans(_spans(name))
    return side


def _where(a, b):
    return bootspans.of_sides(a, b)


def test_one_boot_a_side_names_the_sleeping_initcall_and_explains_the_login_change():
    w = _where(_side("parent"), _side("culprit"))
    first = w.changed[0]
    assert first.key == "initcall.virtio_net_driver_init" and first.cmp.outcome == "regressed"
    assert first.cmp.method == "exact" and first.delta_s == pytest.approx(0.3176, abs=0.001)
    assert w.total.outcome == "regressed" and w.total_delta_s == pytest.approx(0.3173, abs=0.001)
    assert 0.95 <= w.explained_fraction <= 1.05
    assert [r.key for r in w.changed] == ["initcall.virtio_net_driver_init"]   # nothing else moved
    md = bootspans.markdown(w, "parent", "culprit")
    assert "| initcall.virtio_net_driver_init | initcall_debug | 5.389 (n=1) | 323.036 (n=1) | +317.647 ms" in md
    assert "100.1 % of the change explained" in md
    assert bootspans.leading_change(w).startswith("initcall.virtio_net_driver_init +317.647 ms (regressed")


def test_the_same_boot_on_both_sides_flags_nothing():
    w = _where(_side("parent"), _side("parent"))
    assert not w.changed and not w.unknown and w.total.outcome == "same"
    assert bootspans.leading_change(w).startswith("no span changed")


def test_an_initcall_of_one_kernel_only_counts_its_whole_time():
    a, b = _side("parent"), _side("culprit")
    b.span_boots[0]["initcall.new_driver_init"] = 0.004
    w = _where(a, b)
    new = next(r for r in w.changed if r.key == "initcall.new_driver_init")
    assert new.only == "B" and new.delta_s == pytest.approx(0.004)


def test_compare_writes_where_the_time_went_and_both_timelines(tmp_path):
    from browser import pixels_near, screenshot
    a, b = _side("parent"), _side("culprit")
    w = _where(a, b)
    files = compare.write(tmp_path, a, b, [], {"env": "lab/qemu-arm.yaml", "rounds": 1, "host": "h",
                                                "written": "now"}, w)
    html = files["html"].read_text()
    assert html.count('class="span changed" data-key="initcall.virtio_net_driver_init"') == 2
    assert "## Where the time went" in files["markdown"].read_text()
    # the picture alone, as a person sees it: B's changed bar is ~60 times A's
    svg = html[html.index("<svg"):html.index("</svg>") + 6]
    page = tmp_path / "timeline.html"
    page.write_text(f"<!doctype html><body style='margin:0'>{svg}")
    img = screenshot(page.as_uri(), tmp_path / "timeline.png", size=(1100, 700))
    red = (0xd6, 0x27, 0x28)
    half = img.height // 2
    top = pixels_near(img, red, box=(0, 0, img.width, 300))
    bottom = pixels_near(img, red, box=(0, 300, img.width, img.height))
    assert top > 10 and bottom > 20 * top, (top, bottom, half)


def test_an_old_kernels_console_spans_are_not_judged_against_a_new_kernels_log():
    from boardlab.boot.bootplan import milestone_patterns
    from boardlab.facts.board import load_board
    from boardlab.measure import console as con
    lines = con.parse_log((ROOT / "tests/data/scripted/sandpoint-2.6.11.7-initcall-debug.boot.log").read_text())
    old = phases.from_console(lines, con.find_milestones(lines, milestone_patterns(load_board("sandpoint"))))
    w = bootspans.compare_spans([phases.durations(old)], [phases.durations(_spans("parent"))], phases.sources(old),
                    phases.sources(_spans("parent")))
    assert w.not_compared.startswith("A's spans are timed by the console's arrival (host clock")
    assert "two clocks" in bootspans.markdown(w, "2.6.11.7", "6.1") and not w.changed
    assert bootspans.comparable(phases.sources(old), phases.sources(old)) is None
