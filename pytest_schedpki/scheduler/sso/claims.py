"""Claims -> selector data and HIL templates, as Nomad's ``lib/auth/claims.go`` and ``binder.go`` do.

* :func:`selector_data` builds ``{"value": {name: str}, "list": {name: [str]}}`` from a method's
  ``ClaimMappings``/``ListClaimMappings`` (a key starting with ``/`` is a JSON pointer); conversion
  errors raise :class:`ClaimError` with Nomad's text (a 500 at login);
* :func:`interpolate` is the subset of HashiCorp HIL that bind names and token names use:
  ``${name}`` variable references. An unknown variable raises :class:`ClaimError`
  ``<line>:<col>: unknown variable accessed: <name>`` (the column of the name);
* :func:`bind` evaluates binding rules to policies, roles or management (``binder.go``
  ``Binder.Bind``, ``reference §8``): rules in ascending ID order, those whose selector matches bind
  in turn. A bind name with ``${`` is interpolated over the mapped claim values **lower-cased**; for
  ``role``/``policy`` the result must match ``^[a-zA-Z0-9-]{1,128}$``. A missing role or policy is
  skipped; ``management`` drops everything bound so far and stops. Errors raise :class:`BindError`
  (plain errors: 500).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from . import bexpr

_MISSING = object()
_VAR = re.compile(r"\$\{\s*([^{}]*?)\s*\}")


class ClaimError(Exception):
    """A claim or template Nomad cannot use; ``str()`` is its text."""


def _go_type(value) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def _pointer(claims: dict, key: str):
    node = claims
    for part in key.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _claim(claims: dict, key: str):
    value = _pointer(claims, key) if key.startswith("/") else claims.get(key, _MISSING)
    return _MISSING if value is None else value


def _go_json(value) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _string(value) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(int(value))  # Nomad converts float64 claims to int
    if isinstance(value, list):
        return _go_json(value)
    return None


def _go_v(value) -> str:
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def selector_data(claims: dict, claim_mappings, list_claim_mappings) -> tuple[dict, dict]:
    """``(datum, variables)``: the selector datum and the mapped values (``value.<name>``; every
    mapping target pre-set to ``""``) for bind-name templates. Raises ClaimError."""
    values: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for key, name in sorted((claim_mappings or {}).items()):
        raw = _claim(claims, key)
        if raw is _MISSING:
            continue
        text = _string(raw)
        if text is None:
            raise ClaimError(f"error converting claim '{key}' to string from unknown type {_go_type(raw)}")
        values[name] = text
    for key, name in sorted((list_claim_mappings or {}).items()):
        raw = _claim(claims, key)
        if raw is _MISSING:
            continue
        if isinstance(raw, dict):
            raise ClaimError(f'"{key}" list claim could not be converted to string list')
        items = []
        for item in raw if isinstance(raw, list) else [raw]:
            text = None if isinstance(item, (list, dict)) else _string(item)
            if text is None:
                raise ClaimError(f'value {_go_v(item)} in "{key}" list claim could not be parsed as string')
            if text:
                items.append(text)
        lists[name] = items
    variables = {f"value.{name}": "" for name in (claim_mappings or {}).values()}
    variables.update({f"value.{k}": v for k, v in values.items()})
    return {"value": values, "list": lists}, variables


def interpolate(template: str, variables: dict[str, str]) -> str:
    """Replace each ``${name}`` with ``variables[name]``; raises ClaimError for an unknown one."""
    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in variables:
            before = template[:m.start(1)]
            line = before.count("\n") + 1
            col = len(before) - (before.rfind("\n") + 1) + 1
            raise ClaimError(f"{line}:{col}: unknown variable accessed: {name}")
        return variables[name]
    return _VAR.sub(one, template)


VALID_BIND_NAME = re.compile(r"[a-zA-Z0-9-]{1,128}")


class BindError(Exception):
    """A bind name that cannot be computed; ``str()`` is Nomad's text."""


@dataclass
class Bindings:
    """What login grants: policy names (not de-duplicated), role IDs, or management."""

    management: bool = False
    policies: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)

    def none(self) -> bool:
        return not (self.management or self.policies or self.roles)


def bind(rules, datum: dict, variables: dict[str, str], find_role, find_policy) -> Bindings:
    """Evaluate ``rules`` (ascending ID) against ``datum``; ``find_role(name)`` gives a role ID or None,
    ``find_policy(name)`` whether a policy exists. Raises :class:`BindError`."""
    lowered = {k: v.lower() for k, v in variables.items()}
    out = Bindings()
    for rule in sorted(rules, key=lambda r: r.ID):
        if not bexpr.matches(rule.Selector, datum):
            continue
        name = rule.BindName
        if "${" in name:
            try:
                name = interpolate(name, lowered)
            except ClaimError as exc:
                raise BindError(f"cannot compute {json.dumps(rule.BindType)} bind name for bind target: {exc}") from None
        if rule.BindType in ("role", "policy") and not VALID_BIND_NAME.fullmatch(name):
            raise BindError(f"computed {json.dumps(rule.BindType)} bind name for bind target is invalid: "
                            f"{json.dumps(name, ensure_ascii=False)}")
        if rule.BindType == "role":
            role_id = find_role(name)
            if role_id is not None:
                out.roles.append(role_id)
        elif rule.BindType == "policy":
            if find_policy(name):
                out.policies.append(name)
        elif rule.BindType == "management":
            return Bindings(management=True)
    return out
