"""Fixtures of the privileged-signing tests (sign-intermediate, sign-self-issued, sign-verbatim).

One Double per session (port 0) on a :class:`ManualClock` standing at :data:`T0`, set up over HTTP
only (black box):

* mount ``pki`` (max_lease_ttl 87600h, default 768h) with ``root`` (EC P-256 "Privileged Root",
  87600h, the default issuer), ``rsa`` (RSA-2048 "RSA Root", pathLen 3, 87600h) and ``short``
  (EC "Short Root", 8760h);
* mount ``pki_int`` (max_lease_ttl 43800h) holding a generated EC intermediate key (CSR not signed yet);
* a policy ``nosudo`` (everything but sudo on ``pki/*``) and a token with it.

Each test starts from that baseline (``Double.reset``) with the clock back at T0.
"""

from __future__ import annotations

import os
import sys

import pytest

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from priv_helpers import T0, Client  # noqa: E402

from pytest_schedpki import Double  # noqa: E402
from pytest_schedpki.clock import ManualClock  # noqa: E402

ROOTS = {
    "root": {"common_name": "Privileged Root", "key_type": "ec", "ttl": "87600h", "issuer_name": "root"},
    "rsa": {"common_name": "RSA Root", "key_type": "rsa", "ttl": "87600h", "issuer_name": "rsa", "max_path_length": 3},
    "short": {"common_name": "Short Root", "key_type": "ec", "ttl": "8760h", "issuer_name": "short"},
}


@pytest.fixture(scope="session")
def priv_double():
    clock = ManualClock(T0)
    double = Double(clock=clock).start()
    double.manual_clock = clock
    client = Client(double)
    for path, body in (("sys/mounts/pki", {"type": "pki"}), ("sys/mounts/pki/tune", {"max_lease_ttl": "87600h"}),
                       ("sys/mounts/pki_int", {"type": "pki"}), ("sys/mounts/pki_int/tune", {"max_lease_ttl": "43800h"})):
        assert client.post(path, body).status_code == 204
    double.issuer_ids = {}
    for name, body in ROOTS.items():
        double.issuer_ids[name] = client.ok("pki/root/generate/internal", body)["data"]["issuer_id"]
    double.int_csr = client.ok("pki_int/intermediate/generate/internal",
                               {"common_name": "Privileged Intermediate", "key_type": "ec"})["data"]["csr"]
    r = client.post("sys/policies/acl/nosudo", {
        "policy": 'path "pki/*" { capabilities = ["create", "read", "update", "delete", "list"] }'})
    assert r.status_code == 204, r.text
    double.nosudo_token = client.ok("auth/token/create", {"policies": ["nosudo"], "ttl": "8760h"})["auth"]["client_token"]
    double.save_baseline()
    yield double
    double.stop()


@pytest.fixture
def api(priv_double):
    """Per test: the baseline, the clock at T0, and no handler exception allowed."""
    priv_double.reset()
    priv_double.manual_clock.set(T0)
    priv_double.pop_handler_errors()
    client = Client(priv_double)
    client.issuer_ids = priv_double.issuer_ids
    client.int_csr = priv_double.int_csr
    client.nosudo_token = priv_double.nosudo_token
    yield client
    assert priv_double.pop_handler_errors() == []
