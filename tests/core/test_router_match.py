"""The router's shortcuts (literal prefixes, per-segment candidate lists) find exactly what trying
every path's regex in order finds, with the Enterprise emulation off and on."""

from __future__ import annotations

import pytest

from pytest_schedpki import Double
from pytest_schedpki.cli import default_seed_path
from pytest_schedpki.secrets.framework.router import literal_prefix
from pytest_schedpki.secrets.system.routes import SYS_ROUTER, TOKEN_ROUTER


@pytest.mark.parametrize("pattern, prefix", [
    ("issue/(?P<role>\\w+)", "issue/"), ("certs/?", "certs"), ("cert/(?!ca)x", "cert/"), ("a|b", ""),
    ("(a|b)c", ""), ("config/urls", "config/urls"), ("x{2}", ""), ("abc*", "ab"), ("a[|]b|c", ""),
    ("ab\\|c", "ab"), ("a[]|]x", "a"), ("(?P<serial>[0-9a-f:-]+)", ""), ("keys/generate/(?P<t>a|b)", "keys/generate/"),
])
def test_literal_prefix(pattern, prefix):
    assert literal_prefix(pattern) == prefix


def _every_regex(router, path):
    for candidate in router.paths:
        found = candidate.regex.match(path)
        if found:
            return candidate, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


def test_router_match_equals_trying_every_path_in_order():
    double = Double()
    double.seed(default_seed_path())
    routers = [SYS_ROUTER, TOKEN_ROUTER, double.secrets.mounts["pki/"].backend.router]
    samples = ["", "x", "health", "issue/web", "sign/web", "issuer/default/issue/web", "cert/ca", "cert/ca/raw/pem",
               "cert/01:02", "certs", "certs/", "certs/revoked", "crl", "crl/pem", "roles", "roles/", "roles/x",
               "sign-verbatim", "sign-verbatim/x", "keys/generate/internal", "mounts/pki/tune", "lookup-self",
               "issuer/root/external-policy/issue/p"]
    for router in routers:
        for route in router.paths:
            samples += [route.prefix + tail for tail in ("", "x", "/x", "abc/def", "ca", "ab:cd", "root/issue/web")]
            samples.append(route.prefix[:-1])
    for enterprise in (False, True):
        double.secrets.enterprise = enterprise
        for router in routers:
            for path in samples:
                mine, expected = router.match(path), _every_regex(router, path)
                assert (mine is None and expected is None) or (mine[0] is expected[0] and mine[1] == expected[1]), path
