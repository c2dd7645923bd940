"""Vault Enterprise certificate metadata, emulated: role ``no_store_metadata``, ``cert_metadata`` on
issue/sign, ``cert-metadata/:serial`` and ``LIST cert-metadata``."""

from __future__ import annotations

import base64

import pytest
from ent_helpers import cert_of, make_csr

from pytest_schedpki.secrets.engines.pki.enterprise.cert_metadata import (
    store_cert_metadata,
    take_cert_metadata,
)
from pytest_schedpki.secrets.framework.fields import STRING, Field, FieldData
from pytest_schedpki.secrets.framework.logical import LogicalError
from pytest_schedpki.secrets.framework.router import LogicalRequest

ROLE_REFUSES = "cert_metadata cannot be stored: role nometa has no_store_metadata set to true"


def _issue(ent, body, role="meta"):
    return ent.post(f"pki/issue/{role}", {"common_name": "svc.example.com", **body})


# -- roles ------------------------------------------------------------------------------------------

def test_role_has_no_store_metadata_defaulting_to_false(ent):
    r = ent.post("pki/roles/new", {"allow_any_name": True})
    assert r.status_code == 200 and r.json()["warnings"] is None
    data = r.json()["data"]
    assert data["no_store_metadata"] is False and len(data) == 53
    assert ent.get("pki/roles/new").json()["data"]["no_store_metadata"] is False
    assert ent.get("pki/roles/nometa").json()["data"]["no_store_metadata"] is True


