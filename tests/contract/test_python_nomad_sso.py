"""Contract: python-nomad 2.x's ACL token and policy methods (``get_self_token``, ``get_token``,
``get_tokens``, ``create_policy``, ``get_policy``, ``get_policies``, ``delete_policy``) against the
tokens login creates and the policies binding needs (Nomad's ``ACL.GetToken``/``ResolveToken``,
``ACL.UpsertPolicies``/``GetPolicy``; reference/nomad-acl-sso.md §4, §9). Login itself goes through
the generic ``acl.request("login", ...)``, as python-nomad has no login method."""

from __future__ import annotations

import nomad
import nomad.api.exceptions as nomad_exc
import pytest


@pytest.fixture
def n(schedpki):
    return nomad.Nomad(address=schedpki.scheduler.url, token=schedpki.scheduler.token, namespace="default",
                       region="global")


def test_policies_and_login_tokens(schedpki, n):
    assert n.acl.create_policy("eng", {"Name": "eng", "Rules": ""}).status_code == 200
    assert n.acl.get_policy("eng")["Name"] == "eng"
    assert [p["Name"] for p in n.acl.get_policies()] == ["eng"]
    schedpki.factories.scheduler.jwt_auth_method("ci", builtin_idp=True)
    schedpki.factories.scheduler.binding_rule("ci", "policy", "eng")
    token = n.acl.request("login", method="post", json={"AuthMethodName": "ci",
                                                        "LoginToken": schedpki.scheduler.jwt("ci", {})}).json()
    assert token["Policies"] == ["eng"]
    as_user = nomad.Nomad(address=schedpki.scheduler.url, token=token["SecretID"])
    assert as_user.acl.get_self_token()["AccessorID"] == token["AccessorID"]
    assert n.acl.get_token(token["AccessorID"])["Name"] == "JWT-ci"
    assert token["AccessorID"] in [t["AccessorID"] for t in n.acl.get_tokens()]
    assert n.acl.delete_policy("eng") is True
    with pytest.raises(nomad_exc.BaseNomadException):
        as_user.acl.get_policy("eng")
