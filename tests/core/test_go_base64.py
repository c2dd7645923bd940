"""``golang.base64.go_base64_error``: Go's ``StdEncoding.Decode`` failure texts, and the regular
expression that accepts well-formed input before the byte-by-byte walk (both must agree)."""

from __future__ import annotations

import random
import re

import pytest

from pytest_schedpki.golang import base64 as go_base64


@pytest.mark.parametrize(("data", "error"), [
    (b"", None),
    (b"QUJD", None),
    (b"QUI=", None),
    (b"QQ==", None),
    (b"QUJD\r\nREVG", None),
    (b"QUJ", "illegal base64 data at input byte 0"),
    (b"QQ=", "illegal base64 data at input byte 3"),
    (b"QQ==QUJD", "illegal base64 data at input byte 4"),
    (b"Q===", "illegal base64 data at input byte 1"),
    (b"QUJD!", "illegal base64 data at input byte 4"),
    (b"QUI=\r\n", None),
])
def test_go_texts(data, error):
    assert go_base64.go_base64_error(data) == error


def test_the_regular_expression_agrees_with_the_walk_on_random_input(monkeypatch):
    rng = random.Random(20261125)
    alphabet = b"AZaz09+/=\r\n!"
    samples = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(30_000)]
    fast = [go_base64.go_base64_error(s) for s in samples]
    monkeypatch.setattr(go_base64, "_VALID", re.compile(rb"(?!)"))  # never matches: the walk decides all
    walk = [go_base64.go_base64_error(s) for s in samples]
    assert fast == walk
    assert sum(e is None for e in walk) > 1000  # the sample holds plenty of valid input
