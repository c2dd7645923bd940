"""Parse OpenBao ACL policies: the HCL subset policies use, or the JSON form.

HCL::

    # comment
    path "pki/issue/+" {
      capabilities = ["update"]
    }

JSON: ``{"path": {"pki/issue/+": {"capabilities": ["update"]}}}``.

:func:`parse_policy` returns ``{pattern: set_of_capabilities}``; errors raise PolicyError with
OpenBao's text: ``failed to parse policy: `` then HCL1's syntax error with its position
(:mod:`pytest_schedpki.hcl.hcl1`), the unknown-key multierror (``invalid key "pth" on line 0``; top-level keys are
``name`` and ``path``, path blocks take :data:`PATH_KEYS`), HCL's decoding errors
(``At 1:27: unknown slice type: *ast.LiteralType``) or the capability/policy checks.
:func:`decode_policy_text` undoes the base64 encoding the policy endpoints accept.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

from ..golang.duration import go_quote
from ..golang.strconv import NumError, parse_int
from ..hcl import hcl1

CAPABILITIES = {"create", "read", "update", "delete", "list", "sudo", "deny", "patch", "scan"}
LEGACY_POLICY = {  # the pre-0.5 `policy = "..."` shorthand
    "deny": {"deny"},
    "read": {"read", "list"},
    "write": {"create", "read", "update", "delete", "list"},
    "sudo": {"create", "read", "update", "delete", "list", "sudo"},
}


class PolicyError(ValueError):
    """A policy text OpenBao would refuse; ``str()`` is the error text."""


@dataclass(frozen=True)
class ParameterRule:
    """One path block's parameter constraints: ``allowed``/``denied`` (``{lower-cased name: values}``,
    ``None`` when the block sets none; an empty list means any value) and ``required`` names."""

    allowed: dict[str, list[Any]] | None
    denied: dict[str, list[Any]] | None
    required: tuple[str, ...] = ()


PATH_KEYS = ("comment", "policy", "capabilities", "allowed_parameters", "denied_parameters",
             "required_parameters", "min_wrapping_ttl", "max_wrapping_ttl", "mfa_methods", "control_group",
             "pagination_limit", "list_scan_response_keys_filter_path", "expiration")


def _multierror(messages: list[str]) -> str:
    head = "1 error occurred" if len(messages) == 1 else f"{len(messages)} errors occurred"
    return head + ":\n" + "".join(f"\t* {m}\n" for m in messages) + "\n"


def _check_keys(items: list[hcl1.ObjectItem], valid: tuple[str, ...]) -> str | None:
    """OpenBao's ``CheckHCLKeys``: the multierror text for unknown keys, or ``None``."""
    bad = [f"invalid key {go_quote(str(i.keys[0].value()))} on line {i.assign_line}" for i in items
           if i.keys and i.keys[0].value() not in valid]
    return _multierror(bad) if bad else None


def _is_null(node: Any) -> bool:
    return isinstance(node, hcl1.Literal) and node.token.type == "NULL"


def _node_type(node: Any) -> str:
    return {hcl1.Literal: "*ast.LiteralType", hcl1.ListNode: "*ast.ListType",
            hcl1.ObjectList: "*ast.ObjectType"}[type(node)]


def _pos(node: Any) -> str:
    return node.token.pos


def _strings(node: Any, field: str, prefix: str) -> list[str]:
    """A ``[]string`` field as HCL's decoder reads it (a list of literals)."""
    if isinstance(node, hcl1.ObjectList) and not node.items:
        return []  # an empty object decodes as an empty list
    if not isinstance(node, hcl1.ListNode):
        raise PolicyError(f"{prefix}At {_pos(node)}: unknown slice type: {_node_type(node)}")
    out = []
    for index, item in enumerate(node.items):
        if not isinstance(item, hcl1.Literal) or item.token.type not in ("STRING", "NUMBER"):
            raise PolicyError(f"{prefix}At {_pos(item)}: root.{field}[{index}]: unknown type for string {_node_type(item)}")
        out.append(item.token.text if item.token.type == "NUMBER" else item.token.value())  # HCL: a number's text
    return out


def _string(node: Any, field: str, prefix: str) -> str:
    if not isinstance(node, hcl1.Literal) or node.token.type not in ("STRING", "NUMBER"):
        raise PolicyError(f"{prefix}At {_pos(node)}: root.{field}: unknown type for string {_node_type(node)}")
    return node.token.text if node.token.type == "NUMBER" else node.token.value()  # HCL: a number's text


