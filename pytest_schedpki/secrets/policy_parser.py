"""Parse OpenBao ACL policies: the HCL subset policies use, or the JSON form.

HCL::

    # comment
    path "pki/issue/+" {
      capabilities = ["update"]
    }

JSON: ``{"path": {"pki/issue/+": {"capabilities": ["update"]}}}``.

:func:`parse_policy` returns ``{pattern: set_of_capabilities}``; errors raise PolicyError whose
text follows OpenBao's ``failed to parse policy: ...`` wording (position texts differ: see
docs/divergences.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

CAPABILITIES = {"create", "read", "update", "delete", "list", "sudo", "deny", "patch", "scan"}
LEGACY_POLICY = {  # the pre-0.5 `policy = "..."` shorthand
    "deny": {"deny"},
    "read": {"read", "list"},
    "write": {"create", "read", "update", "delete", "list"},
    "sudo": {"create", "read", "update", "delete", "list", "sudo"},
}


class PolicyError(ValueError):
    """A policy text OpenBao would refuse; ``str()`` is the error text."""


_TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.-]*)
  | (?P<punct>[{}\[\]=,:])
''', re.VERBOSE | re.DOTALL)


def _tokens(text: str) -> list[tuple[str, Any, int, int]]:
    out: list[tuple[str, Any, int, int]] = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PolicyError(f"failed to parse policy: At {line}:{pos - line_start + 1}: illegal char")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "string":
            out.append(("string", json.loads(value), line, pos - line_start + 1))
        elif kind not in ("ws", "comment"):
            out.append((kind if kind != "punct" else value, value, line, pos - line_start + 1))
        newlines = value.count("\n")
        if newlines:
            line += newlines
            line_start = pos + value.rfind("\n") + 1
        pos = m.end()
    out.append(("EOF", None, line, pos - line_start + 1))
    return out


_HCL_TOKEN_NAMES = {"{": "LBRACE", "}": "RBRACE", "[": "LBRACK", "]": "RBRACK", "=": "ASSIGN", ",": "COMMA",
                    ":": "COLON", "string": "STRING", "number": "NUMBER", "ident": "IDENT", "EOF": "EOF"}


def _name(kind: str) -> str:
    return _HCL_TOKEN_NAMES.get(kind, kind.upper())


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, Any, int, int]:
        return self.toks[self.i]

    def take(self, *kinds: str) -> tuple[str, Any, int, int]:
        tok = self.toks[self.i]
        if kinds and tok[0] not in kinds:
            raise PolicyError(f"failed to parse policy: At {tok[2]}:{tok[3]}: expected {' or '.join(_name(k) for k in kinds)}, got: {_name(tok[0])}")
        self.i += 1
        return tok

    def body(self, until: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self.peek()[0] != until:
            key = self.take("ident", "string")[1]
            if self.peek()[0] == "=":
                self.take("=")
                result[key] = self.value()
            else:
                labels = []
                while self.peek()[0] == "string":
                    labels.append(self.take("string")[1])
                self.take("{")
                block = self.body("}")
                self.take("}")
                target = result.setdefault(key, {})
                for label in labels[:-1]:
                    target = target.setdefault(label, {})
                if labels:
                    target.setdefault(labels[-1], []).append(block)
                else:
                    target.setdefault("", []).append(block)
            if self.peek()[0] == ",":
                self.take(",")
        return result

    def value(self) -> Any:
        kind, value, line, col = self.peek()
        if kind == "string":
            return self.take()[1]
        if kind == "number":
            self.take()
            return float(value) if "." in value else int(value)
        if kind == "ident" and value in ("true", "false"):
            self.take()
            return value == "true"
        if kind == "[":
            self.take("[")
            items = []
            while self.peek()[0] != "]":
                items.append(self.value())
                if self.peek()[0] == ",":
                    self.take(",")
                elif self.peek()[0] != "]":
                    tok = self.peek()
                    raise PolicyError(f"failed to parse policy: At {tok[2]}:{tok[3]}: error parsing list, expected comma or list end, got: {_name(tok[0])}")
            self.take("]")
            return items
        if kind == "{":
            self.take("{")
            obj = self.body("}")
            self.take("}")
            return obj
        raise PolicyError(f"failed to parse policy: At {line}:{col}: Unknown token: {line}:{col} {_name(kind)} {value}")


def _path_rules(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    paths = tree.get("path", {})
    rules: dict[str, dict[str, Any]] = {}
    if isinstance(paths, dict):
        for pattern, blocks in paths.items():
            for block in blocks if isinstance(blocks, list) else [blocks]:
                rules.setdefault(pattern, {}).update(block if isinstance(block, dict) else {})
    return rules


def parse_policy(text: str) -> dict[str, set[str]]:
    """``{path pattern: capabilities}`` of a policy text (HCL or JSON). Raises PolicyError."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            tree = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise PolicyError(f"failed to parse policy: {exc}") from None
        rules = {p: (b if isinstance(b, dict) else {}) for p, b in (tree.get("path") or {}).items()}
    else:
        parser = _Parser(text)
        rules = _path_rules(parser.body("EOF"))
    result: dict[str, set[str]] = {}
    for pattern, block in rules.items():
        caps: set[str] = set()
        legacy = block.get("policy")
        if legacy is not None:
            if legacy not in LEGACY_POLICY:
                raise PolicyError(f'failed to parse policy: path "{pattern}": invalid policy "{legacy}"')
            caps |= LEGACY_POLICY[legacy]
        for cap in block.get("capabilities") or []:
            if cap not in CAPABILITIES:
                raise PolicyError(f'failed to parse policy: path "{pattern}": path "{pattern}": invalid capability "{cap}"')
            caps.add(cap)
        if "deny" in caps:
            caps = {"deny"}
        result[pattern] = caps
    return result
