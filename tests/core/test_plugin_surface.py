"""Defects and rough edges a new user met in the plugin's surface: each test fails on the code
before its fix (SSO helpers over TLS, moving the marker's manual clock, relative seed paths, faults
that can never fire, ini mistakes, assertion tracebacks, journal methods, control index...)."""

import datetime

import pytest

from pytest_schedpki import Fault


def test_sso_helpers_trust_the_doubles_ca_over_tls(pytester):
    pytester.makeini("[pytest]\nschedpki_tls = true\n")
    pytester.makepyfile(
        """
        def test_jwt_and_oidc_logins_over_https(schedpki):
            assert schedpki.scheduler.url.startswith("https://")
            f = schedpki.factories.scheduler
            f.jwt_auth_method("ci", builtin_idp=True)
            f.binding_rule("ci", "management")
            assert schedpki.scheduler.login_jwt("ci", {"sub": "runner"})["Type"] == "management"
            assert schedpki.scheduler.login("ci", schedpki.scheduler.jwt("ci"))["Type"] == "management"
            method = f.oidc_auth_method("okta", builtin_idp=True)  # trusts the double's CA over TLS
            assert method["Config"]["DiscoveryCaPem"] == [open(schedpki.ca_path).read()]
            f.policy("eng")
            f.binding_rule("okta", "policy", "eng")
            token = schedpki.scheduler.oidc_login("okta", {"groups": ["eng"]})
            schedpki.scheduler.assert_token(token, policies=["eng"], type="client")
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)


@pytest.mark.schedpki(clock=datetime.datetime(2031, 1, 1, 12, 0))
def test_the_markers_manual_clock_moves_through_the_handle(schedpki):
    start = datetime.datetime(2031, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)
    assert schedpki.clock.now() == start
    schedpki.clock.advance(datetime.timedelta(hours=1))
    schedpki.clock.advance(30)
    assert schedpki.clock.now() == start + datetime.timedelta(hours=1, seconds=30)
    schedpki.clock.set(datetime.datetime(2032, 2, 2))
    assert schedpki.clock.now() == datetime.datetime(2032, 2, 2, tzinfo=datetime.timezone.utc)


def test_moving_a_follow_clock_says_how_to_switch(schedpki):
    with pytest.raises(RuntimeError, match=r"clock is 'follow': switch first with schedpki.use_clock\('manual'\)"):
        schedpki.clock.advance(5)


@pytest.mark.parametrize("kwargs, field, valid", [
    ({"service": "vault"}, "service", "'scheduler', 'secrets'"),
    ({"path": "v1/sys/health"}, "path", "starting with '/'"),
    ({"path": "^(unclosed"}, "path", "not a valid regex"),
    ({"method": "FETCH"}, "method", "GET, HEAD, POST, PUT"),
    ({"status": 500, "drop": True, "hang": True}, "drop", "status would never be sent"),
    ({"status": 42}, "status", "100-599"),
    ({"body": "boom"}, "body", "set status too"),
    ({"times": 0}, "times", ">= 1"),
    ({"probability": 0}, "probability", "0 < probability <= 1"),
    ({"latency": -1}, "latency", ">= 0"),
])
def test_a_fault_that_can_never_fire_is_refused_at_creation(kwargs, field, valid):
    with pytest.raises(ValueError, match=f"Fault {field}") as err:
        Fault(**kwargs)
    assert valid in str(err.value)


def test_the_control_endpoint_refuses_such_a_fault_with_400(schedpki):
    import requests

    r = requests.post(schedpki.secrets.url + "/_schedpki/faults", json={"path": "v1/sys/health", "status": 503})
    assert r.status_code == 400 and "Fault path must be a request path starting with '/'" in r.json()["error"]
    assert schedpki.faults.all() == []


def test_a_fault_no_request_matched_is_a_warning_at_teardown(pytester):
    pytester.makepyfile(
        """
        import requests
        from pytest_schedpki import Fault

        def test_unused(schedpki):
            schedpki.faults.add(Fault(service="secrets", path="/v1/sys/healthz", status=503))
            schedpki.faults.add(Fault(service="secrets", path="/v1/sys/health", status=500, probability=0.001, seed=1))
            requests.get(schedpki.secrets.url + "/v1/sys/health")
        """
    )
    result = pytester.runpytest("-W", "error::pytest_schedpki.faults.UnusedFaultWarning")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*UnusedFaultWarning: Fault(service='secrets', path='/v1/sys/healthz', status=503) "
                                 "matched no request of this test*"])
    assert "probability" not in result.stdout.str()  # it matched (the draw did not fire it): no warning


def test_handle_seed_resolves_a_relative_path_against_the_test_file(pytester):
    sub = pytester.mkpydir("sub")
    (sub / "extra.yaml").write_text("secrets:\n  mounts:\n    - path: extra\n")
    (sub / "test_seeded.py").write_text(
        "import pytest\n"
        "from pytest_schedpki import SeedError\n\n"
        "def test_seed(schedpki):\n"
        "    schedpki.seed('extra.yaml')\n"
        "    assert 'extra/' in schedpki.secrets.state.mounts\n\n"
        "def test_missing(schedpki, request):\n"
        "    with pytest.raises(SeedError) as err:\n"
        "        schedpki.seed('missing.yaml')\n"
        "    assert str(request.path.parent / 'missing.yaml') in str(err.value)\n"
    )
    result = pytester.runpytest("sub")  # run from the parent folder: the current directory has no extra.yaml
    result.assert_outcomes(passed=2)


def test_the_package_is_typed_and_names_its_public_classes_for_type_checkers():
    import ast
    import pathlib
    import re

    import pytest_schedpki

    root = pathlib.Path(pytest_schedpki.__file__).parent
    assert (root / "py.typed").exists()
    package_data = re.search(r"^pytest_schedpki = \[(.*)\]$", (root.parent / "pyproject.toml").read_text(), re.M)
    assert '"py.typed"' in package_data.group(1)  # [tool.setuptools.package-data]: shipped in the wheel
    tree = ast.parse((root / "__init__.py").read_text())
    typed = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.If)
             and "TYPE_CHECKING" in ast.unparse(node.test) for stmt in node.body for alias in stmt.names}
    eager = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert {"SchedpkiHandle", "LoginError", "Double", "IssuedCertificate"} <= typed
    assert set(pytest_schedpki.__all__) <= typed | eager  # a checker sees every exported name's real class
    from pytest_schedpki.handle import SchedpkiHandle
    from pytest_schedpki.sso_testing import LoginError

    assert (pytest_schedpki.SchedpkiHandle, pytest_schedpki.LoginError) == (SchedpkiHandle, LoginError)


def test_assertion_helpers_hide_their_own_frames_and_count_in_english(pytester):
    pytester.makepyfile(
        """
        import requests

        def test_missing_certificates(schedpki):
            schedpki.factories.secrets.root_issuer()
            schedpki.factories.secrets.role("web")
            requests.post(schedpki.secrets.url + "/v1/pki/issue/web", headers={"X-Vault-Token": "root"},
                          json={"common_name": "a.example.com"})
            schedpki.certs.assert_issued(count=2, common_name="a.example.com")

        def test_one_certificate(schedpki):
            schedpki.certs.assert_issued(count=1, common_name="b.example.com")

        def test_no_request(schedpki):
            schedpki.journal.assert_request_made("GET", "/v1/sys/health")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "E *AssertionError: expected 2 certificates matching {'common_name': 'a.example.com'}; found 1",
        "E *AssertionError: expected 1 certificate matching {'common_name': 'b.example.com'}; found 0",
        "E *the mounts hold 0 certificates",
        "E *AssertionError: expected at least 1 request GET /v1/sys/health, found 0",
    ])
    assert "near miss" not in out  # the one match is not listed again as a near miss
    for helper_line in ("found = self.find(**criteria)", "raise AssertionError", "wanted = ", "lines = ["):
        assert helper_line not in out  # the helpers' own source is not printed before the message
    assert "certificate(s)" not in out and "request(s)" not in out


