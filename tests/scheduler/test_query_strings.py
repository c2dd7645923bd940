"""Query strings as Nomad reads them: ``req.URL.Query()`` is Go's ``url.ParseQuery`` with its error
ignored, so a pair holding ``;`` or an invalid escape is dropped (werkzeug's ``request.args`` keeps
it verbatim, which made ``?stale=%zz`` a 400). Sent over a raw socket: ``requests`` re-quotes ``%zz``."""

from __future__ import annotations

import json
import socket

import pytest
from sched_helpers import MANAGEMENT

STALE_ERROR = "Expect `true` or `false` for `stale` query string parameter"


def _get(sched, target: str) -> tuple[int, bytes]:
    host, port = sched.url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nX-Nomad-Token: {MANAGEMENT}\r\nConnection: close\r\n\r\n"
                     .encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize("query", ["stale=%zz", "stale=x;y", "%zz=1&stale", "stale=true;", "per_page=%&stale=1"])
def test_pairs_go_cannot_read_are_dropped(sched, query):
    assert _get(sched, f"/v1/acl/policies?{query}") == (200, b"[]")


@pytest.mark.parametrize("query", ["stale=nope", "stale=nope&stale=true", "st%61le=maybe"])
def test_pairs_go_reads_are_checked(sched, query):
    status, body = _get(sched, f"/v1/acl/policies?{query}")
    assert (status, body.decode()) == (400, STALE_ERROR)


def test_pretty_comes_from_the_same_reading(sched):
    """``?pretty`` ends the token (a struct with its own JSON encoding, written compact) with a
    newline; ``pretty=%zz;`` is dropped, so the bare ``pretty`` that follows is the first value."""
    status, body = _get(sched, "/v1/acl/token/self?pretty=%zz;&pretty")
    assert status == 200 and body.endswith(b"}\n") and json.loads(body)["Type"] == "management"
    status, body = _get(sched, "/v1/acl/token/self?pretty=0&pretty")
    assert status == 200 and body.endswith(b"}") and json.loads(body)["Type"] == "management"
