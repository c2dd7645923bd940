"""``external-policy/{issue,sign,sign-intermediate}(/:policy)`` and their ``issuer/:ref`` variants with a
Python policy service (Vault Enterprise CIEPS, emulated)."""

from __future__ import annotations

import base64
import datetime
import time
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtensionOID, NameOID, SignatureAlgorithmOID
from ent_helpers import cert_of, cn_of, make_csr, simple_policy

from pytest_schedpki.secrets.engines.pki.enterprise.external_policy import (
    KEY_MISMATCH,
    NO_CERTIFICATE,
    NO_ISSUER_REF,
    set_external_policy,
)
from pytest_schedpki.secrets.engines.pki.enterprise.external_policy_client import certificate_template
from pytest_schedpki.secrets.engines.pki.model import serial_to_hex


def _plug(ent, service):
    set_external_policy(ent.backend, service)


def _verify_signed_by(cert, issuer_cert):
    cert.verify_directly_issued_by(issuer_cert)


# -- issue -------------------------------------------------------------------------------------------

def test_issue_sends_the_documented_request_and_signs_the_template(ent):
    seen = []
    _plug(ent, simple_policy(warnings=["result from test policy"], seen=seen))
    r = ent.post("pki/external-policy/issue/web-policy", {"common_name": "svc.example.com", "key_type": "ec",
                                                          "key_bits": 384, "extra": {"k": [1, True]}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["warnings"] == ["result from test policy",
                                "Endpoint ignored these unrecognized parameters: [common_name extra]"]
    assert (body["lease_id"], body["lease_duration"]) == ("", 0)
    request = seen[0]
    assert sorted(request) == ["request_uuid", "request_version", "synchronous", "user_request_key_values",
                               "vault_request_values"]
    assert request["request_version"] == 1 and request["synchronous"] is True
    uuid.UUID(request["request_uuid"])
    user = request["user_request_key_values"]
    assert {k: v for k, v in user.items() if k != "csr"} == {
        "common_name": "svc.example.com", "key_type": "ec", "key_bits": 384, "extra": {"k": [1, True]}}
    csr = x509.load_pem_x509_csr(user["csr"].encode())
    assert len(csr.subject) == 0 and csr.is_signature_valid
    root_a = ent.issuer("root-a")
    assert request["vault_request_values"] == {
        "policy_name": "web-policy", "mount": "pki/", "ns": "", "vault_is_performance_standby": False,
        "vault_is_performance_secondary": False, "issuance_mode": "issue", "vault_generated_private_key": True,
        "requested_issuer_name": "root-a", "requested_issuer_id": root_a.issuer_id,
        "requested_issuer_cert": root_a.certificate.public_bytes(serialization.Encoding.PEM).decode().strip(),
        "requested_issuance_config": {
            "aia_values": {"issuing_certificates": [], "crl_distribution_points": [], "ocsp_servers": []},
            "leaf_not_after_behavior": "err", "mount_default_ttl": "768h0m0s", "mount_max_ttl": "87600h0m0s"}}
    data = body["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "not_before", "private_key",
                            "private_key_type", "serial_number"]
    cert = cert_of(data["certificate"])
    assert cn_of(cert) == "svc.example.com"
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["svc.example.com"]
    _verify_signed_by(cert, root_a.certificate)
    assert cert.serial_number != 2  # the template's serial is replaced by a fresh one
    assert data["serial_number"] == serial_to_hex(cert.serial_number)
    key = serialization.load_pem_private_key(data["private_key"].encode(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.key_size == 384
    assert key.public_key() == cert.public_key() and data["private_key_type"] == "ec"
    assert data["private_key"].startswith("-----BEGIN EC PRIVATE KEY-----")
    assert data["issuing_ca"] == root_a.certificate.public_bytes(serialization.Encoding.PEM).decode().strip()
    assert data["expiration"] == int(cert.not_valid_after_utc.timestamp())
    # not stored unless the service asks for it
    assert ent.get(f"pki/cert/{data['serial_number']}").status_code == 404


def test_issue_defaults_to_an_rsa_2048_key_and_no_policy_name(ent):
    seen = []
    _plug(ent, simple_policy(seen=seen))
    r = ent.post("pki/external-policy/issue", {"common_name": "rsa.example.com", "private_key_format": "pkcs8"})
    assert r.status_code == 200, r.text
    assert "policy_name" not in seen[0]["vault_request_values"]
    data = r.json()["data"]
    key = serialization.load_pem_private_key(data["private_key"].encode(), None)
    assert key.key_size == 2048 and data["private_key_type"] == "rsa"
    assert data["private_key"].startswith("-----BEGIN PRIVATE KEY-----")


@pytest.mark.parametrize("body, error", [
    ({"key_type": "dsa"}, "unknown key type dsa"),
    ({"key_type": "ec", "key_bits": 300}, "unsupported bit length for EC key: 300"),
    ({"key_type": "ec", "format": "txt"}, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
])
def test_issue_request_errors_come_before_the_service(ent, body, error):
    seen = []
    _plug(ent, simple_policy(seen=seen))
    r = ent.post("pki/external-policy/issue", body)
    assert (r.status_code, r.json()) == (400, {"errors": [error]})
    assert seen == []


def test_issue_formats(ent):
    _plug(ent, simple_policy())
    der = ent.post("pki/external-policy/issue", {"common_name": "d.example.com", "key_type": "ec", "format": "der"})
    data = der.json()["data"]
    cert = x509.load_der_x509_certificate(base64.b64decode(data["certificate"]))
    assert cn_of(cert) == "d.example.com"
    serialization.load_der_private_key(base64.b64decode(data["private_key"]), None)
    bundle = ent.post("pki/external-policy/issue", {"common_name": "b.example.com", "key_type": "ec",
                                                    "format": "pem_bundle", "remove_roots_from_chain": True})
    data = bundle.json()["data"]
    assert data["certificate"].startswith("-----BEGIN EC PRIVATE KEY-----")
    assert data["certificate"].count("BEGIN CERTIFICATE") == 2
    assert "ca_chain" not in data  # the only chain member is a root


def test_issuer_path_variant_and_service_choice_of_issuer(ent):
    seen = []
    _plug(ent, simple_policy(seen=seen))
    r = ent.post("pki/issuer/root-b/external-policy/issue", {"common_name": "b.example.com", "key_type": "ec"})
    assert r.status_code == 200, r.text
    assert seen[0]["vault_request_values"]["requested_issuer_name"] == "root-b"
    root_b = ent.issuer("root-b")
    _verify_signed_by(cert_of(r.json()["data"]["certificate"]), root_b.certificate)
    # the service may override the requested issuer, by name or by id
    _plug(ent, simple_policy(issuer_ref="root-b"))
    r = ent.post("pki/external-policy/issue/p", {"common_name": "c.example.com", "key_type": "ec"})
    assert r.status_code == 200
    _verify_signed_by(cert_of(r.json()["data"]["certificate"]), root_b.certificate)
    assert r.json()["data"]["issuing_ca"] == root_b.certificate.public_bytes(serialization.Encoding.PEM).decode().strip()


def test_unknown_requested_issuer(ent):
    _plug(ent, simple_policy())
    r = ent.post("pki/issuer/ghost/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 500
    assert r.json() == {"errors": ["1 error occurred:\n\t* could not fetch the CA certificate (was one set?): "
                                   "unable to find PKI issuer for reference: ghost\n\n"]}


# -- sign and sign-intermediate ------------------------------------------------------------------------

def test_sign_passes_the_csr_verbatim_and_can_store_with_a_lease(ent):
    seen = []
    _plug(ent, simple_policy(store=True, lease=True, ttl=600, seen=seen))
    csr, key = make_csr("client.example.com")
    r = ent.post("pki/external-policy/sign/clients", {"csr": csr, "common_name": "client.example.com"})
    assert r.status_code == 200, r.text
    request = seen[0]
    assert request["user_request_key_values"] == {"csr": csr, "common_name": "client.example.com"}
    values = request["vault_request_values"]
    assert (values["issuance_mode"], values["vault_generated_private_key"], values["policy_name"]) == \
        ("sign", False, "clients")
    body = r.json()
    data = body["data"]
    assert "private_key" not in data and "private_key_type" not in data
    cert = cert_of(data["certificate"])
    assert cert.public_key() == key.public_key()
    stored = ent.get(f"pki/cert/{data['serial_number']}")
    assert stored.status_code == 200 and stored.json()["data"]["certificate"] == data["certificate"]
    assert body["lease_id"].startswith("pki/external-policy/sign/clients/") and len(body["lease_id"].split("/")[-1]) == 24
    assert 0 < body["lease_duration"] <= 630


def test_lease_needs_storage(ent):
    _plug(ent, simple_policy(store=False, lease=True))
    r = ent.post("pki/external-policy/issue", {"common_name": "n.example.com", "key_type": "ec"})
    assert (r.json()["lease_id"], r.json()["lease_duration"]) == ("", 0)


@pytest.mark.parametrize("body, error", [
    ({}, '"csr" is empty'),
    ({"csr": "not a csr"}, "csr contains no data"),
])
def test_sign_csr_errors(ent, body, error):
    _plug(ent, simple_policy())
    r = ent.post("pki/external-policy/sign", body)
    assert (r.status_code, r.json()) == (400, {"errors": [error]})


def test_sign_intermediate_signs_a_ca_template(ent):
    seen = []
    ca_ext = [x509.Extension(ExtensionOID.BASIC_CONSTRAINTS, True, x509.BasicConstraints(ca=True, path_length=0))]
    _plug(ent, simple_policy(cn="Issuing CA", dns=[], extensions=ca_ext, seen=seen))
    csr, key = make_csr("Issuing CA")
    r = ent.post("pki/issuer/root-a/external-policy/sign-intermediate/ica", {"csr": csr, "ttl": "720h"})
    assert r.status_code == 200, r.text
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [ttl]"]
    assert seen[0]["vault_request_values"]["issuance_mode"] == "ica"
    assert seen[0]["user_request_key_values"]["ttl"] == "720h"
    cert = cert_of(r.json()["data"]["certificate"])
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    _verify_signed_by(cert, ent.issuer("root-a").certificate)
    # the same format as root/sign-intermediate (the API document: "External-policy variants return the
    # same format as their non-external counterparts"): no not_before, ca_chain starts with the new CA
    data = r.json()["data"]
    assert sorted(data) == ["ca_chain", "certificate", "expiration", "issuing_ca", "serial_number"]
    assert data["ca_chain"][0] == data["certificate"] and data["ca_chain"][1] == data["issuing_ca"]


# -- the certificate profile ----------------------------------------------------------------------------

def test_extensions_are_kept_and_authority_fields_replaced(ent):
    ent.post("pki/config/urls", {"issuing_certificates": ["http://ca.example.com/ca"],
                                 "crl_distribution_points": ["http://ca.example.com/crl"],
                                 "ocsp_servers": ["http://ca.example.com/ocsp"]})
    custom = x509.Extension(x509.ObjectIdentifier("2.16.840.1.113730.1.13"), False,
                            x509.UnrecognizedExtension(x509.ObjectIdentifier("2.16.840.1.113730.1.13"), b"\x16\x04demo"))
    stale_aia = x509.Extension(ExtensionOID.AUTHORITY_INFORMATION_ACCESS, False, x509.AuthorityInformationAccess([
        x509.AccessDescription(x509.oid.AuthorityInformationAccessOID.CA_ISSUERS,
                               x509.UniformResourceIdentifier("http://elsewhere/ca"))]))
    stale_aki = x509.Extension(ExtensionOID.AUTHORITY_KEY_IDENTIFIER, False,
                               x509.AuthorityKeyIdentifier(b"\x01" * 20, None, None))
    eku = x509.Extension(ExtensionOID.EXTENDED_KEY_USAGE, False,
                         x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]))
    _plug(ent, simple_policy(extensions=[custom, stale_aia, stale_aki, eku]))
    r = ent.post("pki/external-policy/issue", {"common_name": "x.example.com", "key_type": "ec"})
    assert r.status_code == 200, r.text
    cert = cert_of(r.json()["data"]["certificate"])
    exts = cert.extensions
    assert exts.get_extension_for_oid(custom.oid).value.value == b"\x16\x04demo"
    assert exts.get_extension_for_class(x509.ExtendedKeyUsage).value == eku.value
    root_ski = ent.issuer("root-a").certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert exts.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier == root_ski.digest
    aia = exts.get_extension_for_class(x509.AuthorityInformationAccess).value
    assert sorted(d.access_location.value for d in aia) == ["http://ca.example.com/ca", "http://ca.example.com/ocsp"]
    crl = exts.get_extension_for_class(x509.CRLDistributionPoints).value
    assert [dp.full_name[0].value for dp in crl] == ["http://ca.example.com/crl"]


def test_signature_algorithm_kept_when_the_issuer_can_make_it(ent):
    def service(request):
        csr = x509.load_pem_x509_csr(request["user_request_key_values"]["csr"].encode())
        now = datetime.datetime.now(datetime.timezone.utc)
        template = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "s")]))
                    .issuer_name(x509.Name([])).public_key(csr.public_key()).serial_number(2)
                    .not_valid_before(now).not_valid_after(now + datetime.timedelta(hours=1))
                    .sign(ec.generate_private_key(ec.SECP384R1()), hashes.SHA384()))
        return {"request_uuid": request["request_uuid"], "issuer_ref": "root-a",
                "certificate": template.public_bytes(serialization.Encoding.PEM).decode()}

    _plug(ent, service)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 200, r.text
    cert = cert_of(r.json()["data"]["certificate"])
    assert cert.signature_algorithm_oid == SignatureAlgorithmOID.ECDSA_WITH_SHA384  # P-256 issuer, template's hash
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=1)


