"""The secrets service reads a request body straight from the journal's body wrapper: the same bytes,
limit and errors werkzeug's ``Request.get_data`` gives through ``max_content_length``."""

from __future__ import annotations

import io

import pytest
import requests
from werkzeug.exceptions import ClientDisconnected
from werkzeug.wrappers import Request

from pytest_schedpki import Double
from pytest_schedpki.wire.middleware import _Captured


class _Broken(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raise ValueError("I/O operation on closed file.")


@pytest.mark.parametrize("size,limit", [(0, 10), (5, 10), (10, 10), (11, 10), (200_000, 1 << 20), (200_000, 70_000)])
def test_read_upto_matches_werkzeug_get_data(size, limit):
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    ours = _Captured(io.BytesIO(body))
    theirs = _Captured(io.BytesIO(body))
    request = Request({"wsgi.input": theirs, "wsgi.input_terminated": True, "REQUEST_METHOD": "POST"})
    request.max_content_length = limit
    assert ours.read_upto(limit) == request.get_data() == body[:limit]
    assert ours.head == theirs.head == body[:limit]


def test_read_upto_broken_stream_is_a_client_disconnect():
    with pytest.raises(ClientDisconnected):
        _Captured(_Broken()).read_upto(100)


def test_issue_body_read_and_journaled():
    double = Double().start()
    try:
        double.route_in_process()
        base, token = double.secrets_url, {"X-Vault-Token": "root"}
        assert requests.post(f"{base}/v1/sys/mounts/pki", json={"type": "pki"}, headers=token).status_code == 204
        answer = requests.post(f"{base}/v1/pki/root/generate/internal", data=b'{"common_name": "body.example.com"}',
                               headers=token)
        assert answer.status_code == 200
        assert answer.json()["data"]["issuer_name"] == ""
        entry = [e for e in double.journal.entries("secrets") if e.path == "/v1/pki/root/generate/internal"][-1]
        assert (entry.status, entry.body) == (200, {"common_name": "body.example.com"})
    finally:
        double.stop()