def test_verify_chain_accepts_a_serial_number(schedpki):
    import requests

    schedpki.factories.secrets.root_issuer()
    schedpki.factories.secrets.role("web")
    issued = requests.post(schedpki.secrets.url + "/v1/pki/issue/web", headers={"X-Vault-Token": "root"},
                           json={"common_name": "a.example.com"}).json()["data"]
    serial = issued["serial_number"]  # colon hex, as Vault writes it
    assert ":" in serial
    for spelling in (serial, serial.replace(":", ""), serial.replace(":", "").upper()):
        chain = schedpki.certs.verify_chain(spelling)
        assert [c.subject.rfc4514_string() for c in chain] == ["CN=a.example.com", "CN=schedpki Test Root CA"]
    assert schedpki.certs.find(serial_number=serial.replace(":", "").upper())[0].serial_number == serial
    with pytest.raises(AssertionError, match="no certificate with serial '0a:0b' in the PKI mounts"):
        schedpki.certs.verify_chain("0a:0b")
    with pytest.raises(AssertionError, match="neither a PEM certificate nor a serial number"):
        schedpki.certs.verify_chain("not a serial")


def test_the_journal_matches_put_and_post_as_the_same_write(schedpki):
    import hvac
    import requests

    url, root = schedpki.secrets.url, {"X-Vault-Token": "root"}
    hvac.Client(url=url, token="root").sys.enable_secrets_engine("kv", path="kv1")  # hvac writes with POST
    requests.put(url + "/v1/kv1/app", headers=root, json={"a": "1"})  # as `bao write` / `bao kv put` send it
    requests.post(url + "/v1/kv1/app", headers=root, json={"a": "2"})
    assert [e.method for e in schedpki.journal.find(path="/v1/kv1/app")] == ["PUT", "POST"]  # kept literally
    assert len(schedpki.journal.assert_request_made("POST", "/v1/kv1/app", count=2)) == 2
    assert len(schedpki.journal.assert_request_made("put", "/v1/kv1/app", count=2)) == 2
    schedpki.journal.assert_request_made("PUT", "/v1/sys/mounts/kv1", count=1)
    schedpki.journal.assert_no_request("GET", "/v1/kv1/app")
    # Nomad's ACL write endpoints accept PUT and POST alike (command/agent/acl_endpoint.go)
    body = {"Name": "x", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"JWKSURL": "https://idp.example.com/jwks", "BoundAudiences": ["nomad"]}}
    assert requests.put(schedpki.scheduler.url + "/v1/acl/auth-method", headers=schedpki.scheduler.headers(),
                        json=body).status_code == 200
    schedpki.journal.assert_request_made("POST", "/v1/acl/auth-method", service="scheduler", count=1)