# -- the service's answers -------------------------------------------------------------------------------

def _answer(**fields):
    def service(request):
        answer = {"request_uuid": request["request_uuid"]}
        for key, value in fields.items():
            answer[key] = value(request) if callable(value) else value
        return answer
    return service


def _template(request):
    return certificate_template(request, subject=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "t")]))


def test_service_error_is_the_user_error(ent):
    _plug(ent, _answer(error="common_name t.example.com is not allowed by policy web"))
    r = ent.post("pki/external-policy/issue/web", {"common_name": "t.example.com", "key_type": "ec"})
    assert (r.status_code, r.json()) == (400, {"errors": ["common_name t.example.com is not allowed by policy web"]})


def test_error_with_certificate_becomes_a_warning(ent):
    _plug(ent, _answer(error="minor: subject rewritten", certificate=_template, issuer_ref="default",
                       warnings=["w1"]))
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 200
    assert r.json()["warnings"] == ["w1", "minor: subject rewritten"]


@pytest.mark.parametrize("fields, status, error", [
    ({}, 500, NO_CERTIFICATE),
    ({"certificate": _template}, 500, NO_ISSUER_REF),
    ({"certificate": "junk", "issuer_ref": "default"}, 500,
     "failed to parse the certificate template from the external policy service: no certificate found"),
    ({"certificate": _template, "issuer_ref": "ghost"}, 500,
     "could not fetch the CA certificate (was one set?): unable to find PKI issuer for reference: ghost"),
    ({"certificate": _template, "issuer_ref": "default", "extra": 1}, 500,
     'failed to parse the external policy service response: json: unknown field "extra"'),
    ({"warnings": "w"}, 500, "failed to parse the external policy service response: json: cannot unmarshal "
                             "string into Go struct field CIEPSResponse.warnings of type []string"),
    ({"store_certificate": 1}, 500, "failed to parse the external policy service response: json: cannot unmarshal "
                                    "number into Go struct field CIEPSResponse.store_certificate of type bool"),
])
def test_bad_answers(ent, fields, status, error):
    _plug(ent, _answer(**fields))
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    expected = f"1 error occurred:\n\t* {error}\n\n" if status == 500 else error
    assert (r.status_code, r.json()) == (status, {"errors": [expected]})


