"""The building blocks on ``cryptography``: the certificate profile and PEM output (``x509``), Go's
PEM/ASN.1 input rules (``pem``), key material (``keys``, drawing from the key pool ``keypool``
with optional deterministic keys ``detkeys``), CSRs (``csr``), CRL encoding (``crl``), OCSP requests
read as Go reads them and responses signed (``ocsp``), RFC 3339
times (``rfc3339``), X.509 pieces written the way Go writes them (``goder``), and Go's certificate
parse errors (``goparse``, on the reads of ``cryptobyte``; public keys: ``gokey``).

May import: ``secrets.framework.logical`` (error values), ``golang``, ``process`` (the key pool's
key making is native work the process exit waits for), each other. Nothing else of
the engine: everything in it may import codecs.
"""
