"""Parameter constraints of ACL policies: ``allowed_parameters``, ``denied_parameters`` and
``required_parameters`` of a path rule, as OpenBao's ``ACL.AllowOperation`` applies them
(``internal/vault/policy/acl.go``) to reads, creates, updates and patches once the capability
itself is granted.

* The rules of the path pattern that decides the capabilities (the exact path, else the most
  specific glob) are merged across the token's policies: values of the same parameter are
  concatenated, and an empty list (any value) wins; required names add up.
* A request lacking a required parameter is refused; one without any parameter is then allowed.
* ``denied_parameters``: ``*`` refuses any parameter; a named parameter is refused when its value is
  in the list (an empty list: any value).
* ``allowed_parameters``: none set, or only ``*``, allows everything; otherwise every parameter must
  be named (unless ``*`` is there too) and its value in the list (empty: any value).
* Values compare as Go does: two strings by ``GlobbedStringsMatch`` (``*`` at either end is a
  wildcard), anything else by type and value, so a JSON number matches no policy value.
Names are compared lower-cased.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .framework.fields import JsonNumber
from .policy_parser import ParameterRule

PARAMETER_OPERATIONS = ("read", "update", "create", "patch")


def merge(rules: Iterable[ParameterRule]) -> ParameterRule:
    """The rules of one pattern from several policies (or path blocks) as ``NewACL`` merges them."""
    allowed: dict[str, list[Any]] | None = None
    denied: dict[str, list[Any]] | None = None
    required: list[str] = []
    for rule in rules:
        allowed = _merge_map(allowed, rule.allowed)
        denied = _merge_map(denied, rule.denied)
        required += [r for r in rule.required if r not in required]
    return ParameterRule(allowed, denied, tuple(required))


def _merge_map(existing: dict[str, list[Any]] | None, new: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
    if not new:
        return existing
    if existing is None:
        return {k: list(v) for k, v in new.items()}
    out = dict(existing)
    for key, values in new.items():
        if not values or (key in out and not out[key]):
            out[key] = []
        else:
            out[key] = list(values) + out.get(key, [])
    return out


def allows(rule: ParameterRule, data: Mapping[str, Any]) -> bool:
    """Whether a request with parameters ``data`` passes ``rule`` (see the module docstring)."""
    names = {str(k).lower(): v for k, v in data.items()}
    if any(r.lower() not in names for r in rule.required):
        return False
    if not names:
        return True
    if rule.denied:
        if "*" in rule.denied:
            return False
        for name, value in names.items():
            if name in rule.denied and _value_in(value, rule.denied[name]):
                return False
    if not rule.allowed:
        return True
    allowed_all = "*" in rule.allowed
    if allowed_all and len(rule.allowed) == 1:
        return True
    for name, value in names.items():
        if name not in rule.allowed:
            if not allowed_all:
                return False
            continue
        if not _value_in(value, rule.allowed[name]):
            return False
    return True


def _value_in(value: Any, values: list[Any]) -> bool:
    if not values:
        return True
    return any(_same(item, value) for item in values)


def _same(item: Any, value: Any) -> bool:
    if item is None or value is None:
        return item is value
    if type(item) is str and type(value) is str:  # a JsonNumber is Go's json.Number: not a string here
        return globbed_strings_match(item, value)
    if isinstance(value, JsonNumber) or isinstance(item, JsonNumber):
        return False
    return type(item) is type(value) and item == value


def globbed_strings_match(item: str, value: str) -> bool:
    """go-secure-stdlib ``strutil.GlobbedStringsMatch``: ``*`` at the start and/or end of ``item``
    matches anything there."""
    if len(item) < 2:
        return value == item
    prefix, suffix = item.startswith("*"), item.endswith("*")
    if prefix and suffix:
        return item[1:-1] in value
    if prefix:
        return value.endswith(item[1:])
    if suffix:
        return value.startswith(item[:-1])
    return value == item


__all__ = ["PARAMETER_OPERATIONS", "allows", "globbed_strings_match", "merge"]
