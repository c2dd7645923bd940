"""A raw answer with handler headers (ACME's ``Replay-Nonce``, ``Link``, ``Location``) is sent as the
werkzeug ``Response`` the double built before would send it: the same WSGI status, header lines in
the same order and body, for GET and HEAD, with and without a content type, a header sent twice, a
handler's own ``Content-Type``; values werkzeug refuses or frames specially still go to werkzeug."""

from __future__ import annotations

import pytest
from werkzeug.wrappers import Response

from pytest_schedpki.secrets.framework.logical import JSON_HEADERS, LogicalResponse
from pytest_schedpki.wire.bytes_response import BytesResponse

LINK = '<http://127.0.0.1:8200/v1/pki/acme/directory>;rel="index"'
NONCE = "dmF1bHQwAbCdEf"


def _werkzeug(body: bytes, status: int, content_type: str, handler_headers: dict) -> Response:
    """What LogicalResponse.to_response built for these answers before (werkzeug throughout)."""
    headers = {**JSON_HEADERS, **handler_headers}
    lines = [(k, item) for k, v in headers.items() for item in (v if isinstance(v, list) else [v])]
    response = Response(body, status=status, headers=lines, content_type=content_type or None)
    if not content_type:
        del response.headers["Content-Type"]
    return response


def _wsgi(app, method: str) -> tuple[str, list[tuple[str, str]], bytes]:
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"], seen["headers"] = status, list(headers)

    body = b"".join(app({"REQUEST_METHOD": method}, start_response))
    return seen["status"], seen["headers"], body


CASES = [
    (b"", 200, "", {"Cache-Control": "no-store", "Replay-Nonce": NONCE, "Link": LINK}),  # HEAD new-nonce
    (b'{"status":"valid"}', 201, "application/json", {"Location": "http://x/account/1", "Replay-Nonce": NONCE,
                                                      "Link": LINK}),
    (b"{}", 200, "application/json", {"Replay-Nonce": NONCE, "Link": ["<http://x/authz/1>;rel=\"up\"", LINK]}),
    (b"-----BEGIN", 200, "application/pem-certificate-chain", {"Link": [LINK, LINK], "content-type": "text/x"}),
    (b"x", 400, "", {"Content-Type": "text/plain", "Link": LINK, "CONTENT-TYPE": "a/b"}),
    (b"", 404, "application/problem+json", {"Retry-After": "5"}),
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_raw_answer_with_headers_is_sent_as_werkzeug_sent_it(case, method):
    body, status, content_type, headers = case
    answer = LogicalResponse(raw=(body, content_type), status=status, headers=dict(headers)).to_response()
    assert isinstance(answer, BytesResponse)
    assert _wsgi(answer, method) == _wsgi(_werkzeug(body, status, content_type, headers), method)


@pytest.mark.parametrize("status, headers", [
    (204, {"Replay-Nonce": NONCE, "Link": LINK}),  # GET new-nonce: werkzeug drops the framing itself
    (200, {"Link": "a\r\nX-Injected: 1"}),  # werkzeug refuses a value with CR/LF
    (200, {"Link": ["a", 5]}),
    (200, {"Content-Length": "3"}),
])
def test_answers_werkzeug_treats_specially_are_left_to_it(status, headers):
    response = LogicalResponse(raw=(b"", ""), status=status, headers=headers)
    if "\r\n" in str(headers.get("Link")):
        with pytest.raises(ValueError):
            response.to_response()
        return
    assert not isinstance(response.to_response(), BytesResponse)
