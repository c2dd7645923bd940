"""Vault Enterprise's PKI extras, emulated only while ``SecretsService.enterprise`` is on: the
route gate (``gate``), ``cert_metadata``, and the external policy service (CIEPS) paths
(``external_policy``) with its webhook client (``external_policy_client``); ``routes`` is the table.

May import: ``..model``, ``..codecs``, ``..issuance`` (leaf output), ``secrets.framework``,
``golang``. Never the service.
"""
