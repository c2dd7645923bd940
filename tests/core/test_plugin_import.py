"""What pytest imports with the plugin: pytest loads ``pytest_schedpki.plugin`` (its ``pytest11`` entry
point) in every run of a project that has the package installed, whether a test uses the double or not.
The module registers options, markers and fixtures; the double (werkzeug, both services,
cryptography) is imported by the fixtures that start it. Structural checks over ``sys.modules`` in a
fresh interpreter, not timings."""

import json
import os
import subprocess
import sys

HEAVY = ("pytest_schedpki.double", "pytest_schedpki.handle", "pytest_schedpki.scheduler", "pytest_schedpki.secrets",
         "pytest_schedpki.wire", "werkzeug", "cryptography", "yaml", "requests", "ssl")


def _run(code: str, cwd: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                         cwd=cwd, env=env)
    return out.stdout.strip().splitlines()[-1]


def test_importing_the_plugin_leaves_the_double_werkzeug_and_cryptography_unimported():
    code = ("import sys, pytest; before = set(sys.modules); import pytest_schedpki.plugin; "
            f"print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in {HEAVY!r} "
            f"or any(m == h or m.startswith(h + '.') for h in {HEAVY!r})))")
    assert _run(code) == "[]"


def test_a_session_whose_tests_do_not_use_the_double_never_imports_it(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    (tmp_path / "conftest.py").write_text(
        "import sys\n\n"
        "def pytest_sessionfinish(session):\n"
        "    print('SEEN', sorted(m for m in ('pytest_schedpki.double', 'werkzeug') if m in sys.modules))\n")
    code = ("import pytest, sys; rc = pytest.main(['-q', '-s', '-p', 'no:cacheprovider', "
            "'test_plain.py']); print('RC', int(rc))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=env).stdout
    assert "RC 0" in out, out
    assert "SEEN []" in out, out


def test_the_fixtures_still_import_and_start_the_double(pytester):
    pytester.makepyfile(
        """
        import sys

        def test_uses_it(schedpki):
            assert "pytest_schedpki.double" in sys.modules
            assert schedpki.secrets.url.startswith("http://127.0.0.1:")
        """
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def test_the_handle_makes_its_inspectors_and_factories_on_first_use(pytester):
    # the handle is built for every test; most tests use only its URLs and tokens
    lazy = ("pytest_schedpki.acme.inspect", "pytest_schedpki.factories", "pytest_schedpki.testing",
            "pytest_schedpki.secrets.kv_inspection")
    pytester.makepyfile(
        f"""
        import sys

        def test_urls_only(schedpki):
            assert schedpki.secrets.url.startswith("http://127.0.0.1:")
            assert [m for m in {lazy!r} if m in sys.modules] == []
            assert "pytest_schedpki.wire.tls" not in sys.modules  # HTTPS listeners only

        def test_then_each_on_first_use(schedpki):
            assert schedpki.certs.all() == [] and schedpki.kv is schedpki.kv and schedpki.acme.accounts() == []
            schedpki.factories.secrets.mount("pki")
            assert [m for m in {lazy!r} if m not in sys.modules] == []
        """
    )
    pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_the_seed_module_imports_the_services_only_to_seed_them():
    code = ("import sys; import pytest_schedpki.seed; "
            "print(sorted(m for m in sys.modules if m.startswith(('pytest_schedpki.scheduler', "
            "'pytest_schedpki.secrets'))))")
    assert _run(code) == "[]"


def test_the_double_starts_with_the_collector_paused_and_gives_it_back_as_the_user_had_it(pytester):
    # the plugin may pause automatic garbage collection while it imports and builds the double, and must
    # leave the user's process as it was: enabled or not, thresholds, nothing frozen
    pytester.makeconftest(
        """
        import gc

        import pytest

        seen = []

        def pytest_configure(config):
            gc.set_threshold(1234, 5, 6)
            if config.getoption("--disabled-gc", False):
                gc.disable()

        def pytest_addoption(parser):
            parser.addoption("--disabled-gc", action="store_true")

        @pytest.hookimpl(wrapper=True)
        def pytest_fixture_setup(fixturedef, request):
            state = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
            try:
                return (yield)
            finally:
                if fixturedef.argname == "schedpki_double":
                    seen.append(state)
        """
    )
    pytester.makepyfile(
        """
        import gc

        from conftest import seen

        def test_uses_it(schedpki, request):
            enabled = not request.config.getoption("--disabled-gc")
            [before] = seen
            assert before == (enabled, (1234, 5, 6), 0)
            assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
        """
    )
    pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "--disabled-gc").assert_outcomes(
        passed=1)


def test_a_pki_mount_imports_its_acme_handlers_and_pyjwt_on_its_first_acme_request():
    code = """
import json, sys, urllib.error, urllib.request
from pytest_schedpki import Double
double = Double(rsa_key_pool=0).start()
double.seed({"secrets": {"mounts": [{"path": "pki", "issuers": [{"common_name": "Root", "key_type": "ec"}],
                                     "roles": [{"name": "web", "allow_any_name": True, "key_type": "ec"}]}]}})
def call(method, path, body=None):
    req = urllib.request.Request(double.secrets_url + path, method=method, headers={"X-Vault-Token": "root"},
                                 data=json.dumps(body).encode() if body else None)
    try:
        with urllib.request.urlopen(req) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return [error.code, error.read().decode()]
lazy = ("jwt", "pytest_schedpki.secrets.engines.pki.acme.pipeline", "pytest_schedpki.secrets.engines.pki.acme.jws",
        "pytest_schedpki.secrets.engines.pki.acme.state")
issued = call("POST", "/v1/pki/issue/web", {"common_name": "a.example.com", "ttl": "1h"})
before = [m for m in lazy if m in sys.modules]
configured = [call("POST", "/v1/pki/config/cluster", {"path": "http://127.0.0.1/v1/pki"}),
              call("POST", "/v1/pki/config/acme", {"enabled": True})]
directory = call("GET", "/v1/pki/acme/directory")
after = [m for m in lazy if m in sys.modules]
double.stop()
print(json.dumps([issued, before, configured, directory, after]))
"""
    assert _run(code) == json.dumps([200, [], [200, 200], 200, ["jwt", "pytest_schedpki.secrets.engines.pki.acme.pipeline",
                                                     "pytest_schedpki.secrets.engines.pki.acme.jws",
                                                     "pytest_schedpki.secrets.engines.pki.acme.state"]])
