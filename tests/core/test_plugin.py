"""The pytest plugin as a downstream suite uses it (run in a pytester sub-session)."""


def test_state_is_reset_before_each_test_and_urls_are_exposed(pytester):
    pytester.makepyfile(
        """
        import requests

        def test_a(schedpki):
            assert schedpki.secrets.url.startswith("http://127.0.0.1:")
            assert schedpki.scheduler.url.startswith("http://127.0.0.1:")
            assert schedpki.secrets.token == "root" and schedpki.scheduler.token == "root"
            r = requests.post(schedpki.secrets.url + "/v1/sys/mounts/leak", headers={"X-Vault-Token": "root"}, json={"type": "pki"})
            assert r.status_code == 204

        def test_b(schedpki):
            assert "leak/" not in schedpki.secrets.state.mounts
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_ini_seed_and_marker_seed(pytester):
    pytester.makefile(".yaml", base="secrets:\n  mounts:\n    - path: base\n")
    pytester.makeini("[pytest]\nschedpki_seed = base.yaml\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.schedpki(seed={"secrets": {"mounts": [{"path": "extra"}]}})
        def test_marked(schedpki):
            assert {"base/", "extra/"} <= set(schedpki.secrets.state.mounts)

        def test_unmarked(schedpki):
            assert "base/" in schedpki.secrets.state.mounts
            assert "extra/" not in schedpki.secrets.state.mounts
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_handler_exception_fails_the_test_at_teardown(pytester):
    pytester.makepyfile(
        """
        import requests

        def test_boom(schedpki, monkeypatch):
            from pytest_schedpki.secrets import sys as sysmod
            route = sysmod.SYS_ROUTER.match("seal-status")[0]
            def boom(req):
                raise RuntimeError("kaboom")
            monkeypatch.setitem(route.operations, "read", boom)
            r = requests.get(schedpki.secrets.url + "/v1/sys/seal-status")
            assert r.status_code == 500
            assert r.headers["Content-Type"] == "application/json"
            assert "kaboom" in r.json()["errors"][0]
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*exception(s) inside the schedpki double's request handlers*", "*RuntimeError: kaboom*"])
