"""``golang.url.go_parse_query``: Go's ``url.ParseQuery`` with its errors ignored, as ``r.URL.Query()``
and ``r.ParseForm`` read a query or a form body (checked against OpenBao over raw sockets in
``tests/parity/test_parity_framing.py``)."""

from __future__ import annotations

import pytest

from pytest_schedpki.golang.url import go_parse_query


@pytest.mark.parametrize("query, expected", [
    ("", {}),
    ("a=1&a=2&b", {"a": ["1", "2"], "b": [""]}),
    ("list=true;x=1&y=2", {"y": ["2"]}),  # a pair holding ';' is dropped (Go >= 1.17)
    ("list=%zz&k=%41", {"k": ["A"]}),  # an invalid escape drops its pair
    ("%zz=1&list=true", {"list": ["true"]}),
    ("a=%", {}), ("a=%4", {}), ("a=%4g", {}),
    ("l%69st=t+r%20ue", {"list": ["t r ue"]}),
    ("&&a=1&", {"a": ["1"]}),
    ("a==b", {"a": ["=b"]}),
    ("a=%C3%A9&b=%FF", {"a": ["\u00e9"], "b": ["\ufffd"]}),
])
def test_pairs_as_go_reads_them(query, expected):
    assert go_parse_query(query) == expected
