"""Fixtures of the leaf (roles / issue / sign / cert store) tests.

One Double per session on a :class:`ManualClock` (time only moves when a test moves it) with:

* mount ``pki`` tuned to ``max_lease_ttl`` 87600h holding ``root-a`` (RSA, 10 years, the default
  issuer) and ``root-b`` (EC P-256, 5 years);
* mount ``pki_int`` holding an intermediate signed by ``root-a`` (chain ``[int, root-a]``);
* roles created over HTTP, mirroring the golden capture (``web`` RSA, others EC for speed).

Issuers are seeded through the model and ``issuers.rebuild_chains`` (no HTTP root generation needed);
every test starts from that baseline (``Double.reset``) with the clock back at :data:`T0`.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
import requests
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from pki_leaf_helpers import HOUR, T0, Client

from pytest_schedpki import Double
from pytest_schedpki.clock import ManualClock
from pytest_schedpki.secrets.engines.pki.authority.issuers import rebuild_chains
from pytest_schedpki.secrets.engines.pki.codecs import x509 as pkix
from pytest_schedpki.secrets.engines.pki.model import Issuer, Key

ROOT = {"X-Vault-Token": "root"}

ROLES = {
    "web": {"allowed_domains": ["example.com"], "allow_subdomains": True, "max_ttl": "72h", "ttl": "24h",
            "key_type": "rsa", "key_bits": 2048, "allow_ip_sans": False},
    "ec": {"allowed_domains": ["example.com"], "allow_subdomains": True, "allow_bare_domains": True,
           "key_type": "ec", "key_bits": 256, "max_ttl": "720h", "allowed_uri_sans": ["spiffe://example.com/*"],
           "allow_ip_sans": True},
    "nocn": {"allow_any_name": True, "require_cn": False, "max_ttl": "1h", "key_type": "ec"},
    "othersans": {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec",
                  "allowed_other_sans": ["1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com"]},
    "userids": {"allowed_domains": ["example.com"], "allow_subdomains": True, "allowed_user_ids": ["alice", "bob"],
                "key_type": "ec"},
    "nostore": {"allowed_domains": ["example.com"], "allow_subdomains": True, "no_store": True, "max_ttl": "1h",
                "key_type": "ec"},
    "lease": {"allowed_domains": ["example.com"], "allow_subdomains": True, "generate_lease": True, "ttl": "1h",
              "key_type": "ec"},
    "any": {"allow_any_name": True, "key_type": "any", "ttl": "1h"},
}
INT_ROLES = {"svc": {"allowed_domains": ["svc.example.com"], "allow_subdomains": True, "max_ttl": "24h",
                     "key_type": "ec"}}


def _seed_issuer(state, name, key, subject, issuer=None, ttl=87600 * HOUR):
    signer_cert, signer_key = (None, key) if issuer is None else issuer
    cert = pkix.sign_certificate(
        issuer_cert=signer_cert, issuer_key=signer_key, public_key=key.public_key(), subject=subject,
        serial=pkix.new_serial(), not_before=T0 - datetime.timedelta(seconds=30),
        not_after=T0 + datetime.timedelta(seconds=ttl), is_ca=True, key_usage=["CertSign", "CRLSign"])
    key_type, key_bits = pkix.key_type_of(key)
    key_id, issuer_id = str(uuid.uuid4()), str(uuid.uuid4())
    state.keys[key_id] = Key(key_id, "", key_type, key_bits, key)
    state.issuers[issuer_id] = Issuer(issuer_id, name, cert, key_id)
    if not state.default_issuer_id:
        state.default_issuer_id = issuer_id
    rebuild_chains(state)
    return state.issuers[issuer_id], key


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


@pytest.fixture(scope="session")
def leaf_double():
    """The started Double with the baseline described in the module docstring."""
    clock = ManualClock(T0)
    double = Double(clock=clock).start()
    double.manual_clock = clock
    pki = double.secrets.enable_mount("pki", max_lease_ttl=87600 * HOUR).backend
    root_a, root_a_key = _seed_issuer(pki.state, "root-a", rsa.generate_private_key(65537, 2048),
                                      _name("Example Root CA"))
    _seed_issuer(pki.state, "root-b", ec.generate_private_key(ec.SECP256R1()), _name("Example Root B (EC)"),
                 ttl=43800 * HOUR)
    pki_int = double.secrets.enable_mount("pki_int", max_lease_ttl=43800 * HOUR).backend
    int_key = ec.generate_private_key(ec.SECP256R1())
    _seed_issuer(pki_int.state, "", int_key, _name("Example Intermediate CA"),
                 issuer=(root_a.certificate, root_a_key), ttl=43800 * HOUR)
    # the intermediate mount also holds the root certificate (without its key), as set-signed imports it
    root_copy_id = str(uuid.uuid4())
    pki_int.state.issuers[root_copy_id] = Issuer(root_copy_id, "", root_a.certificate, None)
    rebuild_chains(pki_int.state)
    for mount, roles in (("pki", ROLES), ("pki_int", INT_ROLES)):
        for name, body in roles.items():
            r = requests.post(f"{double.secrets_url}/v1/{mount}/roles/{name}", json=body, headers=ROOT)
            assert r.status_code == 200, r.text
    double.save_baseline()
    yield double
    double.stop()


@pytest.fixture
def bao(leaf_double):
    """Per test: baseline state, clock at T0, no handler errors. Returns a small HTTP helper."""
    leaf_double.reset()
    leaf_double.manual_clock.set(T0)
    leaf_double.pop_handler_errors()
    client = Client(leaf_double)
    yield client
    assert leaf_double.pop_handler_errors() == []
