"""ACL binding rules over HTTP: Nomad's ``ACL.UpsertBindingRules``, ``DeleteBindingRules``,
``GetBindingRule``, ``ListBindingRules`` (nomad/acl_endpoint.go), ``ACLBindingRule.Validate``
(nomad/structs/acl.go) and the agent's ``ACLBindingRuleRequest``/``aclBindingRuleUpsertRequest``
(command/agent/acl_endpoint.go); reference nomad-acl-sso.md §3."""

import base64
import datetime
import hashlib
import threading
import uuid

import pytest
from sched_helpers import assert_plain, mock_oidc

from pytest_schedpki.clock import ManualClock

T0 = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def rule_body(**overrides):
    body = {"Description": "engineers", "AuthMethod": "sso", "Selector": 'value.team == "eng"',
            "BindType": "policy", "BindName": "eng-${value.team}"}
    body.update(overrides)
    return body


@pytest.fixture
def s(sched):
    sched.create(mock_oidc("sso"))  # raft index 2
    return sched


def create(s, **overrides):
    r = s.put("/v1/acl/binding-rule", json=rule_body(**overrides))
    assert r.status_code == 200, r.text
    return r


def test_create_answers_the_stored_rule_in_nomads_shape(s):
    r = create(s)
    body = r.json()
    assert list(body) == ["ID", "Description", "AuthMethod", "Selector", "BindType", "BindName", "Hash",
                          "CreateTime", "ModifyTime", "CreateIndex", "ModifyIndex"]
    assert str(uuid.UUID(body["ID"])) == body["ID"]
    assert (body["CreateIndex"], body["ModifyIndex"], r.headers["X-Nomad-Index"]) == (3, 3, "3")
    assert body["CreateTime"] == body["ModifyTime"] and body["CreateTime"].endswith("Z")
    digest = hashlib.blake2b(digest_size=32)
    for part in (body["ID"], "engineers", "sso", 'value.team == "eng"', "policy", "eng-${value.team}"):
        digest.update(part.encode())
    assert base64.b64decode(body["Hash"]) == digest.digest()  # ACLBindingRule.SetHash
    assert r.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(("body", "errors"), [
    ({}, ["auth method is missing", "bind type is missing"]),
    (rule_body(AuthMethod="", BindType="role", BindName=""), ["auth method is missing", "bind name is missing"]),
    (rule_body(BindType="management"), ["bind name should be empty"]),
    (rule_body(BindType="Policy"), ['unsupported bind type: "Policy"']),
    (rule_body(Description="d" * 257), ["description longer than 256"]),
])
def test_validation_collects_nomads_errors_in_order(s, body, errors):
    """ACLBindingRule.Validate: go-multierror text under ``binding rule 0 invalid: ``."""
    r = s.put("/v1/acl/binding-rule", json=body)
    if len(errors) == 1:
        text = f"binding rule 0 invalid: 1 error occurred:\n\t* {errors[0]}\n\n"
    else:
        text = f"binding rule 0 invalid: {len(errors)} errors occurred:\n\t" + "\n\t".join(
            f"* {e}" for e in errors) + "\n\n"
    assert_plain(r, 400, text)
    assert s.state.last_index == 2  # refused before raft


def test_a_selector_that_does_not_parse_is_refused_with_the_parser_position(s):
    r = s.put("/v1/acl/binding-rule", json=rule_body(Selector="value.team =="))
    assert r.status_code == 400
    assert r.text == ("binding rule 0 invalid: 1 error occurred:\n\t* selector is invalid: 1:14 (13): no match "
                      'found, expected: "-", "0", "\\"", "`", [ \\t\\r\\n], [1-9] or [a-zA-Z]\n\n')


def test_an_unknown_field_in_the_selector_parses(s):
    assert create(s, Selector='foo == "x"').json()["Selector"] == 'foo == "x"'


