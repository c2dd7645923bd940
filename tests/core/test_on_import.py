"""process/on_import.py: a callback when a module is first imported, without importing it."""

import sys

from pytest_schedpki.process.on_import import when_imported


def test_the_callback_runs_after_the_first_import_once_and_a_cancelled_watch_runs_nothing(tmp_path, monkeypatch):
    (tmp_path / "schedpki_watched_a.py").write_text("VALUE = 1\n")
    (tmp_path / "schedpki_watched_b.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    when_imported("schedpki_watched_a", lambda module: seen.append((module.__name__, module.VALUE)))
    cancel = when_imported("schedpki_watched_b", lambda module: seen.append(module.__name__))
    try:
        assert seen == [] and "schedpki_watched_a" not in sys.modules  # nothing imported by watching
        cancel()
        import schedpki_watched_a  # noqa: F401
        import schedpki_watched_b  # noqa: F401

        assert seen == [("schedpki_watched_a", 1)]
        watched = [getattr(f, "name", None) for f in sys.meta_path if type(f).__name__ == "_Watch"]
        assert "schedpki_watched_a" not in watched and "schedpki_watched_b" not in watched  # gone once used or cancelled
        # the loader is left as it was: a reload runs no callback
        import importlib

        importlib.reload(sys.modules["schedpki_watched_a"])
        assert seen == [("schedpki_watched_a", 1)]
        when_imported("schedpki_watched_b", lambda module: seen.append(module.__name__))  # already imported: now
        assert seen == [("schedpki_watched_a", 1), "schedpki_watched_b"]
    finally:
        for name in ("schedpki_watched_a", "schedpki_watched_b"):
            sys.modules.pop(name, None)
