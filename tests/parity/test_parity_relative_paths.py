"""Parity: dot segments that appear only after percent-decoding are refused before any token check
(400 ``relative paths not supported``); ``..`` inside a segment is an ordinary name."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


# (requests turns %2E into "." itself, so only %2F-encoded dot segments reach the servers encoded)
@pytest.mark.parametrize("path", ["one%2F..%2Ftwo", "{mount}/roles/one%2F..%2Ftwo", "sys/policy/a%2F..%2Fb",
                                  "{mount}%2F.%2Fx", "sys/mounts/x%2F..%2Fy"])
@pytest.mark.parametrize("token", ["root", None])
def test_encoded_dot_segments(pair, path, token):
    pair.send("GET", "/v1/" + path, token=token).same().expect(400, errors=["relative paths not supported"])
    pair.send("POST", "/v1/" + path, json={}, token=token).same().expect(400, errors=["relative paths not supported"])


def test_dots_inside_a_name_are_a_name(pair):
    pair.enable_pki(max_lease_ttl=None)
    pair.send("GET", "/v1/{mount}/roles/a..b").same().expect(404, errors=[])
    pair.send("GET", "/v1/{mount}/roles/a..b", token=None).same().expect(403, errors=["permission denied"])
