"""apt's answers are kept until apt's lists change (boardlab.images.aptanswers)."""
import os

from boardlab.images import aptanswers


def asker(replies):
    calls = []

    def ask():
        calls.append(1)
        return replies[len(calls) - 1]
    return ask, calls


def test_an_answer_is_asked_once_while_apts_lists_stay_as_they_are(tmp_path):
    store = tmp_path / "answers.json"
    ask, calls = asker(["1:1.35.0-4+deb12u1", "never"])
    for _ in range(3):
        assert aptanswers.answer("showsrc busybox", ask, store=store, state="s1") == "1:1.35.0-4+deb12u1"
    assert len(calls) == 1


def test_new_lists_ask_again(tmp_path):
    store = tmp_path / "answers.json"
    ask, calls = asker(["2.4-1", "2.5-1"])
    assert aptanswers.answer("showsrc rt-tests", ask, store=store, state="s1") == "2.4-1"
    assert aptanswers.answer("showsrc rt-tests", ask, store=store, state="s2") == "2.5-1"
    assert len(calls) == 2


def test_a_refusal_is_kept_and_a_download_is_not(tmp_path):
    store = tmp_path / "answers.json"
    refused, r_calls = asker(["apt-get source lmbench=3 failed: E: 404", "never"])
    came, c_calls = asker(["", ""])
    for _ in range(2):
        assert aptanswers.answer("source lmbench", refused, keep=bool, store=store, state="s") \
            == "apt-get source lmbench=3 failed: E: 404"
        assert aptanswers.answer("source busybox", came, keep=bool, store=store, state="s") == ""
    assert (len(r_calls), len(c_calls)) == (1, 2)


def test_apts_state_follows_its_files_without_reading_them(tmp_path):
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "deb.debian.org_InRelease").write_text("a")
    paths = (lists, tmp_path / "sources.list")
    first = aptanswers.apt_state(paths)
    assert aptanswers.apt_state(paths) == first
    os.utime(lists / "deb.debian.org_InRelease", ns=(1, 2))     # apt-get update
    second = aptanswers.apt_state(paths)
    (tmp_path / "sources.list").write_text("deb-src x\n")        # a new sources file
    assert len({first, second, aptanswers.apt_state(paths)}) == 3


def test_a_broken_store_is_asked_again(tmp_path):
    store = tmp_path / "answers.json"
    store.write_text("{not json")
    ask, calls = asker(["x"])
    assert aptanswers.answer("q", ask, store=store, state="s") == "x"
    assert len(calls) == 1
