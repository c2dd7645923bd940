import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization


def test_the_same_keys_on_every_run(schedpki, schedpki_settings):
    assert (schedpki_settings.rsa_key_pool, schedpki_settings.deterministic_keys) == (16, "my-suite")
    root = schedpki.factories.secrets.root_issuer("pki", key_type="ec")     # the session's first EC P-256 key
    public_key = x509.load_pem_x509_certificate(root["certificate"].encode()).public_key()
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert hashlib.sha256(der).hexdigest()[:16] == "da43e31bf6fae335"   # on every run and every machine
