"""Parity of what is *not* there: the PKI operations the API document names only in its table of
contents and the double does not implement (docs/coverage.md, "not implemented").

* Paths OpenBao 2.7.2 lacks too (Vault Enterprise or Vault-only features): both answer the same 404.
* Paths OpenBao has and the double does not: pinned on both halves (OpenBao serves them, the double
  answers 404 ``unsupported path``), so implementing one in the double, or OpenBao dropping one,
  shows up here and the coverage table must change with it.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity

UNSUPPORTED = {"errors": ["1 error occurred:\n\t* unsupported path\n\n"]}

ABSENT_IN_BOTH = [  # method, mount-relative path
    ("LIST", "certs/revocation-queue"),    # list revocation requests (Vault Enterprise cross-cluster revocation)
    ("LIST", "certs/unified-revoked"),     # list cross-cluster revocations (Vault Enterprise)
    ("GET", "unified-crl"),                # unified CRLs (Vault Enterprise)
    ("GET", "est/cacerts"),                # EST (Vault Enterprise)
    ("GET", "config/est"),
    ("GET", "unified-ocsp/MAo="),          # unified OCSP (Vault Enterprise)
    ("GET", "config/cmpv2"),               # CMPv2 (Vault Enterprise)
    ("GET", "config/scep"),                # SCEP (Vault Enterprise)
]

ONLY_IN_OPENBAO = [  # method, path, body, OpenBao's status
    ("GET", "config/acme", None, 200),
]


def test_paths_absent_in_both(pki):
    for method, path in ABSENT_IN_BOTH:
        ex = pki.send(method, f"/v1/{{mount}}/{path}")
        ex.same().expect(404, errors=UNSUPPORTED["errors"])


@pytest.mark.parametrize(("method", "path", "body", "status"), ONLY_IN_OPENBAO, ids=[p for _, p, _, _ in ONLY_IN_OPENBAO])
def test_paths_only_openbao_serves(pki, method, path, body, status):
    kwargs = {} if body is None else {"json": body}
    ex = pki.send(method, f"/v1/{{mount}}/{path}", **kwargs)
    assert ex.response("bao").status_code == status, ex.response("bao").text
    double = ex.response("double")
    if double.status_code != status:  # self-check mode runs a real server on both sides
        assert (double.status_code, double.json()) == (404, UNSUPPORTED)
