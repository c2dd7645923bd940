"""Differential fuzzing of the double against a real ``bao server -dev``.

* :mod:`.requests_gen` - Hypothesis strategies for request sequences over every PKI path of the
  API document (valid, boundary and hostile values) and the per-side references they carry
  (issued serials, certificates, keys, issuer ids).
* :mod:`.material` - pre-built keys, CSRs and certificates the strategies pick from.
* :mod:`.compare` - the normaliser (serial/id mapping, validity tolerance) and the comparison.
* :mod:`.allowlist` - the intentional divergences, each pointing at its row in docs/divergences.md.
* :mod:`.runner` - sets both servers up identically per sequence, sends, compares, reports.

Used by ``tests/parity/test_differential.py`` (small CI profile, ``SCHEDPKI_DIFF_SCALE`` scales it)
and ``scripts/differential.py`` (``A/N agree`` per seed, causes grouped).
"""