def _parameters(node: Any, name: str, prefix: str) -> dict[str, list[Any]]:
    """``allowed_parameters``/``denied_parameters``: a map of lists, keys lower-cased (as
    ``parsePaths`` stores them); the values as HCL decodes them (strings, numbers, booleans)."""
    if not isinstance(node, hcl1.ObjectList):
        raise PolicyError(f"{prefix}At {_pos(node)}: root.{name}: not an object type for map ({_node_type(node)})")
    out: dict[str, list[Any]] = {}
    for item in node.items:
        if not isinstance(item.val, hcl1.ListNode):
            raise PolicyError(f"{prefix}At {_pos(item.val)}: unknown slice type: {_node_type(item.val)}")
        key = str(item.keys[0].value()).lower() if item.keys else ""
        out[key] = [_hcl_int(v, prefix) if isinstance(v, hcl1.Literal) and v.token.type == "NUMBER"
                    else v.token.value() if isinstance(v, hcl1.Literal) and v.token.type != "NULL" else None
                    for v in item.val.items]
    return out


def _hcl_int(node: hcl1.Literal, prefix: str) -> int:
    """A NUMBER literal decoded into an int or ``interface{}``: HCL's ``strconv.ParseInt(text, 0, 0)``,
    its error (``value out of range``, ``invalid syntax`` for ``09``) after ``prefix``."""
    try:
        return parse_int(node.token.text, 0, 64)
    except NumError as exc:
        raise PolicyError(f"{prefix}{exc}") from None


_OVERFLOW = "multiplication of durations resulted in overflow, one operand may be too large"


def _wrapping_ttl(node: Any, name: str, key: str) -> int:
    """``min_wrapping_ttl``/``max_wrapping_ttl`` in seconds (0 when not a duration HCL reads), or
    ``path "x": error parsing <name>: <why>``: go-secure-stdlib's ``ParseDurationSecond`` of the
    decoded value (a string: ``ParseInt`` seconds, else ``<n>d``, else a Go duration; a number:
    seconds), whose ``overflowMul`` refuses seconds that overflow an int64 of nanoseconds."""
    from ..golang.duration import GoDurationError, parse_duration

    failed = f"path {go_quote(key)}: error parsing {name}: "
    if isinstance(node, hcl1.Literal) and node.token.type == "STRING":
        text = node.token.value()
        if text == "":
            return 0
        try:
            seconds, unit = parse_int(text, 10, 64), 1
        except NumError:
            if text.endswith("d"):
                try:
                    seconds, unit = parse_int(text[:-1], 10, 64), 86400
                except NumError as exc:
                    raise PolicyError(f"{failed}{exc}") from None
            else:
                try:
                    return parse_duration(text) // 1_000_000_000
                except GoDurationError as exc:
                    raise PolicyError(f"{failed}{exc}") from None
    elif isinstance(node, hcl1.Literal) and node.token.type == "NUMBER":
        seconds, unit = _hcl_int(node, f"path {go_quote(key)}: path {go_quote(key)}: "), 1
    elif isinstance(node, hcl1.Literal) and node.token.type == "FLOAT":  # float64; time.Duration(f) on amd64
        number = float(node.token.text)
        if math.isinf(number):  # HCL's decodeFloat: strconv.ParseFloat's range error
            raise PolicyError(f"path {go_quote(key)}: path {go_quote(key)}: strconv.ParseFloat: parsing "
                              f"{go_quote(node.token.text)}: value out of range")
        seconds, unit = (int(number) if -(2.0 ** 63) <= number < 2.0 ** 63 else -(2 ** 63)), 1
    elif node is None or _is_null(node):
        return 0
    else:  # a bool, list or object: ParseDurationSecond's default case
        raise PolicyError(f"{failed}could not parse duration from input")
    if not -(2 ** 63) <= seconds * unit * 1_000_000_000 < 2 ** 63:
        raise PolicyError(f"{failed}{_OVERFLOW}")
    return seconds * unit


def _name_error(root: hcl1.ObjectList) -> str | None:
    """HCL's decoding of the top-level ``name`` into a string (OpenBao decodes it before the paths)."""
    for item in root.filter("name").items:
        if isinstance(item.val, hcl1.Literal) and item.val.token.type in ("FLOAT", "BOOL"):  # decodeString: no case
            return f"At {_pos(item.val)}: root.name: unknown type for string *ast.LiteralType"
        if not isinstance(item.val, hcl1.Literal):
            val = item.val
            if isinstance(val, hcl1.ObjectList):  # HCL decodes the object's item list: its position is the first key's
                where = val.items[0].keys[0].pos if val.items and val.items[0].keys else _pos(val)
                return f"At {where}: root.name: unknown type for string *ast.ObjectList"
            return f"At {_pos(val)}: root.name: unknown type for string {_node_type(val)}"
    return None


