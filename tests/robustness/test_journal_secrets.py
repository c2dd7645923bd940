"""Issue 11, defect 5: secrets never reach the request journal (nor the access log), whatever the
encoding: JSON, form-urlencoded (any percent-encoding), invalid JSON (cut short, trailing garbage,
single quotes, unquoted values), PEM private keys (also cut short), query strings; responses
included (``auth.client_token`` of a token created with a chosen id)."""

from __future__ import annotations

import json
import logging
import urllib.parse

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st
from robust_helpers import RawClient, robust

from pytest_schedpki.journal import redact_body

SECRET = st.from_regex(r"Zq[A-Za-z0-9]{14,24}", fullmatch=True)
PEM_KINDS = st.sampled_from(["", "RSA ", "EC ", "ENCRYPTED "])

# (service, path, field, whether the value is a PEM private key)
TARGETS = [
    ("secrets", "/v1/auth/token/create", "id", False),
    ("secrets", "/v1/pki/config/ca", "pem_bundle", True),
    ("secrets", "/v1/pki/config/ca", "pem_bundle", False),
    ("secrets", "/v1/pki/intermediate/set-signed", "certificate", True),
    ("secrets", "/v1/sys/wrapping/unwrap", "token", False),
    ("secrets", "/v1/sys/wrapping/lookup", "token", False),
    ("scheduler", "/v1/acl/auth-method", "OIDCClientSecret", False),
    ("scheduler", "/v1/acl/auth-method", "PemKey", True),
]


def _pem(kind: str, secret: str, cut: bool) -> str:
    body = f"-----BEGIN {kind}PRIVATE KEY-----\nMIIB{secret}\n{secret[::-1]}AB==\n"
    return body if cut else body + f"-----END {kind}PRIVATE KEY-----\n"


def _percent_all(text: str) -> str:
    return "".join(f"%{b:02X}" for b in text.encode())


def _encode(encoding: str, field: str, value: str, cut_at: float) -> bytes:
    """The request body carrying ``field: value`` (plus an ordinary field) in ``encoding``."""
    fields = {field: value, "policies": "default"}
    dumped = json.dumps(fields)
    end_of_value = dumped.index(json.dumps(value)) + len(json.dumps(value)) - 1  # before the closing quote
    if encoding == "json":
        return dumped.encode()
    if encoding == "json-nested":  # the scheduler nests secrets under Config; secrets fields at any depth
        return json.dumps({"Name": "m", "Config": fields, "list": [fields]}).encode()
    if encoding == "form":
        return urllib.parse.urlencode(fields).encode()
    if encoding == "form-quote":
        return urllib.parse.urlencode(fields, quote_via=urllib.parse.quote).encode()
    if encoding == "form-percent-all":
        return "&".join(f"{_percent_all(k)}={_percent_all(v)}" for k, v in fields.items()).encode()
    if encoding == "json-cut":  # cut short anywhere after the secret
        return dumped[:end_of_value + int(cut_at * (len(dumped) - end_of_value))].encode()
    if encoding == "json-garbage":
        return (dumped + '}, "x"').encode()
    flat = value.replace("\n", "\\n")
    if encoding == "json-single-quotes":
        return ("{'" + field + "': '" + flat + "', 'policies': 'default'}").encode()
    if encoding == "json-unquoted":
        return ('{"' + field + '": ' + flat + ', "policies": "default"}').encode()
    raise AssertionError(encoding)


ENCODINGS = ["json", "json-nested", "form", "form-quote", "form-percent-all", "json-cut", "json-garbage",
             "json-single-quotes", "json-unquoted"]
CONTENT_TYPES = [None, "application/json", "application/x-www-form-urlencoded", "text/plain"]


def _leaks(text: str, secret: str) -> bool:
    decoded = urllib.parse.unquote_plus(text)
    return secret in text or secret in decoded or secret[::-1] in decoded


@pytest.fixture(scope="module")
def clients(double):
    double.secrets.enable_mount("pki", type="pki")
    secrets, scheduler = RawClient(double.secrets_url), RawClient(double.scheduler_url)
    yield {"secrets": secrets, "scheduler": scheduler}
    secrets.close()
    scheduler.close()


