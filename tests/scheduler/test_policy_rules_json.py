"""``GET /v1/acl/policy/:name`` fills ``RulesJSON`` from the rules, parsed leniently on every read
(``nomad/acl_endpoint.go`` ``GetPolicy``: ``reply.Policy.RulesJSON = acl.Parse(out.Rules, lenient)``)."""

from __future__ import annotations


def test_rules_json_is_the_parsed_policy_with_expanded_capabilities(sched):
    rules = 'namespace "default" {\n  policy = "read"\n  capabilities = ["submit-job"]\n}\nnode { policy = "write" }'
    assert sched.put("/v1/acl/policy/eng", json={"Name": "eng", "Rules": rules}).status_code == 200
    body = sched.get("/v1/acl/policy/eng").json()
    rj = body["RulesJSON"]
    assert list(rj) == ["Namespaces", "NodePools", "HostVolumes", "Agent", "Node", "Operator", "Sentinel", "Quota",
                        "Plugin", "Raw", "ExtraKeysHCL"]
    assert rj["Namespaces"] == [{"Name": "default", "Policy": "read", "Variables": None, "Capabilities": [
        "submit-job", "list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling",
        "list-scaling-policies", "read-scaling-policy", "host-volume-read"]}]
    assert (rj["NodePools"], rj["HostVolumes"], rj["Agent"], rj["Node"], rj["Raw"]) == (
        None, None, None, {"Policy": "write"}, rules)
    assert body["JobACL"] is None
    assert "RulesJSON" not in sched.get("/v1/acl/policies").json()[0]  # the list stub has no rules


def test_empty_rules_give_an_empty_policy(sched):
    assert sched.put("/v1/acl/policy/empty", json={"Name": "empty", "Rules": ""}).status_code == 200
    rj = sched.get("/v1/acl/policy/empty").json()["RulesJSON"]
    assert rj == {"Namespaces": None, "NodePools": None, "HostVolumes": None, "Agent": None, "Node": None,
                  "Operator": None, "Sentinel": None, "Quota": None, "Plugin": None, "Raw": "", "ExtraKeysHCL": None}


def test_deleting_an_unknown_policy_moves_the_policy_table_index(sched):
    """``DeleteACLPolicies`` writes the ``acl_policy`` index whatever the names (nomad/state/state_store.go)."""
    r = sched.delete("/v1/acl/policy/ghost")
    assert r.status_code == 200
    assert sched.get("/v1/acl/policies").headers["X-Nomad-Index"] == r.headers["X-Nomad-Index"]
