"""root/generate/:type and its aliases: response shape, warnings, errors and the X.509 profile."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import time

from ca_helpers import AIA_WARNING, HOUR, cert_of, errors
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ROOT_KEYS = ["certificate", "expiration", "issuer_id", "issuer_name", "issuing_ca", "key_id", "key_name",
             "serial_number"]
NO_SUBJECT = ("This issuer certificate was generated without a Subject; this makes it likely that issuing leaf certs "
              "with this certificate will cause TLS validation libraries to reject this certificate.")


def test_internal_root_response_and_profile(pki):
    before = int(time.time())
    resp = pki.call("POST", "root/generate/internal", {"common_name": "Example Root CA", "ttl": "87600h",
                                                       "issuer_name": "root-a", "key_type": "ec"})
    assert resp.status_code == 200
    body = resp.json()
    assert list(body) == ["request_id", "lease_id", "renewable", "lease_duration", "data", "wrap_info", "warnings",
                          "auth"]
    data = body["data"]
    assert sorted(data) == ROOT_KEYS
    assert body["warnings"] == [AIA_WARNING]
    assert data["issuer_name"] == "root-a" and data["key_name"] == ""
    assert data["certificate"] == data["issuing_ca"] and not data["certificate"].endswith("\n")
    cert = cert_of(data["certificate"])
    assert int(data["serial_number"].replace(":", ""), 16) == cert.serial_number
    assert 140 <= cert.serial_number.bit_length() <= 159
    assert data["expiration"] == int(cert.not_valid_after_utc.timestamp())
    assert abs(cert.not_valid_after_utc.timestamp() - (before + 87600 * HOUR)) <= 3
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=87600, seconds=30)
    assert cert.subject == cert.issuer
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "Example Root CA"
    cert.verify_directly_issued_by(cert)
    bc = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert bc.critical and bc.value.ca and bc.value.path_length is None
    ku = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert ku.critical and ku.value.key_cert_sign and ku.value.crl_sign and not ku.value.digital_signature
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ski.digest == x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest
    assert [e.oid._name for e in cert.extensions] == ["keyUsage", "basicConstraints", "subjectKeyIdentifier",
                                                      "authorityKeyIdentifier"]
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    # the generated root is in the certificate store like upstream's certs/<serial>
    assert data["serial_number"] in pki.state.certs


def test_hostname_cn_becomes_dns_san_and_subject_fields(pki):
    data = pki.root(common_name="root.example.com", alt_names="x.example.com,me@example.com", ip_sans="10.0.0.1",
                    uri_sans="spiffe://a/b", other_sans="1.2.3.4;UTF8:hello", ou="U1,U2", organization="O",
                    country="US", serial_number="SN1", max_path_length=2, permitted_dns_domains="example.com,.ex.org",
                    key_usage="DigitalSignature,KeyEncipherment", ext_key_usage="ServerAuth")
    cert = cert_of(data["certificate"])
    assert cert.subject.rfc4514_string() == "2.5.4.5=SN1,CN=root.example.com,OU=U1+OU=U2,O=O,C=US"
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert not san.critical
    assert list(san.value) == [x509.OtherName(x509.ObjectIdentifier("1.2.3.4"), b"\x0c\x05hello"),
                               x509.DNSName("root.example.com"), x509.DNSName("x.example.com"),
                               x509.RFC822Name("me@example.com"), x509.IPAddress(ipaddress.ip_address("10.0.0.1")),
                               x509.UniformResourceIdentifier("spiffe://a/b")]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 2
    nc = cert.extensions.get_extension_for_class(x509.NameConstraints)
    assert nc.critical and nc.value.permitted_subtrees == [x509.DNSName("example.com"), x509.DNSName(".ex.org")]
    ku = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature and ku.key_cert_sign and ku.crl_sign and not ku.key_encipherment
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_exported_formats(pki):
    data = pki.root(kind="exported", common_name="Exp", key_type="rsa")
    assert sorted(data) == sorted(ROOT_KEYS + ["private_key", "private_key_type"])
    assert data["private_key_type"] == "rsa"
    assert data["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----") and not data["private_key"].endswith("\n")
    key = serialization.load_pem_private_key(data["private_key"].encode(), None)
    assert key.public_key() == cert_of(data["certificate"]).public_key()
    bundle = pki.root(kind="exported", common_name="B", format="pem_bundle")
    assert bundle["certificate"] == bundle["private_key"] + "\n" + bundle["issuing_ca"]
    assert bundle["private_key"].startswith("-----BEGIN EC PRIVATE KEY-----")
    der = pki.root(kind="exported", common_name="D", key_type="ed25519", format="der", private_key_format="pkcs8")
    cert = x509.load_der_x509_certificate(base64.b64decode(der["certificate"]))
    assert isinstance(cert.public_key(), ed25519.Ed25519PublicKey) and cert.signature_hash_algorithm is None
    assert der["issuing_ca"] == der["certificate"] and der["private_key_type"] == "ed25519"
    assert isinstance(serialization.load_der_private_key(base64.b64decode(der["private_key"]), None),
                      ed25519.Ed25519PrivateKey)
    pkcs8 = pki.root(kind="exported", common_name="P", private_key_format="pkcs8")
    assert pkcs8["private_key"].startswith("-----BEGIN PRIVATE KEY-----")


def test_signature_hash_rules(pki):
    p384 = cert_of(pki.root(common_name="p384", key_bits=384, signature_bits=512)["certificate"])
    assert isinstance(p384.public_key().curve, ec.SECP384R1) and isinstance(p384.signature_hash_algorithm, hashes.SHA384)
    pss = cert_of(pki.root(common_name="pss", key_type="rsa", signature_bits=384, use_pss=True, issuer_name="pss")
                  ["certificate"])
    assert isinstance(pss.signature_algorithm_parameters, padding.PSS)
    assert isinstance(pss.signature_hash_algorithm, hashes.SHA384) and isinstance(pss.public_key(), rsa.RSAPublicKey)
    read = pki.ok("GET", "issuer/pss")
    assert read["data"]["revocation_signature_algorithm"] == "SHA384WithRSAPSS"
    assert read["warnings"] == ["Issuer uses a PSS Revocation Signature Algorithm. This algorithm will be downgraded to "
                                "PKCS#1v1.5 signature scheme on OCSP responses, due to limitations in the OCSP library."]


def test_ttl_clamped_no_subject_and_path_length_zero(untuned):
    resp = untuned.call("POST", "root/generate/internal", {"common_name": "Untuned", "ttl": "8760h", "key_type": "ec"})
    assert resp.json()["warnings"] == ['TTL "8760h0m0s" is longer than permitted maxTTL "768h0m0s", so maxTTL is being used',
                                       AIA_WARNING]
    cert = cert_of(resp.json()["data"]["certificate"])
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=768, seconds=30)
    resp = untuned.call("POST", "root/generate/internal", {"ttl": "1h", "key_type": "ec", "max_path_length": 0})
    assert resp.json()["warnings"] == [NO_SUBJECT, AIA_WARNING, "Max path length of the generated certificate is zero. "
                                       "This certificate cannot be used to issue intermediate CA certificates."]
    cert = cert_of(resp.json()["data"]["certificate"])
    assert len(cert.subject) == 0 and cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0


def test_not_after_and_not_before_duration(pki):
    cert = cert_of(pki.root(common_name="na", not_after="2030-01-01T00:00:00Z")["certificate"])
    assert cert.not_valid_after_utc == datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    cert = cert_of(pki.root(common_name="nbd", ttl="2h", not_before_duration="1h")["certificate"])
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=3)


def test_generation_errors(pki):
    cases = [
        ("bogus", {"common_name": "x"}, 'the "exported" path parameter must be "internal", "existing", exported" or "kms"'),
        ("internal", {"common_name": "x", "format": "p12"}, 'the "format" path parameter must be "pem", "der", or "pem_bundle"'),
        ("internal", {"key_type": "ec", "key_bits": 2048}, "unsupported bit length for EC key: 2048"),
        ("internal", {"key_type": "dsa"}, "unknown key type dsa"),
        ("internal", {"key_type": "rsa", "key_bits": 1024}, "RSA keys < 2048 bits are unsafe and not supported: got 1024"),
        ("internal", {"key_type": "rsa", "signature_bits": 123}, "unsupported hash signature algorithm: 123"),
        ("internal", {"key_type": "ec", "ttl": "1h", "not_after": "2030-01-01T00:00:00Z"},
         "Either ttl or not_after should be provided. Both should not be provided in the same request."),
        ("internal", {"key_type": "ec", "not_after": "tomorrow"},
         'parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'),
        ("internal", {"key_type": "ec", "ip_sans": "nope"}, 'the value "nope" is not a valid IP address'),
        ("internal", {"key_type": "ec", "other_sans": "garbage"},
         'could not parse requested other SAN: expected a semicolon in other SAN "garbage"'),
        ("internal", {"key_type": "ec", "issuer_name": "bad name"}, "issuer name contained invalid characters"),
        ("internal", {"key_type": "ec", "issuer_name": ""}, "expected non-empty issuer name"),
        ("internal", {"key_type": "ec", "issuer_name": "Default"}, "reserved keyword 'default' can not be used as issuer name"),
        ("internal", {"key_type": "ec", "key_name": "default"}, "reserved keyword 'default' can not be used as key name"),
        ("existing", {"key_ref": "nope"}, "failed to lookup public key from existing key: unable to find PKI key for reference: nope"),
        ("existing", {"key_type": "ec"}, "invalid parameter for the kms/existing path parameter, key_type nor key_bits "
                                         "arguments can be set in this mode"),
        ("kms", {}, 'must specify "external_key_ref" on "kms"-typed generation requests'),
        ("internal", {"external_key_ref": "x"}, 'cannot specify "external_key_ref" on "internal"-typed generation requests'),
    ]
    for kind, body, message in cases:
        resp = pki.call("POST", f"root/generate/{kind}", body)
        assert (resp.status_code, errors(resp)) == (400, [message]), body
    resp = pki.call("POST", "root/generate/internal", {"key_type": "ec", "ttl": "-1h"})
    assert errors(resp) == ['Field validation failed: error converting input for field "ttl": cannot provide negative value \'-3600\'']
    past = pki.call("POST", "root/generate/internal", {"key_type": "ec", "not_after": "2020-01-01T00:00:00Z"})
    assert past.status_code == 400 and errors(past)[0].startswith("The certificate's Not Before (")
    assert errors(past)[0].endswith(") is later than the certificate's Not After (2020-01-01T00:00:00Z)")
    assert not pki.state.issuers and not pki.state.keys


def test_second_root_not_default_duplicate_name_and_existing_key(pki):
    first = pki.root(common_name="A", issuer_name="root-a", key_name="ka")
    second = pki.root(common_name="B", issuer_name="root-b")
    assert pki.ok("GET", "config/issuers")["data"] == {"default": first["issuer_id"], "default_follows_latest_issuer": False}
    dup = pki.call("POST", "root/generate/internal", {"common_name": "C", "issuer_name": "root-a", "key_type": "ec"})
    assert (dup.status_code, errors(dup)) == (400, ["issuer name already in use"])
    dup = pki.call("POST", "root/generate/internal", {"common_name": "C", "key_name": "ka", "key_type": "ec"})
    assert errors(dup) == ["key name already in use"]
    reuse = pki.ok("POST", "root/generate/existing", {"common_name": "A2", "key_ref": "ka", "issuer_name": "a2"})["data"]
    assert reuse["key_id"] == first["key_id"] and reuse["key_name"] == "ka"
    assert cert_of(reuse["certificate"]).public_key() == cert_of(first["certificate"]).public_key()
    default_key = pki.ok("POST", "issuers/generate/root/existing", {"common_name": "A3"})["data"]
    assert default_key["key_id"] == first["key_id"]  # key_ref defaults to the default key
    assert second["issuer_id"] != first["issuer_id"]


def test_config_urls_end_up_in_later_roots(pki):
    urls = {"issuing_certificates": ["http://127.0.0.1:8200/v1/pki/ca"],
            "crl_distribution_points": ["http://127.0.0.1:8200/v1/pki/crl"]}
    written = pki.ok("POST", "config/urls", urls)
    assert written["data"] == {**urls, "delta_crl_distribution_points": [], "enable_templating": False, "ocsp_servers": []}
    resp = pki.ok("POST", "root/generate/internal", {"common_name": "AIA", "key_type": "ec"})
    assert resp["warnings"] is None
    cert = cert_of(resp["data"]["certificate"])
    aia = cert.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    assert [(d.access_method._name, d.access_location.value) for d in aia] == [("caIssuers", urls["issuing_certificates"][0])]
    dps = cert.extensions.get_extension_for_class(x509.CRLDistributionPoints).value
    assert [dp.full_name[0].value for dp in dps] == urls["crl_distribution_points"]
    # the issuer record itself keeps no AIA of its own (upstream reads [] there)
    assert pki.ok("GET", "issuer/default")["data"]["issuing_certificates"] == []


def test_rotate_names_the_new_root_next_and_delete_root(pki):
    pki.root(common_name="A")
    rotated = pki.ok("POST", "root/rotate/internal", {"common_name": "A2", "key_type": "ec"})["data"]
    assert rotated["issuer_name"] == "next"
    resp = pki.call("DELETE", "root")
    assert resp.status_code == 200 and resp.json()["data"] is None
    assert resp.json()["warnings"] == ["DELETE /root deletes all keys and issuers; prefer the new DELETE /key/:key_ref and "
                                       "DELETE /issuer/:issuer_ref for finer granularity, unless removal of all keys and "
                                       "issuers is desired."]
    assert pki.call("LIST", "issuers").status_code == 404 and pki.call("LIST", "keys").status_code == 404
    assert errors(pki.call("GET", "issuer/default")) == ["1 error occurred:\n\t* no default issuer currently configured\n\n"]