def test_wrong_request_uuid(ent):
    seen = []
    _plug(ent, lambda request: seen.append(request["request_uuid"]) or {"request_uuid": "other"})
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert (r.status_code, r.json()) == (500, {"errors": [
        "1 error occurred:\n\t* failed to parse the external policy service response: "
        f'request_uuid "other" does not match the request\'s "{seen[0]}"\n\n']})


def test_issue_template_must_carry_the_generated_key(ent):
    def service(request):
        other = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        template = (x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(x509.Name([]))
                    .public_key(other.public_key()).serial_number(2).not_valid_before(now)
                    .not_valid_after(now + datetime.timedelta(hours=1)).sign(other, hashes.SHA256()))
        return {"request_uuid": request["request_uuid"], "issuer_ref": "default",
                "certificate": template.public_bytes(serialization.Encoding.PEM).decode()}

    _plug(ent, service)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert (r.status_code, r.json()) == (500, {"errors": [f"1 error occurred:\n\t* {KEY_MISMATCH}\n\n"]})


def test_callable_failure_and_timeout(ent):
    def broken(request):
        raise RuntimeError("policy database down")

    _plug(ent, broken)
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert (r.status_code, r.json()) == (500, {"errors": [
        "1 error occurred:\n\t* failed to call the external policy service: policy callable raised RuntimeError: "
        "policy database down\n\n"]})

    def slow(request):
        time.sleep(1.5)
        return {}

    set_external_policy(ent.backend, slow, timeout=1)
    started = time.monotonic()
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert time.monotonic() - started < 1.4
    assert (r.status_code, r.json()) == (500, {"errors": [
        "1 error occurred:\n\t* failed to call the external policy service: context deadline exceeded "
        "(the policy callable did not return in time)\n\n"]})