@robust(150)
@given(target=st.sampled_from(TARGETS), encoding=st.sampled_from(ENCODINGS), content_type=st.sampled_from(CONTENT_TYPES),
       secret=SECRET, kind=PEM_KINDS, cut=st.booleans(), cut_at=st.floats(0, 1), in_query=st.booleans())
def test_secrets_never_appear_in_the_journal(double, clients, target, encoding, content_type, secret, kind, cut,
                                             cut_at, in_query):
    service, path, field, pem = target
    value = _pem(kind, secret, cut) if pem else secret
    headers = {"X-Vault-Token": "root", "X-Nomad-Token": "root"}
    if content_type:
        headers["Content-Type"] = content_type
    double.journal.clear()
    if in_query:
        query = urllib.parse.urlencode({field: value, "policies": "default"})
        clients[service].request("GET" if service == "secrets" else "POST", f"{path}?{query}", headers)
    else:
        clients[service].request("POST", path, headers, _encode(encoding, field, value, cut_at))
    entries = double.journal.entries()
    assert len(entries) == 1
    recorded = json.dumps([{**e.__dict__, "time": None} for e in entries], default=str)
    assert not _leaks(recorded, secret), recorded
    control = requests.get(f"{double.secrets_url}/_schedpki/journal", timeout=30).text
    assert not _leaks(control, secret), control


def test_form_token_id_and_pem_bundle_are_redacted_as_the_issue_reported(double, clients):
    double.journal.clear()
    form = {"Content-Type": "application/x-www-form-urlencoded", "X-Vault-Token": "root"}
    reply = clients["secrets"].request("POST", "/v1/auth/token/create", form, b"id=FORMTOKEN123&policies=default")
    assert reply.status == 200 and json.loads(reply.body)["auth"]["client_token"] == "FORMTOKEN123"
    key = _pem("RSA ", "Zq0123456789abcdef", cut=False)
    clients["secrets"].request("POST", "/v1/pki/config/ca", form, urllib.parse.urlencode({"pem_bundle": key}).encode())
    clients["secrets"].request("POST", "/v1/pki/config/ca", {**form, "Content-Type": "application/json"},
                               b'{"pem_bundle": "' + key.replace("\n", "\\n").encode() + b'",')
    created, form_ca, bad_json = double.journal.entries()
    assert created.body == "id=<redacted>&policies=default" and created.response["auth"]["client_token"] == "<redacted>"
    assert form_ca.body == "pem_bundle=<redacted>"
    assert bad_json.body == '{"pem_bundle": "<redacted>",'


@pytest.mark.parametrize("raw, shown", [
    (b'{"id": "s1", "b": [1, {"token": "s2"}]}', {"id": "<redacted>", "b": [1, {"token": "<redacted>"}]}),
    (b"a=1&%69d=s1", "a=1&id=<redacted>"),
    (b'{"private_key": "-----BEGIN EC PRIVATE KEY-----\\nAAA', '{"private_key": "<redacted>"'),
    (b"junk -----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\n tail", "junk <redacted>\n tail"),
    (b"{'SecretID': 'abc', 'Name': 'x'}", "{'SecretID': \"<redacted>\", 'Name': 'x'}"),
    (b"not a secret at all", "not a secret at all"),
    (b"", None),
])
def test_redact_body_by_encoding(raw, shown):
    assert redact_body(raw) == shown


def test_access_log_lines_hide_secret_query_values(double, caplog):
    from pytest_schedpki import Double

    loud = Double().start(log_requests=True)
    try:
        with caplog.at_level(logging.INFO, logger="werkzeug"):
            requests.get(f"{loud.secrets_url}/v1/sys/wrapping/lookup?token=ZqLOGGED0001&x=1", timeout=30)
            pem = urllib.parse.quote(_pem("", "ZqLOGGED0002", cut=True))
            requests.get(f"{loud.secrets_url}/v1/sys/health?certificate={pem}", timeout=30)
    finally:
        loud.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "werkzeug"]
    assert any("/v1/sys/wrapping/lookup?token=<redacted>&x=1" in line for line in lines), lines
    assert any("/v1/sys/health?certificate=<redacted>" in line for line in lines), lines
    assert not [line for line in lines if "ZqLOGGED" in urllib.parse.unquote_plus(line)]
