"""Parity: path help (``?help=1``, what ``bao path-help`` sends) - the answer's shape and first lines
(the texts are the double's own), the token check first, 404 for paths no route serves, and
``help=`` (empty) meaning no help."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parity


def _help(first_line: str, route_prefix: str):
    def check(side, resp):
        body = resp.json()
        assert sorted(body) == ["help", "openapi", "see_also"] and body["see_also"] is None
        lines = body["help"].split("\n")
        assert lines[0] == first_line and lines[1].startswith("Matching Route: ^" + route_prefix)
        assert body["openapi"]["openapi"] == "3.0.2" and body["openapi"]["info"]["version"] == "2.7.2"
        assert len(body["openapi"]["paths"]) == 1

    return check


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_help_of_a_pki_path(web, method):
    ex = web.send(method, "/v1/{mount}/issue/web?help=1", **({"json": {}} if method == "POST" else {}))
    ex.same(types_only=True).expect(200).check(_help("Request:        issue/web", "issue/"))
    web.send("GET", "/v1/{mount}/issue/web?help=1", token=None).same().expect(403, errors=["permission denied"])
    web.send("GET", "/v1/{mount}/nope/x?help=1").same().expect(404, errors=["1 error occurred:\n\t* unsupported path\n\n"])


@pytest.mark.parametrize(("path", "first", "prefix"), [
    ("sys/leader", "Request:        leader", "leader"),
    ("auth/token/create", "Request:        create", "create"),
])
def test_help_of_sys_and_token_paths(pair, path, first, prefix):
    pair.send("GET", f"/v1/{path}?help=0").same(types_only=True).expect(200).check(_help(first, prefix))


def test_empty_help_is_no_help(pair):
    pair.send("GET", "/v1/sys/leader?help=", token=None).same().expect(200)