def test_other_requests_are_served_while_the_service_thinks(ent):
    """The callable runs outside the service lock: a read is answered while it is still thinking
    (no timing involved: the callable waits until the read came back)."""
    import threading

    results = {}
    called, answered = threading.Event(), threading.Event()

    def slow(request):
        called.set()
        results["released by the read"] = answered.wait(10)  # held until the read below was served
        return simple_policy()(request)

    _plug(ent, slow)
    worker = threading.Thread(target=lambda: results.setdefault(
        "issue", ent.post("pki/external-policy/issue", {"common_name": "slow.example.com", "key_type": "ec"})))
    worker.start()
    assert called.wait(10)
    assert ent.get("pki/roles/meta").status_code == 200  # with the lock held: only after the 10 s above
    answered.set()
    worker.join()
    assert results["released by the read"] is True and results["issue"].status_code == 200


def test_successful_call_marks_the_configuration_validated(ent):
    _plug(ent, simple_policy())
    assert ent.get("pki/config/external-policy").json()["data"]["external_service_validated"] is False
    ent.post("pki/external-policy/issue", {"key_type": "ec"})
    data = ent.get("pki/config/external-policy").json()["data"]
    assert data["external_service_validated"] is True and data["last_successful_request"].endswith("Z")


def test_attribute_callable_also_works_until_reset(ent):
    ent.backend.external_policy = simple_policy()
    r = ent.post("pki/external-policy/issue", {"common_name": "attr.example.com", "key_type": "ec"})
    assert r.status_code == 200
    ent.double.reset()
    r = ent.post("pki/external-policy/issue", {"key_type": "ec"})
    assert r.status_code == 400