def test_the_auth_method_must_exist_after_validation(s):
    assert_plain(s.put("/v1/acl/binding-rule", json=rule_body(AuthMethod="nope")), 400,
                 "ACL auth method nope not found")


def test_update_merges_bind_fields_but_clears_description_and_selector(s):
    rule = create(s).json()
    r = s.put(f"/v1/acl/binding-rule/{rule['ID']}", json={"BindName": "ops"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["AuthMethod"], got["BindType"], got["BindName"]) == ("sso", "policy", "ops")
    assert (got["Description"], got["Selector"]) == ("", "")
    assert (got["CreateIndex"], got["ModifyIndex"], r.headers["X-Nomad-Index"]) == (3, 4, "4")
    assert got["CreateTime"] == rule["CreateTime"]


def test_a_no_op_update_keeps_the_old_modify_index_but_consumes_an_index(s):
    rule = create(s).json()
    r = s.put(f"/v1/acl/binding-rule/{rule['ID']}", json=rule_body())
    assert r.status_code == 200
    assert (r.json()["ModifyIndex"], r.json()["ModifyTime"], r.headers["X-Nomad-Index"]) == (
        3, rule["ModifyTime"], "4")
    assert s.get("/v1/acl/binding-rules").headers["X-Nomad-Index"] == "3"  # the table did not move


def test_update_path_and_body_ids(s):
    rule = create(s).json()
    assert_plain(s.put(f"/v1/acl/binding-rule/{rule['ID']}", json={"ID": str(uuid.uuid4())}), 400,
                 "ACL binding rule ID does not match request path")
    unknown = str(uuid.uuid4())
    assert_plain(s.put(f"/v1/acl/binding-rule/{unknown}", json=rule_body()), 400,
                 f"cannot find binding rule {unknown}")
    assert_plain(s.put("/v1/acl/binding-rule", json=rule_body(ID=unknown)), 400, f"cannot find binding rule {unknown}")
    s.create(mock_oidc("other"))
    assert_plain(s.put(f"/v1/acl/binding-rule/{rule['ID']}", json={"AuthMethod": "other"}), 400,
                 "cannot update auth method for binding rule, create a new rule instead")


def test_read_list_and_delete(s):
    a, b = create(s).json(), create(s, BindType="management", BindName="").json()
    listed = s.get("/v1/acl/binding-rules")
    assert listed.status_code == 200 and listed.headers["X-Nomad-Index"] == "4"
    assert [x["ID"] for x in listed.json()] == sorted([a["ID"], b["ID"]])
    assert list(listed.json()[0]) == ["ID", "Description", "AuthMethod", "Hash", "CreateIndex", "ModifyIndex"]
    got = s.get(f"/v1/acl/binding-rule/{a['ID']}")
    assert got.json() == a and got.headers["X-Nomad-Index"] == "3"
    deleted = s.delete(f"/v1/acl/binding-rule/{a['ID']}")
    assert (deleted.status_code, deleted.content, deleted.headers["X-Nomad-Index"]) == (200, b"", "5")
    missing = s.get(f"/v1/acl/binding-rule/{a['ID']}")
    assert_plain(missing, 404, "ACL binding rule not found")
    assert missing.headers["X-Nomad-Index"] == "5"
    again = s.delete(f"/v1/acl/binding-rule/{a['ID']}")
    assert_plain(again, 500, "ACL binding rule not found")
    assert s.state.last_index == 6  # the failed delete consumed an index


def test_empty_list_is_an_array_with_index_one(sched):
    r = sched.get("/v1/acl/binding-rules")
    assert (r.status_code, r.text, r.headers["X-Nomad-Index"]) == (200, "[]", "1")


def test_routing_errors(s):
    assert_plain(s.request("CONNECT", "/v1/acl/binding-rule/"), 400, "missing ACL binding rule ID")
    assert_plain(s.get("/v1/acl/binding-rule"), 405, "Invalid method")
    assert_plain(s.put("/v1/acl/binding-rules", json={}), 405, "Invalid method")
    assert_plain(s.request("PATCH", f"/v1/acl/binding-rule/{uuid.uuid4()}"), 405, "Invalid method")
    assert_plain(s.put("/v1/acl/binding-rule"), 400, "Request body is empty")
    assert_plain(s.put("/v1/acl/binding-rule", data=b'{"Selector": 3}'), 400,
                 "json: cannot unmarshal number into Go struct field ACLBindingRule.Selector of type string")


@pytest.mark.parametrize("token", [None, "", "nope"])
def test_everything_needs_a_management_token(s, token):
    rule = create(s).json()
    for r in (s.get("/v1/acl/binding-rules", token=token), s.get(f"/v1/acl/binding-rule/{rule['ID']}", token=token),
              s.put("/v1/acl/binding-rule", json=rule_body(), token=token),
              s.delete(f"/v1/acl/binding-rule/{rule['ID']}", token=token)):
        assert_plain(r, 403, "Permission denied")
    client = s.state.add_token(type="client")
    assert_plain(s.get("/v1/acl/binding-rules", token=client.SecretID), 403, "Permission denied")


def test_rules_outlive_their_auth_method(s):
    rule = create(s).json()
    assert s.delete("/v1/acl/auth-method/sso").status_code == 200
    assert s.get(f"/v1/acl/binding-rule/{rule['ID']}").json()["AuthMethod"] == "sso"
    assert_plain(s.put(f"/v1/acl/binding-rule/{rule['ID']}", json={"BindName": "x"}), 400,
                 "ACL auth method sso not found")


def test_blocking_list_wakes_on_a_write(s):
    create(s)
    answers = []
    waiter = threading.Thread(target=lambda: answers.append(s.get("/v1/acl/binding-rules?index=3&wait=30s")))
    waiter.start()
    create(s, BindName="late")
    waiter.join(30)
    assert answers and answers[0].headers["X-Nomad-Index"] == "4" and len(answers[0].json()) == 2


def test_replication_lag_hides_rules_like_auth_methods(make_sched):
    clock = ManualClock(T0)
    s = make_sched(clock=clock)
    s.create(mock_oidc("sso"))
    clock.advance(60)
    s.state.set_lag(30)
    rule = create(s).json()
    assert s.get("/v1/acl/binding-rules").json() == []
    assert_plain(s.get(f"/v1/acl/binding-rule/{rule['ID']}"), 404, "ACL binding rule not found")
    assert rule["ID"] in s.state.binding_rules.rules  # the authoritative table has it
    clock.advance(30)
    assert [x["ID"] for x in s.get("/v1/acl/binding-rules").json()] == [rule["ID"]]
    s.state.pause_replication()
    s.delete(f"/v1/acl/binding-rule/{rule['ID']}")
    assert len(s.get("/v1/acl/binding-rules").json()) == 1
    s.state.sync()
    assert s.get("/v1/acl/binding-rules").json() == []


def test_federated_replica_gives_rules_local_indexes(make_sched):
    s = make_sched(authoritative_region="global", region="eu")
    s.create(mock_oidc("sso"))
    rule = create(s).json()
    assert rule["ModifyIndex"] == 3  # authoritative raft
    local = s.get(f"/v1/acl/binding-rule/{rule['ID']}").json()
    assert (local["CreateIndex"], local["ModifyIndex"]) == (2, 2)  # methods pass = 1, rules pass = 2
    assert local["Hash"] == rule["Hash"]


def test_snapshot_restore_brings_rules_back(s):
    snap = s.state.snapshot()
    rule = create(s).json()
    s.state.restore(snap)
    assert s.get("/v1/acl/binding-rules").json() == []
    s.state.restore(None)
    assert_plain(s.get(f"/v1/acl/binding-rule/{rule['ID']}"), 404, "ACL binding rule not found")
