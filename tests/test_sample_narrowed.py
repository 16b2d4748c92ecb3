"""A boot's sample narrowed to some figures of a family (`compare --families
lmbench:lat_udp_us`): only the runs that give them, as a bisect of one figure runs."""
from types import SimpleNamespace

import pytest

from boardlab.measure import sample


def test_a_family_or_some_of_its_figures():
    assert sample.narrowed(["memory", "lmbench:lat_udp_us+lat_pipe_us"]) == {
        "memory": None, "lmbench": ("lmbench.lat_udp_us", "lmbench.lat_pipe_us")}


def test_one_sample_asks_each_family_for_what_was_wanted_memory_first(monkeypatch):
    asked = []
    monkeypatch.setattr(sample, "family", lambda name, sh, rec, metric=None, **kw: asked.append((name, metric)) or {})
    strategy = SimpleNamespace(reboot=lambda: "rec", board=SimpleNamespace(ram_mb=128, isa="armhf"))
    sample.one_sample(strategy, lambda: "sh", ["lmbench:lat_udp_us", "memory"])
    assert asked == [("memory", None), ("lmbench", ("lmbench.lat_udp_us",))]


def test_compare_refuses_an_unknown_family_before_any_boot():
    from boardlab.ab import compare
    from boardlab.errors import InputError
    with pytest.raises(InputError, match="unknown family nosuch"):
        compare.compare("lab/qemu-arm.yaml", ["a", "b"], families=("nosuch:x",))