@pytest.mark.parametrize("ini, message", [
    ("schedpki_tsl = true", "ERROR: unknown ini option 'schedpki_tsl': did you mean 'schedpki_tls'? "
                            "(pytest-schedpki's options: schedpki_bootstrap, *)"),
    ("schedpki_frobnicate = 1", "ERROR: unknown ini option 'schedpki_frobnicate' (pytest-schedpki's options: *"),
    ("schedpki_tls = yes please", "ERROR: ini option schedpki_tls must be true or false (also yes/no, on/off, 1/0), "
                                  "got 'yes please'"),
    ("schedpki_journal_max_entries = lots", "ERROR: ini option schedpki_journal_max_entries must be a whole number "
                                            ">= 0, got 'lots'"),
    ("schedpki_rsa_key_pool = -1", "ERROR: ini option schedpki_rsa_key_pool must be a whole number >= 0, got -1"),
])
def test_an_ini_mistake_stops_the_session_once_at_start(pytester, ini, message):
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_a(schedpki):\n    pass\n\ndef test_b(schedpki):\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert result.stderr.str().count("ERROR:") == 1 and "test_a" not in result.stdout.str()


def test_get_control_root_lists_the_endpoints_behind_the_same_guards(schedpki):
    import requests

    from pytest_schedpki import Double

    listed = requests.get(schedpki.secrets.url + "/_schedpki/")
    assert listed.status_code == 200 and listed.headers["Content-Type"] == "application/json"
    endpoints = {e["path"]: e for e in listed.json()["endpoints"]}
    assert {"/_schedpki/reset", "/_schedpki/seed", "/_schedpki/clock", "/_schedpki/faults", "/_schedpki/journal",
            "/_schedpki/oidc/users", "/_schedpki/keypool"} <= set(endpoints)
    assert endpoints["/_schedpki/faults"]["methods"] == ["GET", "POST", "DELETE"]
    assert all(set(e) == {"methods", "path", "body", "effect"} for e in endpoints.values())
    assert requests.get(schedpki.scheduler.url + "/_schedpki/").json() == listed.json()
    guarded = Double(control_token="ctl-secret").start()
    try:
        refused = requests.get(guarded.secrets_url + "/_schedpki/")
        assert refused.status_code == 403
        allowed = requests.get(guarded.secrets_url + "/_schedpki/", headers={"X-Schedpki-Control-Token": "ctl-secret"})
        assert allowed.json() == listed.json()
    finally:
        guarded.stop()


