"""Everything that signs a certificate: roles (``roles``), ``issue``/``sign`` (``issue``, ``leaf``),
``sign-intermediate``, ``sign-self-issued``, ``sign-verbatim``, the shared CSR handling
(``csr_signing``), the role policy for names/SANs/keys (``policy``), a role's certificate policies
(``policy_identifiers``) and validity and TTL rules
(``validity``); ``routes`` is the table.

May import: ``..model``, ``..codecs``, ``..authority`` (the signing issuer), ``..enterprise`` (its
gate and ``cert_metadata``), ``secrets.framework``, ``golang``. Never the service.
"""
