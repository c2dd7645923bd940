"""Revocation: ``revoke``/``revoke-with-key`` (``revoke``, input checks in ``revoke_input``),
``issuer/:ref/revoke`` (``issuer_revoke``), CRL building (``crl``) and its paths (``crl_paths``), CRLs
signed on request (``crl_sign``: ``sign-revocation-list``, ``resign-crls``), the OCSP responder
(``ocsp``), tidy (``tidy``) and its paths (``tidy_paths``); ``routes`` is the table.

May import: ``..model``, ``..codecs``, ``..certs``, ``..authority`` (issuer lookup),
``secrets.framework``, ``golang``. Never the service.
"""