def test_log_requests_lines_carry_the_token_kind_and_the_duration(caplog):
    import logging
    import re

    import requests

    from pytest_schedpki import Double

    double = Double(management_token="mgmt-SECRET-1", root_token="root-SECRET-2").start(log_requests=True)
    try:
        with caplog.at_level(logging.INFO, logger="werkzeug"):
            v, s = double.secrets_url, double.scheduler_url
            requests.get(v + "/v1/sys/health")
            child = requests.post(v + "/v1/auth/token/create", headers={"X-Vault-Token": "root-SECRET-2"},
                                  json={"policies": ["default"]}).json()["auth"]["client_token"]
            requests.get(v + "/v1/auth/token/lookup-self", headers={"X-Vault-Token": child})
            requests.get(v + "/v1/sys/mounts", headers={"X-Vault-Token": "bogus-SECRET-3"})
            requests.get(s + "/v1/acl/auth-methods", headers={"X-Nomad-Token": "mgmt-SECRET-1"})
            requests.get(s + "/v1/acl/auth-methods")
    finally:
        double.stop()
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", r.getMessage())  # werkzeug colours 4xx lines
             for r in caplog.records if r.name == "werkzeug" and '"' in r.getMessage()]
    kinds = [re.search(r'"(\w+) (\S+) HTTP/1.1" (\d+) - token=(\w+) \d+\.\dms$', line).groups() for line in lines]
    assert kinds == [("GET", "/v1/sys/health", "200", "none"), ("POST", "/v1/auth/token/create", "200", "root"),
                     ("GET", "/v1/auth/token/lookup-self", "200", "service"), ("GET", "/v1/sys/mounts", "403", "invalid"),
                     ("GET", "/v1/acl/auth-methods", "200", "management"), ("GET", "/v1/acl/auth-methods", "200", "none")]
    assert not any(secret in "\n".join(lines) for secret in ("SECRET", child))


def test_the_help_texts_and_the_banner_name_the_whole_scope(pytester):
    import subprocess
    import sys

    from pytest_schedpki import cli

    for args in ([], ["serve", "--help"]):
        text = subprocess.run([sys.executable, "-m", "pytest_schedpki.cli", *args], capture_output=True, text=True,
                              timeout=30).stdout
        for scope in ("ACL auth methods, binding rules, policies, roles, tokens, JWT/OIDC login",
                      "PKI, KV v1/v2, AppRole, token store, policies", "GET /_schedpki/ lists them"):
            assert scope in text, (args, scope)
    proc = subprocess.Popen([sys.executable, "-m", "pytest_schedpki.cli", "serve", "--no-seed", "--scheduler-port", "0",
                             "--secrets-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = [proc.stdout.readline().rstrip("\n") for _ in range(2)]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert banner[0].startswith(f"schedpki: scheduler ({cli.SCHEDULER_SCOPE}) on http://127.0.0.1:")
    assert banner[1].startswith(f"schedpki: secrets ({cli.SECRETS_SCOPE}) on http://127.0.0.1:")
    help_text = pytester.runpytest("--help").stdout.str()
    main, upstream = help_text.index("pytest-schedpki: test double"), help_text.index("pytest-schedpki upstream mode")
    assert main < help_text.index("--schedpki-transport") < upstream < help_text.index("--schedpki-upstream=")


def test_a_pki_role_factory_without_its_mount_names_the_mount_and_how_to_make_it(schedpki):
    from pytest_schedpki.secrets.framework.logical import LogicalError

    with pytest.raises(LogicalError) as err:
        schedpki.factories.secrets.role("web", mount="pki_missing")
    assert err.value.status == 404
    assert err.value.errors == [
        'no handler for route "pki_missing/roles/web": there is no mount at pki_missing/ - create it first with '
        "schedpki.factories.secrets.mount('pki_missing') (or .root_issuer(mount='pki_missing'), which also makes "
        "a root CA), or a seed's secrets.mounts entry"]
    schedpki.factories.secrets.mount("pki_missing")
    assert schedpki.factories.secrets.role("web", mount="pki_missing")["allowed_domains"] == ["example.com"]
