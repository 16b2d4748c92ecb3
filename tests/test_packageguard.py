"""The guard on the package (tests/packageguard.py): a test that leaves a patch behind
fails the session at its own teardown, naming the module and the name."""
import os
import subprocess
import sys
import textwrap

from paths import ROOT


def _session(tmp_path, tests: str):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_leaves.py").write_text(textwrap.dedent(tests))
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "packageguard", "-p", "no:cacheprovider",
                           "-q", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_test_that_leaves_a_patch_fails_the_session_naming_it(tmp_path):
    r = _session(tmp_path, """
        from boardlab.boot import session

        def test_leaves_a_patch():
            session.board_session = lambda *a, **k: None    # no monkeypatch: never undone

        def test_after_it_sees_the_real_package():
            assert session.board_session.__module__ == "boardlab.boot.session"
    """)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "test_leaves_a_patch left the package changed" in r.stdout, r.stdout
    assert "boardlab.boot.session.board_session: is <function" in r.stdout, r.stdout
    assert "1 error" in r.stdout and "2 passed" in r.stdout, r.stdout   # put back for the next test


def test_a_module_imported_while_a_name_it_imports_is_patched_is_named(tmp_path):
    """The leak of tests/test_bad_input.py's no_board: compare imported for the first time
    inside the patch captures it, and monkeypatch restores the capture."""
    r = _session(tmp_path, """
        import sys
        from boardlab.boot import session

        def test_imports_inside_the_patch(monkeypatch):
            sys.modules.pop("boardlab.ab.compare", None)
            monkeypatch.setattr(session, "board_session", lambda *a, **k: None)
            from boardlab.ab import compare
            monkeypatch.setattr(compare, "board_session", lambda *a, **k: None)

        def test_after_it():
            from boardlab.ab import compare
            assert compare.board_session is session.board_session
    """)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "boardlab.ab.compare.board_session: imported while patched" in r.stdout, r.stdout
    assert "1 error" in r.stdout and "2 passed" in r.stdout, r.stdout


def test_a_module_replaced_in_sys_modules_is_named(tmp_path):
    r = _session(tmp_path, """
        import sys, types
        import boardlab.measure.catalogue

        def test_replaces_a_module():
            sys.modules["boardlab.measure.catalogue"] = types.ModuleType("boardlab.measure.catalogue")
    """)
    assert r.returncode == 1 and "boardlab.measure.catalogue: module replaced in sys.modules" in r.stdout, r.stdout


def test_a_test_that_cleans_up_passes(tmp_path):
    r = _session(tmp_path, """
        from boardlab.boot import session

        def test_patches_with_monkeypatch(monkeypatch):
            monkeypatch.setattr(session, "board_session", lambda *a, **k: None)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
