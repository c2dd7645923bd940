"""The scheduler's request pipeline shortcuts against what they stand for (issue 27):

* :func:`~pytest_schedpki.scheduler.request.reply` sends the very status line, headers (order
  included) and body werkzeug's ``Response`` sends, or raises what it raises;
* :func:`~pytest_schedpki.scheduler.request.clean_path` equals the full cleaning on any path;
* :class:`~pytest_schedpki.scheduler.request.LazyRequest` has werkzeug's ``path``;
* the JSON remembered per stored record follows every write: a policy rewritten, an auth method
  updated, a token's role renamed or deleted.
"""

from __future__ import annotations

import posixpath
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.wrappers import Request, Response

from pytest_schedpki.scheduler.request import PLAIN, LazyRequest, clean_path, reply

_STATUSES = [200, 201, 299, 400, 403, 404, 405, 413, 429, 500, 599, 101, 204, 304]
_HEADERS = [None, {}, {"X-Nomad-Index": "7"},
            {"X-Nomad-KnownLeader": "true", "X-Nomad-LastContact": "0", "X-Nomad-Index": "3"},
            {"X-Nomad-Index": "1", "content-type": "text/html", "X-Other": "a"},
            {"Content-Type": "a/b", "X-Nomad-NextToken": "5.abc", "CONTENT-TYPE": "c/d"},
            {"X-Nomad-Index": 5}]


def _sent(answer, method: str = "GET"):
    environ = {"REQUEST_METHOD": method, "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "4646", "wsgi.url_scheme": "http",
               "PATH_INFO": "/v1/x", "QUERY_STRING": "", "SCRIPT_NAME": ""}
    got = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, list(headers)

    body = b"".join(answer(environ, start_response))
    return got["status"], got["headers"], body


@pytest.mark.parametrize("status", _STATUSES)
@pytest.mark.parametrize("headers", _HEADERS)
@pytest.mark.parametrize("content_type", ["application/json", PLAIN, None])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_reply_sends_what_werkzeug_sends(status, headers, content_type, method):
    for body in ("", "ACL auth-method not found", '{"Name":"ü<&>"}'):
        expected = Response(body, status=status, content_type=content_type or PLAIN,
                            headers=None if headers is None else dict(headers))
        if content_type is None:
            del expected.headers["Content-Type"]
        assert _sent(reply(body, status, content_type, headers), method) == _sent(expected, method)


def test_reply_refuses_a_line_break_as_werkzeug_does():
    with pytest.raises(ValueError) as ours:
        reply("x", 200, "application/json", {"X-Nomad-NextToken": "a\r\nSet-Cookie: x"})
    with pytest.raises(ValueError) as theirs:
        Response("x", status=200, content_type="application/json", headers={"X-Nomad-NextToken": "a\r\nSet-Cookie: x"})
    assert str(ours.value) == str(theirs.value)


_SLASHES = re.compile(r"/{2,}")


def _full_clean(path: str) -> str:
    if not path.startswith("/"):
        path = "/" + path
    cleaned = posixpath.normpath(_SLASHES.sub("/", path))
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    if path.endswith("/") and cleaned != "/":
        cleaned += "/"
    return cleaned


@given(st.lists(st.sampled_from(["", ".", "..", "a", "b.", ".c", "...", "x..y", "/", "ü"]), max_size=8),
       st.booleans())
def test_clean_path_equals_the_full_cleaning(parts, rooted):
    path = ("/" if rooted else "") + "/".join(parts)
    assert clean_path(path) == _full_clean(path)


@pytest.mark.parametrize("path_info", ["", "/", "/v1/acl/tokens", "//v1//acl/", "v1/x", "/v1/acl/policy/\u00c3\u00bc",
                                       "/v1/\u00ff\u00fe", "///"])
def test_lazy_request_path_is_werkzeugs(path_info):
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path_info, "QUERY_STRING": "a=1", "SERVER_NAME": "h",
               "SERVER_PORT": "1", "wsgi.url_scheme": "http"}
    lazy = LazyRequest(dict(environ))
    assert lazy.path == Request(dict(environ)).path
    assert lazy.args["a"] == "1"  # everything else comes from werkzeug's request


def test_remembered_json_follows_every_write(sched):
    assert sched.put("/v1/acl/policy/p1", json={"Name": "p1", "Rules": 'node { policy = "read" }'}).status_code == 200
    first = sched.get("/v1/acl/policy/p1").json()
    assert first["RulesJSON"]["Node"]["Policy"] == "read"
    assert sched.put("/v1/acl/policy/p1", json={"Name": "p1", "Rules": 'node { policy = "write" }'}).status_code == 200
    assert sched.get("/v1/acl/policy/p1").json()["RulesJSON"]["Node"]["Policy"] == "write"

    role = sched.post("/v1/acl/role", json={"Name": "r1", "Policies": [{"Name": "p1"}]}).json()
    token = sched.post("/v1/acl/token", json={"Name": "t", "Type": "client", "Roles": [{"ID": role["ID"]}]}).json()
    me = sched.get("/v1/acl/token/self", token=token["SecretID"]).json()
    assert me["Roles"] == [{"ID": role["ID"], "Name": "r1"}]
    renamed = sched.post(f"/v1/acl/role/{role['ID']}", json={"ID": role["ID"], "Name": "r2",
                                                                "Policies": [{"Name": "p1"}]})
    assert renamed.status_code == 200
    assert sched.get("/v1/acl/token/self", token=token["SecretID"]).json()["Roles"] == [{"ID": role["ID"], "Name": "r2"}]
    assert sched.get(f"/v1/acl/token/{token['AccessorID']}").json()["Roles"] == [{"ID": role["ID"], "Name": "r2"}]
    sched.delete(f"/v1/acl/role/{role['ID']}")
    assert sched.get(f"/v1/acl/token/{token['AccessorID']}").json()["Roles"] is None
    listed = {t["AccessorID"]: t for t in sched.get("/v1/acl/tokens").json()}
    assert listed[token["AccessorID"]]["Roles"] == [{"ID": role["ID"], "Name": ""}]  # the list shows stored links

    method = {"Name": "m1", "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h", "Config": {"JWKSURL": "https://idp.example.com/jwks"}}
    assert sched.put("/v1/acl/auth-method", json=method).status_code == 200
    assert sched.get("/v1/acl/auth-method/m1").json()["MaxTokenTTL"] == "1h0m0s"
    assert sched.put("/v1/acl/auth-method/m1", json={**method, "MaxTokenTTL": "2h"}).status_code == 200
    assert sched.get("/v1/acl/auth-method/m1").json()["MaxTokenTTL"] == "2h0m0s"