def _rules(root: hcl1.ObjectList) -> dict[str, dict[str, Any]]:
    """``{pattern: {"capabilities": [...], "policy": str|None}}`` of a parsed policy (HCL, or JSON
    read as HCL1 reads it), with OpenBao's checks and texts (without the ``failed to parse policy: ``
    prefix), in its order: unknown top-level keys, ``name``, then each path block."""
    bad = _check_keys(root.items, ("name", "path")) or _name_error(root)
    if bad:
        raise PolicyError(bad)
    rules: dict[str, dict[str, Any]] = {}
    for item in root.filter("path").items:
        key = str(item.keys[0].value()) if item.keys else "path"
        if not isinstance(item.val, hcl1.ObjectList):
            raise PolicyError(f"path {go_quote(key)}: cannot check HCL keys of type {_node_type(item.val)}")
        bad = _check_keys(item.val.items, PATH_KEYS)
        if bad:
            raise PolicyError(f"path {go_quote(key)}: {bad}")
        prefix = f"path {go_quote(key)}: path {go_quote(key)}: "
        block: dict[str, Any] = {}
        for entry in item.val.items:
            name = entry.keys[0].value() if entry.keys else ""
            if name == "capabilities":
                block["capabilities"] = _strings(entry.val, "Capabilities", prefix)
            elif name == "policy" and not _is_null(entry.val):  # JSON null: HCL leaves the string unset
                block["policy"] = _string(entry.val, "Policy", prefix)
            elif name in ("allowed_parameters", "denied_parameters"):
                block[name] = _parameters(entry.val, name, prefix)
            elif name == "required_parameters" and not _is_null(entry.val):
                block[name] = _strings(entry.val, "RequiredParameters", prefix)
        wrapping = {}
        for entry in item.val.items:
            name = entry.keys[0].value() if entry.keys else ""
            if name in ("min_wrapping_ttl", "max_wrapping_ttl"):
                wrapping[name] = _wrapping_ttl(entry.val, name, key)
        low, high = wrapping.get("min_wrapping_ttl", 0), wrapping.get("max_wrapping_ttl", 0)
        if low and high and high < low:
            raise PolicyError(f"path {go_quote(key)}: max_wrapping_ttl cannot be less than min_wrapping_ttl")
        merged = rules.setdefault(key, {})
        if "capabilities" in block:
            merged.setdefault("capabilities", []).extend(block["capabilities"])
        if "policy" in block:
            merged["policy"] = block["policy"]
        if any(k in block for k in ("allowed_parameters", "denied_parameters", "required_parameters")):
            merged.setdefault("parameters", []).append(ParameterRule(
                block.get("allowed_parameters"), block.get("denied_parameters"),
                tuple(block.get("required_parameters") or ())))
    return rules


def decode_policy_text(text: str) -> str:
    """OpenBao's policy endpoints accept the policy base64-encoded: a text that decodes as standard
    base64 is replaced by its decoding (bytes read as Latin-1, so binary junk stays visible to the
    parser as illegal characters)."""
    try:
        return base64.b64decode(text, validate=True).decode("latin-1")
    except (binascii.Error, ValueError):
        return text


NESTED_TOO_DEEPLY = "nested too deeply"  # the double's own reason (docs/divergences.md)


def parse_policy(text: str) -> dict[str, set[str]]:
    """``{path pattern: capabilities}`` of a policy text: HCL, or JSON when it starts with ``{``
    (HCL1's test), read into the same tree (:mod:`pytest_schedpki.hcl.hcl1_json`) and checked the same way. Raises
    PolicyError."""
    return parse_policy_full(text)[0]


def parse_policy_full(text: str) -> tuple[dict[str, set[str]], dict[str, list[ParameterRule]]]:
    """:func:`parse_policy`'s capabilities and, per pattern, the :class:`ParameterRule` of each of its
    path blocks that sets ``allowed_parameters``, ``denied_parameters`` or ``required_parameters``."""
    try:
        if text.lstrip().startswith("{"):
            from ..hcl import hcl1_json  # on first use: JSON-form policies are rare (start-up time)

            root = hcl1_json.parse(text)
        else:
            root = hcl1.parse(text)
        rules = _rules(root)
    except (hcl1.HclError, PolicyError) as exc:
        raise PolicyError(f"failed to parse policy: {exc}") from None
    except RecursionError:  # blocks or lists nested deeper than Python can walk (Go's parser has no limit)
        raise PolicyError(f"failed to parse policy: {NESTED_TOO_DEEPLY}") from None
    result: dict[str, set[str]] = {}
    for pattern, block in rules.items():
        caps: set[str] = set()
        legacy = block.get("policy")
        if legacy is not None:
            if legacy not in LEGACY_POLICY:
                raise PolicyError(f"failed to parse policy: path {go_quote(pattern)}: path {go_quote(pattern)}: "
                                  f"invalid policy {go_quote(legacy)}")
            caps |= LEGACY_POLICY[legacy]
        for cap in block.get("capabilities") or []:
            if cap not in CAPABILITIES:
                raise PolicyError(f"failed to parse policy: path {go_quote(pattern)}: path {go_quote(pattern)}: "
                                  f"invalid capability {go_quote(str(cap))}")
            caps.add(cap)
        if "deny" in caps:
            caps = {"deny"}
        result[pattern] = caps
    return result, {pattern: block["parameters"] for pattern, block in rules.items() if block.get("parameters")}
