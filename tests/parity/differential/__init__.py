"""Differential fuzzing of the double against a real ``bao server -dev``.

* :mod:`.requests_gen` - Hypothesis strategies for request sequences over every PKI path of the
  API document (valid, boundary and hostile values) and the per-side references they carry
  (issued serials, certificates, keys, issuer ids).
* :mod:`.material` - pre-built keys, CSRs and certificates the strategies pick from.
* :mod:`.compare` - the normaliser (serial/id mapping, validity tolerance) and the comparison.
* :mod:`.allowlist` - the intentional divergences, each pointing at its row in docs/divergences.md.
* :mod:`.runner` - sets both servers up identically per sequence, sends, compares, reports.
* :mod:`.token_gen`, :mod:`.token_runner` - the token family: the token store and the sys paths
  clients use (create/lookup/renew/revoke by token, self and accessor, roles, ACL policies,
  capabilities, mounts and tune, health/seal-status/leader), requests sent with tokens the sequence
  created;
* :mod:`.ocsp_gen` - the ocsp family: OCSP queries (GET and POST, valid and damaged, known and unknown
  serials and issuers) among issue, revoke, ``config/crl`` and issuer usage writes, run by
  :class:`.runner.Runner`; :mod:`.campaign` ``FAMILIES`` names the three families.

Used by ``tests/parity/test_differential.py`` (small CI profile, ``SCHEDPKI_DIFF_SCALE`` scales it)
and ``scripts/differential.py`` (``A/N agree`` per seed, causes grouped).
"""
