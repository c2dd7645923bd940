"""``codecs.goparse``: the extension value reads that parity tests cannot reach without building a
certificate around each case (the parity cases are in tests/parity/test_parity_cert_parse_errors.py)."""

from __future__ import annotations

import pytest

from pytest_schedpki.secrets.engines.pki.codecs import goparse


@pytest.mark.parametrize("check", [goparse._authority_info_access, goparse._certificate_policies,
                                   goparse._crl_distribution_points, goparse._ext_key_usage,
                                   goparse._subject_alt_names])
def test_an_empty_sequence_is_read_without_complaint(check):
    assert check(b"\x30\x00") is None  # Go's loops over the members simply do not run


@pytest.mark.parametrize(("check", "text"), [
    (goparse._authority_info_access, "x509: invalid authority info access"),
    (goparse._certificate_policies, "x509: invalid certificate policies"),
    (goparse._crl_distribution_points, "x509: invalid CRL distribution points"),
    (goparse._ext_key_usage, "x509: invalid extended key usages"),
    (goparse._subject_alt_names, "x509: invalid subject alternative names"),
    (goparse._basic_constraints, "x509: invalid basic constraints"),
])
def test_a_value_that_is_no_sequence_is_refused_with_go_text(check, text):
    assert check(b"\x02\x01\x01") == text
