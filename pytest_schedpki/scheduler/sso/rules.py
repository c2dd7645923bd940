"""ACL binding rules (Nomad's ``structs.ACLBindingRule``): record, validation, hash and JSON.

Follows ``nomad/structs/acl.go`` (``ACLBindingRule.Validate``, ``Canonicalize``, ``SetHash``,
``Stub``) and ``nomad/acl_endpoint.go`` ``UpsertBindingRules`` (``reference §3``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import uuid
from dataclasses import dataclass, replace

from ...golang.time import ZERO_TIME, GoTime
from ..model import multierror_text

BIND_TYPES = ("role", "policy", "management")
FIELDS = {"ID": "string", "Description": "string", "AuthMethod": "string", "Selector": "string",
          "BindType": "string", "BindName": "string", "CreateIndex": "uint64", "ModifyIndex": "uint64"}


@dataclass(frozen=True)
class BindingRule:
    """A binding rule. ``ID`` is a UUID string; ``BindType`` one of ``role``, ``policy``,
    ``management``; ``Selector`` a go-bexpr expression over ``value.*``/``list.*`` (empty = every
    login); ``BindName`` a role/policy name, possibly with ``${value.<name>}`` templates. ``Hash`` is
    the 32-byte BLAKE2b-256 digest; times are :class:`GoTime`; indexes raft indexes."""

    ID: str = ""
    Description: str = ""
    AuthMethod: str = ""
    Selector: str = ""
    BindType: str = ""
    BindName: str = ""
    Hash: bytes | None = None
    CreateTime: GoTime = ZERO_TIME
    ModifyTime: GoTime = ZERO_TIME
    CreateIndex: int = 0
    ModifyIndex: int = 0

    @property
    def Name(self) -> str:  # noqa: N802 - the replication queue keys records by .Name
        return self.ID


def from_body(values: dict) -> BindingRule:
    """A request rule from decoded body fields (see :mod:`.body`)."""
    return BindingRule(**{k: v for k, v in values.items() if k in FIELDS})


def _go_q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def validate(rule: BindingRule) -> str | None:
    """``ACLBindingRule.Validate``: the go-multierror text, or None. HTTP wraps it as
    ``400 binding rule 0 invalid: <text>``."""
    errors = []
    if not rule.AuthMethod:
        errors.append("auth method is missing")
    if len(rule.Description.encode("utf-8")) > 256:
        errors.append("description longer than 256")
    if rule.BindType == "":
        errors.append("bind type is missing")
    elif rule.BindType in ("role", "policy"):
        if not rule.BindName:
            errors.append("bind name is missing")
    elif rule.BindType == "management":
        if rule.BindName:
            errors.append("bind name should be empty")
    else:
        errors.append(f"unsupported bind type: {_go_q(rule.BindType)}")
    if rule.Selector:
        from .bexpr import BexprError, parse  # on first use: the selector grammar, not at start-up

        try:
            parse(rule.Selector)
        except BexprError as exc:
            errors.append(f"selector is invalid: {exc}")
    return multierror_text(errors) if errors else None


def canonicalize(rule: BindingRule, now: GoTime) -> BindingRule:
    """``ACLBindingRule.Canonicalize``: a new rule (no ID) gets a UUID and CreateTime = ModifyTime =
    now; an update only sets ModifyTime."""
    if not rule.ID:
        return replace(rule, ID=str(uuid.uuid4()), CreateTime=now, ModifyTime=now)
    return replace(rule, ModifyTime=now)


def with_hash(rule: BindingRule) -> BindingRule:
    """``SetHash``: BLAKE2b-256 over ID, Description, AuthMethod, Selector, BindType, BindName."""
    h = hashlib.blake2b(digest_size=32)
    for part in (rule.ID, rule.Description, rule.AuthMethod, rule.Selector, rule.BindType, rule.BindName):
        h.update(part.encode("utf-8"))
    return replace(rule, Hash=h.digest())


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def _time(t: GoTime) -> str | None:
    return None if t.is_zero() else t.rfc3339nano()


def rule_to_dict(r: BindingRule) -> dict:
    """The full rule as Nomad writes it (declared field order, base64 Hash, RFC 3339 times)."""
    return {"ID": r.ID, "Description": r.Description, "AuthMethod": r.AuthMethod, "Selector": r.Selector,
            "BindType": r.BindType, "BindName": r.BindName, "Hash": _b64(r.Hash), "CreateTime": _time(r.CreateTime),
            "ModifyTime": _time(r.ModifyTime), "CreateIndex": r.CreateIndex, "ModifyIndex": r.ModifyIndex}


def stub_to_dict(r: BindingRule) -> dict:
    """The list entry (``ACLBindingRuleListStub``): ID, Description, AuthMethod, Hash, indexes."""
    return {"ID": r.ID, "Description": r.Description, "AuthMethod": r.AuthMethod, "Hash": _b64(r.Hash),
            "CreateIndex": r.CreateIndex, "ModifyIndex": r.ModifyIndex}


def msgpack_json(value: object, pretty: bool = False) -> str:
    """go-msgpack's JSON handle: no HTML escaping; 4-space indent plus a newline with ``?pretty``."""
    if pretty:
        return json.dumps(value, ensure_ascii=False, indent=4) + "\n"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def time_of(value: datetime.datetime) -> GoTime:
    """A clock reading as the GoTime Nomad stores (UTC)."""
    return GoTime.from_datetime(value)
