"""The shortcuts of the secrets answer path give the bytes the plain path gives: an envelope around a
kept ``data_json`` text, the request id's text, the lazy header view, the journal's header reads."""

import json
import random
import uuid

import pytest
from werkzeug.datastructures import EnvironHeaders

from pytest_schedpki.secrets.engines.pki.issuance.roles import Role
from pytest_schedpki.secrets.framework import logical
from pytest_schedpki.secrets.framework.logical import LogicalResponse, dumps
from pytest_schedpki.secrets.http_headers import RequestHeaders, request_headers
from pytest_schedpki.wire.middleware import _EnvironHeaders

DATA = {"b": [1, "<&>"], "a": "x\u2028y", "c": None, "d": {"z": 1, "y": True}}

VARIANTS = [
    {},
    {"warnings": ["Endpoint ignored these unrecognized parameters: [x]"]},
    {"lease_id": "pki/issue/web/abc", "lease_duration": 3600},
    {"auth": {"client_token": "hvs.x", "policies": ["default"]}},
    {"status": 202},
    {"status": 202, "keeps_request_id": True},
    {"wrap_info": {"token": "t", "ttl": 60}},
    {"status": 404},
]


@pytest.mark.parametrize("variant", VARIANTS, ids=[",".join(v) or "plain" for v in VARIANTS])
def test_an_envelope_around_kept_data_text_is_the_envelope_dumps_gives(monkeypatch, variant):
    monkeypatch.setattr(logical, "_request_id", lambda: "5b1e7f7e-6c5b-4f7a-9d2e-0c3a1b2c3d4e")
    kept = dumps({k: DATA[k] for k in sorted(DATA)})
    plain = LogicalResponse(data=dict(DATA), **variant).to_response()
    spliced = LogicalResponse(data=dict(DATA), data_json=kept, **variant).to_response()
    assert spliced.get_data() == plain.get_data()
    assert spliced.status_code == plain.status_code
    assert list(spliced.headers.items()) == list(plain.headers.items())


def test_a_role_keeps_its_text_per_enterprise_flag_and_a_new_role_has_its_own():
    role = Role(name="web", allowed_domains=["example.com"], max_ttl=7200)
    for enterprise in (False, True, False):
        data, text = role.response_text(enterprise)
        assert data == role.to_response(enterprise)
        assert json.loads(text) == data
        assert text == dumps({k: data[k] for k in sorted(data)})
        assert ("no_store_metadata" in data) is enterprise
    data["allowed_domains"] = ["changed.example"]  # a caller's copy: the kept answer stays
    assert role.response_text(False)[0]["allowed_domains"] == ["example.com"]
    other = Role(name="web", allowed_domains=["other.example"])
    assert json.loads(other.response_text(False)[1])["allowed_domains"] == ["other.example"]


def test_request_ids_are_the_text_of_a_version_4_uuid_of_the_same_bits(monkeypatch):
    monkeypatch.setattr(logical, "_IDS", random.Random(7))
    ours = [logical._request_id() for _ in range(500)]
    bits = random.Random(7)
    assert ours == [str(uuid.UUID(int=bits.getrandbits(128), version=4)) for _ in range(500)]
    assert all(uuid.UUID(text).version == 4 and uuid.UUID(text).variant == uuid.RFC_4122 for text in ours)


ENVIRONS = [
    {"HTTP_X_VAULT_TOKEN": "root", "HTTP_HOST": "h", "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "2"},
    {"HTTP_AUTHORIZATION": "Bearer abc", "HTTP_CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": ""},
    {},
]


@pytest.mark.parametrize("environ", ENVIRONS)
def test_the_lazy_header_view_reads_as_the_header_dict(environ):
    view = RequestHeaders(environ)
    assert dict(view) == request_headers(environ) == dict(EnvironHeaders(environ).items())
    assert list(view.items()) == list(request_headers(environ).items())
    assert len(view) == len(request_headers(environ))
    assert view.get("X-Vault-Token") == environ.get("HTTP_X_VAULT_TOKEN")


@pytest.mark.parametrize("name", ["X-Vault-Token", "x-vault-token", "X_Vault_Token", "X-VAULT-TOKEN", "Authorization",
                                  "X-Secrets-Token", "Host", ""])
def test_the_journal_classifiers_get_is_its_lookup_or_the_default(name):
    environ = {"HTTP_X_VAULT_TOKEN": "root", "HTTP_AUTHORIZATION": "Bearer abc", "HTTP_HOST": "h"}
    headers = _EnvironHeaders(environ)
    try:
        expected = headers[name]
    except KeyError:
        expected = "default"
    assert headers.get(name, "default") == expected
