"""Contract: python-nomad 2.x's token methods (``generate_bootstrap``, ``create_token``, ``update_token``,
``get_token``, ``get_tokens``, ``get_self_token``, ``delete_token``) and ``create_policy`` with rules,
against a fresh double (``bootstrap=False``), as ``nomad/acl_endpoint.go`` answers them."""

from __future__ import annotations

import nomad
import nomad.api.exceptions as nomad_exc
import pytest


@pytest.mark.schedpki(bootstrap=False)
def test_bootstrap_policy_token_lifecycle(schedpki):
    url = schedpki.scheduler.url
    boot = nomad.Nomad(address=url).acl.generate_bootstrap()
    assert (boot["Type"], boot["Name"]) == ("management", "Bootstrap Token")
    with pytest.raises(nomad_exc.BaseNomadException) as err:
        nomad.Nomad(address=url).acl.generate_bootstrap()
    assert err.value.nomad_resp.status_code == 400
    admin = nomad.Nomad(address=url, token=boot["SecretID"])
    r = admin.acl.create_policy("dev", {"Name": "dev", "Rules": 'namespace "*" { policy = "write" }'})
    assert r.status_code == 200
    token = admin.acl.create_token({"Name": "dev", "Type": "client", "Policies": ["dev"]})
    schedpki.scheduler.assert_allowed(token, "namespace:default:submit-job", "namespace:web:dispatch-job")
    schedpki.scheduler.assert_allowed(token, "namespace:default:alloc-exec")  # write includes it (expandNamespacePolicy)
    schedpki.scheduler.assert_denied(token, "operator:read", "namespace:default:alloc-node-exec",
                                     "namespace:default:host-volume-delete")
    me = nomad.Nomad(address=url, token=token["SecretID"]).acl.get_self_token()
    assert me["AccessorID"] == token["AccessorID"]
    token["Name"] = "dev2"
    assert admin.acl.update_token(token["AccessorID"], token)["Name"] == "dev2"
    assert admin.acl.get_token(token["AccessorID"])["SecretID"] == token["SecretID"]
    assert len(admin.acl.get_tokens()) == 2
    assert admin.acl.delete_token(token["AccessorID"]) is True
    with pytest.raises(nomad_exc.BaseNomadException) as err:
        nomad.Nomad(address=url, token=token["SecretID"]).acl.get_self_token()
    assert err.value.nomad_resp.status_code == 403