def test_role_write_replaces_and_patch_keeps_no_store_metadata(ent):
    patched = ent.call("PATCH", "pki/roles/nometa", {"ttl": "2h"},
                       headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200 and patched.json()["data"]["no_store_metadata"] is True
    rewritten = ent.post("pki/roles/nometa", {"allow_any_name": True})
    assert rewritten.json()["data"]["no_store_metadata"] is False


def test_role_no_store_metadata_type_is_checked(ent):
    r = ent.post("pki/roles/x", {"no_store_metadata": "maybe"})
    assert r.status_code == 400
    assert r.json() == {"errors": ['Field validation failed: error converting input for field "no_store_metadata": '
                                   "'' cannot parse value as 'bool': strconv.ParseBool: invalid syntax"]}


# -- storing and reading --------------------------------------------------------------------------

def test_issue_stores_metadata_readable_by_serial(ent):
    value = base64.b64encode(b"user-provided-metadata").decode()
    r = _issue(ent, {"cert_metadata": value})
    assert r.status_code == 200 and r.json()["warnings"] is None
    data = r.json()["data"]
    serial = data["serial_number"]
    cert = cert_of(data["certificate"])
    read = ent.get(f"pki/cert-metadata/{serial}")
    assert read.status_code == 200
    assert read.json()["data"] == {
        "cert_metadata": value, "issuer_id": ent.issuer("root-a").issuer_id, "role": "meta",
        "serial_number": serial,
        "expiration": cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    # hyphenated and upper-case serials find it too
    assert ent.get(f"pki/cert-metadata/{serial.replace(':', '-').upper()}").json()["data"] == read.json()["data"]
    assert ent.list("pki/cert-metadata").json()["data"] == {"keys": [serial]}


def test_sign_stores_metadata_with_the_path_issuer(ent):
    csr, _ = make_csr()
    r = ent.post("pki/issuer/root-b/sign/meta", {"csr": csr, "cert_metadata": "AAEC"})
    assert r.status_code == 200
    read = ent.get(f"pki/cert-metadata/{r.json()['data']['serial_number']}").json()["data"]
    assert read["cert_metadata"] == "AAEC" and read["issuer_id"] == ent.issuer("root-b").issuer_id


def test_empty_value_is_stored_and_read_without_the_field(ent):
    r = _issue(ent, {"cert_metadata": ""})
    serial = r.json()["data"]["serial_number"]
    data = ent.get(f"pki/cert-metadata/{serial}").json()["data"]
    assert sorted(data) == ["expiration", "issuer_id", "role", "serial_number"]


def test_nothing_is_stored_without_the_parameter(ent):
    r = _issue(ent, {})
    assert r.status_code == 200
    serial = r.json()["data"]["serial_number"]
    missing = ent.get(f"pki/cert-metadata/{serial}")
    assert (missing.status_code, missing.json()) == (404, {"errors": []})
    empty = ent.list("pki/cert-metadata")
    assert (empty.status_code, empty.json()) == (404, {"errors": []})


def test_metadata_is_kept_even_when_the_role_does_not_store_certificates(ent):
    r = _issue(ent, {"cert_metadata": "aGk="}, role="nostore")
    serial = r.json()["data"]["serial_number"]
    assert ent.get(f"pki/cert/{serial}").status_code == 404
    data = ent.get(f"pki/cert-metadata/{serial}").json()["data"]
    assert data["cert_metadata"] == "aGk=" and data["role"] == "nostore" and data["expiration"].endswith("Z")


def test_reset_forgets_metadata(ent):
    serial = _issue(ent, {"cert_metadata": "aGk="}).json()["data"]["serial_number"]
    ent.double.reset()
    assert ent.get(f"pki/cert-metadata/{serial}").status_code == 404


def test_cert_metadata_needs_a_token(ent):
    serial = _issue(ent, {"cert_metadata": "aGk="}).json()["data"]["serial_number"]
    r = ent.get(f"pki/cert-metadata/{serial}", token=None)
    assert (r.status_code, r.json()) == (403, {"errors": ["permission denied"]})


# -- refusals -----------------------------------------------------------------------------------------

def test_role_with_no_store_metadata_refuses_the_value(ent):
    before = dict(ent.backend.state.certs)
    r = _issue(ent, {"cert_metadata": "aGk="}, role="nometa")
    assert (r.status_code, r.json()) == (400, {"errors": [ROLE_REFUSES]})
    assert ent.backend.state.certs == before
    csr, _ = make_csr()
    r = ent.post("pki/sign/nometa", {"csr": csr, "cert_metadata": ""})
    assert (r.status_code, r.json()) == (400, {"errors": [ROLE_REFUSES]})


def test_role_refusal_comes_after_the_unknown_role(ent):
    r = ent.post("pki/issue/ghost", {"cert_metadata": "aGk="})
    assert (r.status_code, r.json()) == (400, {"errors": ["unknown role: ghost"]})


@pytest.mark.parametrize("value, index", [("not base64!", 3), ("aGk", 0), ("a=Gk", 1)])
def test_value_must_be_base64(ent, value, index):
    r = _issue(ent, {"cert_metadata": value})
    assert r.status_code == 400
    assert r.json() == {"errors": [f"cert_metadata must be base64 encoded: illegal base64 data at input byte {index}"]}


def test_non_string_value_is_a_field_error(ent):
    r = _issue(ent, {"cert_metadata": {"a": 1}})
    assert r.status_code == 400
    assert r.json()["errors"][0].startswith('Field validation failed: error converting input for field "cert_metadata"')


# -- the hook used by sign-verbatim -------------------------------------------------------------------

def _request(ent, raw, schema=None):
    schema = schema if schema is not None else {"cert_metadata": Field(STRING, "")}
    data = FieldData(dict(raw), schema)
    data.validate()
    return LogicalRequest(operation="update", path="sign-verbatim", data=data, mount=None,
                          service=ent.double.secrets, raw=dict(raw))


def test_sign_verbatim_without_role_refuses_the_value(ent):
    with pytest.raises(LogicalError) as caught:
        take_cert_metadata(ent.backend, _request(ent, {"cert_metadata": "aGk="}), None, "sign-verbatim")
    assert caught.value.status == 400
    assert caught.value.errors == ["cert_metadata cannot be stored: sign-verbatim needs a role "
                                   "(sign-verbatim/:role) whose no_store_metadata is false"]
    assert take_cert_metadata(ent.backend, _request(ent, {}), None, "sign-verbatim") is None


def test_hook_reads_the_raw_body_when_the_schema_lacks_the_field(ent):
    role = ent.backend.state.roles["meta"]
    request = _request(ent, {"cert_metadata": "aGk="}, schema={})
    assert take_cert_metadata(ent.backend, request, role, "sign-verbatim") == "aGk="
    store_cert_metadata(ent.backend, "0a:0b", "aGk=")
    assert ent.get("pki/cert-metadata/0a-0b").json()["data"] == {
        "cert_metadata": "aGk=", "expiration": "", "issuer_id": "", "role": "", "serial_number": "0a:0b"}


def test_hook_is_inert_when_off_or_for_external_policy(ent):
    role = ent.backend.state.roles["meta"]
    request = _request(ent, {"cert_metadata": "%%%"})
    assert take_cert_metadata(ent.backend, request, role, "external-policy") is None
    ent.double.secrets.enterprise = False
    assert take_cert_metadata(ent.backend, request, None, "sign-verbatim") is None
    with pytest.raises(ValueError):
        take_cert_metadata(ent.backend, request, role, "verbatim")


def test_hvac_client_round_trip(ent):
    import hvac

    client = hvac.Client(url=ent.double.secrets_url, token="root")
    value = base64.b64encode(b"owner=team-a").decode()
    issued = client.secrets.pki.generate_certificate(name="meta", common_name="hvac.example.com",
                                                     extra_params={"cert_metadata": value}, mount_point="pki")
    serial = issued["data"]["serial_number"]
    read = client.read(f"pki/cert-metadata/{serial}")
    assert read["data"]["cert_metadata"] == value and read["data"]["role"] == "meta"
    assert client.list("pki/cert-metadata")["data"]["keys"] == [serial]
    assert client.secrets.pki.read_role("nometa", mount_point="pki")["data"]["no_store_metadata"] is True


def test_sign_verbatim_over_http(ent):
    csr, _ = make_csr("verbatim.example.com")
    r = ent.post("pki/sign-verbatim/meta", {"csr": csr, "cert_metadata": "aGk="})
    assert r.status_code == 200, r.text
    data = ent.get(f"pki/cert-metadata/{r.json()['data']['serial_number']}").json()["data"]
    assert (data["cert_metadata"], data["role"]) == ("aGk=", "meta")
    refused = ent.post("pki/sign-verbatim", {"csr": csr, "cert_metadata": "aGk="})
    assert (refused.status_code, refused.json()) == (400, {"errors": [
        "cert_metadata cannot be stored: sign-verbatim needs a role (sign-verbatim/:role) whose "
        "no_store_metadata is false"]})
    assert ent.post("pki/sign-verbatim/nometa", {"csr": csr, "cert_metadata": "aGk="}).json() == {
        "errors": [ROLE_REFUSES]}
    ent.double.secrets.enterprise = False
    ignored = ent.post("pki/sign-verbatim", {"csr": csr, "cert_metadata": "aGk="})
    assert ignored.status_code == 200
    assert ignored.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [cert_metadata]"]