@pytest.mark.parametrize("segment, mode", [("issue", "issue"), ("sign", "sign"), ("sign-intermediate", "ica")])
@pytest.mark.parametrize("prefix, issuer", [("", "root-a"), ("issuer/root-b/", "root-b"), ("issuer/default/", "root-a")])
@pytest.mark.parametrize("policy", ["", "team.a-1"])
def test_every_path_form_routes(ent, segment, mode, prefix, issuer, policy):
    seen = []
    _plug(ent, simple_policy(seen=seen))
    body = {"key_type": "ec"} if mode == "issue" else {"csr": make_csr()[0]}
    path = f"pki/{prefix}external-policy/{segment}" + (f"/{policy}" if policy else "")
    r = ent.post(path, body)
    assert r.status_code == 200, (path, r.text)
    values = seen[0]["vault_request_values"]
    assert values["issuance_mode"] == mode and values["requested_issuer_name"] == issuer
    assert values.get("policy_name", "") == policy
    _verify_signed_by(cert_of(r.json()["data"]["certificate"]), ent.issuer(issuer).certificate)
    assert ent.call("GET", path).status_code == 405


def test_body_issuer_ref_on_the_plain_path_is_only_passed_along(ent):
    seen = []
    _plug(ent, simple_policy(seen=seen))
    r = ent.post("pki/external-policy/issue", {"key_type": "ec", "issuer_ref": "root-b"})
    assert r.json()["warnings"] == ["Endpoint ignored these unrecognized parameters: [issuer_ref]"]
    assert seen[0]["vault_request_values"]["requested_issuer_name"] == "root-a"
    assert seen[0]["user_request_key_values"]["issuer_ref"] == "root-b"
