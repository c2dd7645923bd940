"""``issuer/:ref/sign-revocation-list`` with extension ids OpenBao writes into a CRL no parser reads
(docs/divergences.md): an id written as an empty OBJECT IDENTIFIER, or onto an id the CRL already
holds. OpenBao answers 200 with that CRL; the double answers a 500 and signs nothing (cryptography
cannot write such a CRL). The ids it can write are compared with bao in
``tests/parity/test_parity_crl_sign.py``."""

from __future__ import annotations

import pytest

SIGN = "issuer/default/sign-revocation-list"


def _error(text: str) -> list[str]:
    return [f"1 error occurred:\n\t* error creating new CRL: {text}\n\n"]


@pytest.mark.parametrize("ids, delta, error", [
    (["-1.2"], -1, "extension id -1.2 would be written as an empty OBJECT IDENTIFIER"),
    (["2.5.29.20.-1"], -1, "extension id 2.5.29.20.-1 would be written as 2.5.29.20, an extension the CRL already holds"),
    (["2.5.29.35.-7"], -1, "extension id 2.5.29.35.-7 would be written as 2.5.29.35, an extension the CRL already holds"),
    (["2.5.29.27.-1"], 3, "extension id 2.5.29.27.-1 would be written as 2.5.29.27, an extension the CRL already holds"),
    (["1.2.-5", "1.2"], -1, "extension id 1.2 would be written as 1.2, an extension the CRL already holds"),
    (["0.99"], -1, "asn1: structure error: invalid object identifier"),
])
def test_an_id_openbao_writes_unreadably_is_refused(pki, ids, delta, error):
    body = {"extensions": [{"id": i, "value": ""} for i in ids], "delta_crl_base_number": delta}
    assert pki.fails("POST", SIGN, body, 500) == _error(error)


def test_the_same_ids_on_a_revoked_entry(pki):
    body = {"revoked_certs": [{"serial_number": "01", "revocation_time": "2024-01-01T00:00:00Z",
                               "extensions": [{"id": "1.2.-5", "value": "BQA="}, {"id": "1.2", "value": "BQA="}]}]}
    assert pki.fails("POST", SIGN, body, 500) == _error(
        "extension id 1.2 would be written as 1.2, an extension the CRL already holds")
    body["revoked_certs"][0]["extensions"] = [{"id": "2.5.29.35.-1", "value": "BQA="}]
    assert "crl" in pki.ok("POST", SIGN, body)["data"]  # an entry's extensions do not meet the CRL's own
