"""ACL policies, roles and tokens as login needs them (Nomad's ``structs.ACLPolicy``, ``ACLRole``,
``ACLToken``): records, validation, hashes and JSON (``reference §4, §9``).

Policies keep ``Rules`` as the text given, parsed and validated on write as Nomad does
(:mod:`..acl.policy`; ``RulesJSON`` is always null; see docs/divergences.md).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass

from ...golang.duration import format_duration
from ...golang.time import GoTime
from ..model import multierror_text
from ..tokens import ACLToken

VALID_NAME = re.compile(r"[a-zA-Z0-9-]{1,128}")
POLICY_FIELDS = {"Name": "string", "Description": "string", "Rules": "string", "CreateIndex": "uint64",
                 "ModifyIndex": "uint64"}
ROLE_FIELDS = {"ID": "string", "Name": "string", "Description": "string", "Policies": "links",
               "CreateIndex": "uint64", "ModifyIndex": "uint64"}


@dataclass(frozen=True)
class Policy:
    """An ACL policy: ``Rules`` is HCL text (stored as given, validated on write); ``Hash`` BLAKE2b-256."""

    Name: str = ""
    Description: str = ""
    Rules: str = ""
    Hash: bytes | None = None
    CreateIndex: int = 0
    ModifyIndex: int = 0


@dataclass(frozen=True)
class Role:
    """An ACL role: a UUID ``ID``, a unique ``Name`` and the names of its ``Policies``."""

    ID: str = ""
    Name: str = ""
    Description: str = ""
    Policies: tuple[str, ...] = ()
    Hash: bytes | None = None
    CreateIndex: int = 0
    ModifyIndex: int = 0


def _blake(*parts: str) -> bytes:
    h = hashlib.blake2b(digest_size=32)
    for part in parts:
        h.update(part.encode("utf-8"))
    return h.digest()


def policy_hash(p: Policy) -> bytes:
    """``ACLPolicy.SetHash`` over Name, Description and Rules."""
    return _blake(p.Name, p.Description, p.Rules)


def role_hash(r: Role) -> bytes:
    """``ACLRole.SetHash`` over Name, Description and each policy link's name."""
    return _blake(r.Name, r.Description, *r.Policies)


def token_hash(t: ACLToken) -> bytes:
    """``ACLToken.SetHash`` over Name, Type, the policies, ``global``/``local`` and the role IDs."""
    return _blake(t.Name, t.Type, *(t.Policies or ()), "global" if t.Global else "local", *(t.Roles or ()))


def validate_policy(p: Policy) -> str | None:
    """``ACLPolicy.Validate``: name, rules (``acl.Parse`` strict), description; multierror text or None."""
    from ..acl.policy import PolicyError, parse  # on first use: the parser and HCL, not at start-up

    errors = []
    if not VALID_NAME.fullmatch(p.Name):
        errors.append(f"invalid name '{p.Name}'")
    try:
        parse(p.Rules, strict=True)
    except PolicyError as exc:
        errors.append(f"failed to parse rules: {exc}")
    if len(p.Description.encode("utf-8")) > 256:
        errors.append("description longer than 256")
    return multierror_text(errors) if errors else None


def validate_role(r: Role) -> str | None:
    """``ACLRole.Validate``: multierror text or None."""
    errors = []
    if not VALID_NAME.fullmatch(r.Name):
        errors.append(f"invalid name '{r.Name}'")
    if len(r.Description.encode("utf-8")) > 256:
        errors.append("description longer than 256")
    if not r.Policies:
        errors.append("at least one policy should be specified")
    return multierror_text(errors) if errors else None


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def rules_json(rules: str) -> dict | None:
    """``RulesJSON``: the rules as ``ACL.GetPolicy`` parses them on read (``acl.Parse`` lenient), the
    ``acl.Policy`` struct as JSON - blocks with their expanded capabilities, ``Raw``, ``ExtraKeysHCL``;
    absent block lists are null. None when the rules do not parse (only a bypassed write can store those)."""
    from ..acl.policy import PolicyError, parse  # on first use (start-up time)

    try:
        parsed = parse(rules, strict=False)
    except PolicyError:
        return None
    return {"Namespaces": parsed.Namespaces or None, "NodePools": parsed.NodePools or None,
            "HostVolumes": parsed.HostVolumes or None, "Agent": parsed.Agent, "Node": parsed.Node,
            "Operator": parsed.Operator, "Sentinel": parsed.Sentinel, "Quota": parsed.Quota, "Plugin": parsed.Plugin,
            "Raw": parsed.Raw, "ExtraKeysHCL": parsed.ExtraKeysHCL}


def policy_to_dict(p: Policy, stub: bool = False) -> dict:
    """``ACLPolicy`` (or with ``stub`` its list entry) as Nomad writes it; a full policy carries
    :func:`rules_json` (``GetPolicy`` fills it on every read)."""
    if stub:
        return {"Name": p.Name, "Description": p.Description, "Hash": _b64(p.Hash), "CreateIndex": p.CreateIndex,
                "ModifyIndex": p.ModifyIndex}
    return {"Name": p.Name, "Description": p.Description, "Rules": p.Rules, "RulesJSON": rules_json(p.Rules), "JobACL": None,
            "Hash": _b64(p.Hash), "CreateIndex": p.CreateIndex, "ModifyIndex": p.ModifyIndex}


def role_to_dict(r: Role) -> dict:
    """``ACLRole`` (its list stub has the same keys) as Nomad writes it."""
    return {"ID": r.ID, "Name": r.Name, "Description": r.Description,
            "Policies": [{"Name": n} for n in r.Policies], "Hash": _b64(r.Hash),
            "CreateIndex": r.CreateIndex, "ModifyIndex": r.ModifyIndex}


def _time(value) -> str | None:
    return None if value is None else GoTime.from_datetime(value).rfc3339nano()


def token_to_dict(t: ACLToken, role_names: dict[str, str], stub: bool = False) -> dict:
    """``ACLToken.MarshalJSON``: ExpirationTTL first (``""`` when 0), the SecretID included, role links
    ``{"ID", "Name"}`` with the current role names (``role_names``: ID -> Name); with ``stub`` the
    list entry (no SecretID, no ExpirationTTL, role links as stored: ``Name`` ``""``)."""
    names = {} if stub else role_names
    roles = None if t.Roles is None else [{"ID": i, "Name": names.get(i, "")} for i in t.Roles]
    body = {"ExpirationTTL": format_duration(t.ExpirationTTL) if t.ExpirationTTL else "",
            "AccessorID": t.AccessorID, "SecretID": t.SecretID, "Name": t.Name, "Type": t.Type,
            "Policies": None if t.Policies is None else list(t.Policies), "Roles": roles, "Global": t.Global,
            "Hash": _b64(t.Hash), "CreateTime": _time(t.CreateTime), "ExpirationTime": _time(t.ExpirationTime),
            "CreateIndex": t.CreateIndex, "ModifyIndex": t.ModifyIndex}
    if stub:
        del body["ExpirationTTL"], body["SecretID"]
    return body


def encoding_json(value: object) -> str:
    """Go ``encoding/json`` (HTML-escaping), as ``ACLToken.MarshalJSON`` writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
