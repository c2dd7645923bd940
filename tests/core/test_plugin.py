"""The pytest plugin as a downstream suite uses it (run in a pytester sub-session)."""

# Imported here so pytester's in-process runs share one copy: its sys.modules snapshot drops what an inner
# run imported, and a second inner run re-imported requests beside the first's cookie classes
# ("ValueError: You can only merge into CookieJar" when this file ran alone, without xdist)
import requests  # noqa: F401


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
            from pytest_schedpki.secrets.system import routes as sysmod
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


TLS_EXAMPLE = '''
import requests


def test_https(schedpki):
    assert schedpki.secrets.url.startswith("https://127.0.0.1:")
    r = requests.get(f"{schedpki.secrets.url}/v1/sys/health", verify=schedpki.ca_path)
    assert r.status_code == 200
'''


def test_tls_ini_option_serves_https_with_the_ca_exposed(pytester):
    pytester.makeini("[pytest]\nschedpki_tls = true\n")
    pytester.makepyfile(TLS_EXAMPLE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)


def test_examples_pass_under_xdist_with_a_server_per_worker(pytester):
    """The downstream-style examples/ suite under `-n 2`: each worker has its own double on its own
    ports, and no state leaks between workers or tests."""
    import pathlib
    import shutil

    root = pathlib.Path(__file__).resolve().parents[2]
    shutil.copytree(root / "examples", pytester.path / "examples")
    shutil.copytree(root / "fixtures", pytester.path / "fixtures")
    pytester.makepyfile(test_ports="""
        import os

        def test_port_a(schedpki):
            with open(os.path.join(os.environ["PORTS_DIR"], os.environ.get("PYTEST_XDIST_WORKER", "main")), "a") as fh:
                fh.write(schedpki.secrets.url + " " + schedpki.scheduler.url + "\\n")
            schedpki.factories.secrets.mount("leak")

        def test_port_b(schedpki):
            assert "leak/" not in schedpki.secrets.state.mounts
            with open(os.path.join(os.environ["PORTS_DIR"], os.environ.get("PYTEST_XDIST_WORKER", "main")), "a") as fh:
                fh.write(schedpki.secrets.url + " " + schedpki.scheduler.url + "\\n")
    """)
    ports = pytester.path / "ports"
    ports.mkdir()
    import os

    os.environ["PORTS_DIR"] = str(ports)
    try:
        result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly", "--dist", "load")
    finally:
        del os.environ["PORTS_DIR"]
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 18 and not outcomes.get("failed") and not outcomes.get("errors"), result.stdout.str()[-3000:]
    seen = {f.name: set(f.read_text().split("\n")) - {""} for f in ports.iterdir()}
    urls = [line for lines in seen.values() for line in lines]
    per_worker = {name: {u for line in lines for u in line.split()} for name, lines in seen.items()}
    if len(per_worker) == 2:  # both workers ran a port test: their servers must differ
        a, b = per_worker.values()
        assert not (a & b), f"workers shared a listener: {per_worker}"
    assert urls


def test_stopping_the_double_closes_both_listeners_and_reports_a_listener_that_failed_to_stop():
    import socket

    import pytest

    from pytest_schedpki.double import Double

    def refused(url: str) -> bool:
        host, port = url.rsplit("/", 1)[1].rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except ConnectionRefusedError:
            return True
        return False

    double = Double().start()
    double.route_in_process()
    urls = [double.scheduler_url, double.secrets_url]
    threads = [double.scheduler_server._thread, double.secrets_server._thread]  # this double's accept loops
    double.stop()
    double.stop()  # idempotent
    assert [refused(url) for url in urls] == [True, True]
    assert [t.is_alive() for t in threads] == [False, False]

    double = Double().start()
    urls = [double.scheduler_url, double.secrets_url]
    stop_secrets = double.secrets_server.stop

    def failing_stop():
        stop_secrets()
        raise OSError("listener failed to stop")

    double.secrets_server.stop = failing_stop
    with pytest.raises(OSError, match="listener failed to stop"):
        double.stop()
    assert [refused(url) for url in urls] == [True, True]
