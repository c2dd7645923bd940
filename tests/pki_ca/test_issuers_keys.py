"""LIST issuers, issuer/:ref (GET/POST/PATCH/DELETE), config/issuers, keys and config/keys."""

from __future__ import annotations

from ca_helpers import cert_of, errors
from cryptography import x509

ISSUER_KEYS = ["ca_chain", "certificate", "crl_distribution_points", "delta_crl_distribution_points", "issuer_id",
               "issuer_name", "issuing_certificates", "key_id", "leaf_not_after_behavior", "manual_chain",
               "ocsp_servers", "revocation_signature_algorithm", "revoked", "usage"]
USAGE = "crl-signing,issuing-certificates,ocsp-signing,read-only"


def test_list_and_read_issuers(pki):
    assert (pki.call("LIST", "issuers").status_code, errors(pki.call("LIST", "issuers"))) == (404, [])
    a = pki.root(common_name="A", issuer_name="root-a")
    b = pki.root(common_name="B", issuer_name="root-b", key_type="rsa")
    listed = pki.ok("LIST", "issuers", token=None)["data"]  # upstream serves LIST issuers without a token
    assert listed["keys"] == sorted([a["issuer_id"], b["issuer_id"]])
    assert listed["key_info"][a["issuer_id"]] == {"is_default": True, "issuer_name": "root-a", "key_id": a["key_id"],
                                                  "serial_number": a["serial_number"]}
    assert listed["key_info"][b["issuer_id"]]["is_default"] is False
    assert pki.ok("GET", "issuers?list=true")["data"] == listed
    for ref in ("default", "DEFAULT", a["issuer_id"], "root-a"):
        data = pki.ok("GET", f"issuer/{ref}")["data"]
        assert sorted(data) == ISSUER_KEYS and data["issuer_id"] == a["issuer_id"]
    data = pki.ok("GET", "issuer/root-b")["data"]
    assert data["certificate"] == b["certificate"] + "\n" and data["ca_chain"] == [b["certificate"] + "\n"]
    assert (data["leaf_not_after_behavior"], data["manual_chain"], data["revoked"], data["usage"]) == ("err", None, False, USAGE)
    assert data["revocation_signature_algorithm"] == "SHA256WithRSA"
    assert pki.ok("GET", "issuer/root-a")["data"]["revocation_signature_algorithm"] == "ECDSAWithSHA256"
    resp = pki.call("GET", "issuer/nope")
    assert (resp.status_code, errors(resp)) == (500, ["1 error occurred:\n\t* unable to find PKI issuer for reference: nope\n\n"])
    assert pki.call("GET", "issuer/nope", token=None).status_code == 403  # only the raw forms are unauthenticated


def test_patch_merges_and_post_replaces(pki):
    b = pki.root(common_name="B", issuer_name="root-b")
    resp = pki.patch("issuer/root-b", {"leaf_not_after_behavior": "truncate"})
    assert resp.status_code == 200
    assert resp.json()["data"]["issuer_name"] == "root-b" and resp.json()["data"]["leaf_not_after_behavior"] == "truncate"
    assert pki.state.issuers[b["issuer_id"]].leaf_not_after_behavior == "truncate"
    bad = pki.patch("issuer/root-b", {"leaf_not_after_behavior": "maybe"})
    assert (bad.status_code, errors(bad)) == (400, ["Unknown value for field `leaf_not_after_behavior`. Possible values are "
                                                    "`err`, `truncate`, and `permit`."])
    wrong = pki.patch("issuer/root-b", {"issuer_name": "x"}, content_type="application/json")
    assert (wrong.status_code, errors(wrong)) == (415, ["PATCH requires Content-Type of application/merge-patch+json, "
                                                        "provided application/json"])
    usage = pki.patch("issuer/root-b", {"usage": "read-only,issuing-certificates", "issuing_certificates": ["http://x/ca"]})
    data = usage.json()["data"]
    assert data["usage"] == "issuing-certificates,read-only" and data["issuing_certificates"] == ["http://x/ca"]
    assert data["enable_aia_url_templating"] is False  # only shown once the issuer has AIA URLs of its own
    assert errors(pki.patch("issuer/root-b", {"usage": "bogus"})) == [
        "Unable to parse specified usages: [bogus] - valid values are " + USAGE]
    assert errors(pki.patch("issuer/root-b", {"issuing_certificates": ["not a url"]})) == [
        "invalid URL found in Authority Information Access (AIA) parameter issuing_certificates: not a url"]
    assert errors(pki.patch("issuer/root-b", {"revocation_signature_algorithm": "sha256withrsa"})) == [
        "1 error occurred:\n\t* unable to use issuer of type ECDSA to sign with SHA256-RSA key type\n\n"]
    # POST is a full replace: omitted fields go back to their defaults, the name is lost
    replaced = pki.ok("POST", f"issuer/{b['issuer_id']}", {"leaf_not_after_behavior": "err"})["data"]
    assert (replaced["issuer_name"], replaced["usage"], replaced["issuing_certificates"]) == ("", USAGE, [])
    assert replaced["revocation_signature_algorithm"] == "" and "enable_aia_url_templating" not in replaced
    assert pki.call("GET", "issuer/root-b").status_code == 500


def test_issuer_name_rules(pki):
    a = pki.root(common_name="A", issuer_name="root-a")
    b = pki.root(common_name="B", issuer_name="root-b")
    assert errors(pki.patch("issuer/root-b", {"issuer_name": "root-a"})) == ["issuer name already in use"]
    assert errors(pki.patch("issuer/root-b", {"issuer_name": "default"})) == [
        "reserved keyword 'default' can not be used as issuer name"]
    assert errors(pki.patch("issuer/root-b", {"issuer_name": "bad name!"})) == ["issuer name contained invalid characters"]
    assert pki.ok("POST", "issuer/root-b", {"issuer_name": "root-b"})["data"]["issuer_name"] == "root-b"
    assert errors(pki.call("POST", "issuer/root-b", {"issuer_name": ""})) == ["expected non-empty issuer name"]
    cleared = pki.patch(f"issuer/{b['issuer_id']}", {"issuer_name": "  "})  # PATCH may clear the name
    assert cleared.status_code == 200 and cleared.json()["data"]["issuer_name"] == ""
    chain = pki.patch(f"issuer/{b['issuer_id']}", {"manual_chain": "root-a"})
    assert errors(chain) == [f"expected first cert in chain to be a self-reference, but was: root-a/{a['issuer_id']}"]
    chained = pki.patch(f"issuer/{b['issuer_id']}", {"manual_chain": "self,root-a"}).json()["data"]
    assert chained["manual_chain"] == [b["issuer_id"], a["issuer_id"]] and len(chained["ca_chain"]) == 2


def test_delete_issuer_and_config_issuers(pki):
    a = pki.root(common_name="A", issuer_name="root-a")
    b = pki.root(common_name="B", issuer_name="root-b")
    resp = pki.call("DELETE", "issuer/nope")
    assert resp.status_code == 200 and resp.json()["data"] is None and resp.json()["warnings"] is None
    assert errors(pki.call("POST", "config/issuers", {"default": "nope"})) == [
        "Error resolving issuer reference: unable to find PKI issuer for reference: nope"]
    assert errors(pki.call("POST", "config/issuers", {})) == [
        "Invalid issuer specification; must be non-empty and can't be 'default'."]
    set_b = pki.ok("POST", "config/issuers", {"default": "root-b"})["data"]
    assert set_b == {"default": b["issuer_id"], "default_follows_latest_issuer": False}
    resp = pki.call("DELETE", "issuer/default")
    assert resp.json()["warnings"] == [f"Deleted issuer {b['issuer_id']} (via issuer_ref default); this was configured as "
                                       "the default issuer. Operations without an explicit issuer will not work until a "
                                       "new default is configured."]
    assert pki.ok("GET", "config/issuers")["data"]["default"] == ""
    assert errors(pki.call("GET", "issuer/default")) == ["1 error occurred:\n\t* no default issuer currently configured\n\n"]
    assert pki.ok("LIST", "issuers")["data"]["keys"] == [a["issuer_id"]]
    # default_follows_latest_issuer: the next root becomes default
    pki.ok("POST", "config/issuers", {"default": "root-a", "default_follows_latest_issuer": True})
    c = pki.root(common_name="C")
    assert pki.ok("GET", "config/issuers")["data"] == {"default": c["issuer_id"], "default_follows_latest_issuer": True}


def test_keys(pki):
    assert pki.call("LIST", "keys").status_code == 404
    a = pki.root(common_name="A", key_name="ka")
    b = pki.root(common_name="B")
    listed = pki.ok("LIST", "keys")["data"]
    assert listed["keys"] == sorted([a["key_id"], b["key_id"]])
    assert listed["key_info"][a["key_id"]] == {"is_default": True, "key_name": "ka"}
    read = pki.ok("GET", "key/ka")["data"]
    ski = cert_of(a["certificate"]).extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    assert read == {"key_id": a["key_id"], "key_name": "ka", "key_type": "ec",
                    "subject_key_id": ":".join(f"{x:02x}" for x in ski)}
    assert errors(pki.call("GET", "key/nope")) == ["1 error occurred:\n\t* unable to find PKI key for reference: nope\n\n"]
    assert errors(pki.call("DELETE", "key/ka")) == [f"Failed to Delete Key.  Key in Use by Issuer: {a['issuer_id']}"]
    assert pki.call("DELETE", "key/nope").status_code == 204
    renamed = pki.ok("POST", "key/ka", {"key_name": ""})
    assert renamed["data"] == {"key_id": a["key_id"], "key_name": "", "key_type": "ec"}
    assert renamed["warnings"] == ["Name successfully deleted, you will now need to reference this key by it's Id: "
                                   + a["key_id"]]
    assert errors(pki.call("POST", f"key/{a['key_id']}", {"key_name": "bad name"})) == [
        "new key name outside of valid character limits"]
    assert pki.ok("POST", "config/keys", {"default": b["key_id"]})["data"] == {"default": b["key_id"]}
    assert errors(pki.call("POST", "config/keys", {"default": "nope"})) == [
        "Error resolving issuer reference: unable to find PKI key for reference: nope"]
    generated = pki.ok("POST", "keys/generate/exported", {"key_type": "ec", "key_name": "g1"})["data"]
    assert sorted(generated) == ["key_id", "key_name", "key_type", "private_key"]
    assert errors(pki.call("POST", "keys/generate/internal", {"key_type": "ec", "key_bits": 1})) == [
        "Validation for key_type, key_bits failed: unsupported bit length for EC key: 1"]
    again = pki.ok("POST", "keys/import", {"pem_bundle": generated["private_key"], "key_name": "other"})
    assert again["data"]["key_id"] == generated["key_id"]
    assert again["warnings"] == ["Key already imported, use key/ endpoint to update name."]
    assert pki.call("DELETE", "key/g1").status_code == 204
