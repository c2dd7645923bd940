"""The JSON form of an ACL policy as HCL1 reads it (``github.com/hashicorp/hcl`` v1, ``json/parser``):
a policy text starting with ``{`` is parsed as JSON into the same tree as HCL (:mod:`.hcl1` nodes), so
that each service's policy checks (``secrets.policy_parser``, ``scheduler.acl.policy``) run on it unchanged.

What HCL1's JSON parser does, and this module with it:

* positions: a value's errors say ``At -:`` (HCL1 keeps no position for JSON tokens); an item's
  ``assign_line`` is the line of the ``:`` after its key (the ``on line N`` of unknown-key errors);
* ``null`` is a literal as an object value, and refused inside a list:
  ``unexpected token while parsing list: NULL``;
* nested objects are flattened as HCL1's ``flattenObjects`` does: an item whose value is a non-empty
  object holding only objects becomes one item per inner key, with the keys joined
  (``{"path": {"a": {...}}}`` is ``path "a" {...}``); an item whose value is a non-empty list holding
  only objects becomes one item per element; both repeat on what they produce; every object value is
  flattened the same way.

:func:`parse` returns the root :class:`~.hcl1.ObjectList`; a text that is not JSON raises
:class:`~.hcl1.HclError` with Python's JSON error text (HCL1 words those differently; see
docs/divergences.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import hcl1, hcl1_json_go

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": "BOOL", "false": "BOOL", "null": "NULL"}


def _token(kind: str, text: str) -> hcl1.Token:
    return hcl1.Token(kind, text, 0, 0)  # line 0: HCL1 reports JSON positions as "-"


class _Parser:
    def __init__(self, text: str, trailing_commas: bool = False):
        self.text = text
        self.at = 0
        self.trailing_commas = trailing_commas

    def _skip(self) -> None:
        self.at = _WS.match(self.text, self.at).end()

    def _fail(self, why: str) -> hcl1.HclError:
        return hcl1.HclError(why)

    def _line(self) -> int:
        return self.text.count("\n", 0, self.at) + 1

    def value(self, in_list: bool = False) -> Any:
        self._skip()
        text, at = self.text, self.at
        char = text[at:at + 1]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char == '"':
            try:
                _, end = json.decoder.scanstring(text, at + 1)
            except json.JSONDecodeError as exc:
                raise self._fail(str(exc)) from None
            self.at = end
            return hcl1.Literal(_token("STRING", text[at:end]))
        number = _NUMBER.match(text, at)
        if number is not None and number.end() > at:
            self.at = number.end()
            kind = "FLOAT" if number.group(1) or number.group(2) else "NUMBER"
            return hcl1.Literal(_token(kind, number.group(0)))
        for word, kind in _LITERALS.items():
            if text.startswith(word, at):
                if kind == "NULL" and in_list:
                    raise self._fail("unexpected token while parsing list: NULL")
                self.at = at + len(word)
                return hcl1.Literal(_token(kind, word))
        raise self._fail(f"Expecting value: line {self._line()} (char {at})")

    def object(self) -> hcl1.ObjectList:
        self.at += 1
        items: list[hcl1.ObjectItem] = []
        self._skip()
        if self.text.startswith("}", self.at):
            self.at += 1
            return hcl1.ObjectList(items, _token("LBRACE", "{"))
        while True:
            self._skip()
            if not self.text.startswith('"', self.at):
                raise self._fail(f"Expecting property name enclosed in double quotes: line {self._line()}")
            key = self.value()
            self._skip()
            if not self.text.startswith(":", self.at):
                raise self._fail(f"Expecting ':' delimiter: line {self._line()}")
            line = self._line()
            self.at += 1
            items.append(hcl1.ObjectItem([key.token], self.value(), line))
            self._skip()
            if self.text.startswith(",", self.at):
                self.at += 1
                self._skip()
                if self.trailing_commas and self.text.startswith("}", self.at):
                    self.at += 1
                    return hcl1.ObjectList(items, _token("LBRACE", "{"))
                continue
            if self.text.startswith("}", self.at):
                self.at += 1
                return hcl1.ObjectList(items, _token("LBRACE", "{"))
            raise self._fail(f"Expecting ',' delimiter: line {self._line()}")

    def array(self) -> hcl1.ListNode:
        self.at += 1
        items: list[Any] = []
        self._skip()
        if self.text.startswith("]", self.at):
            self.at += 1
            return hcl1.ListNode(items, _token("LBRACK", "["))
        while True:
            items.append(self.value(in_list=True))
            self._skip()
            if self.text.startswith(",", self.at):
                self.at += 1
                self._skip()
                if self.trailing_commas and self.text.startswith("]", self.at):
                    self.at += 1
                    return hcl1.ListNode(items, _token("LBRACK", "["))
                continue
            if self.text.startswith("]", self.at):
                self.at += 1
                return hcl1.ListNode(items, _token("LBRACK", "["))
            raise self._fail(f"Expecting ',' delimiter: line {self._line()}")


def _flatten(items: list[hcl1.ObjectItem]) -> list[hcl1.ObjectItem]:
    """HCL1's ``flattenObjects`` on one object's items (a stack, so the order is kept)."""
    out: list[hcl1.ObjectItem] = []
    frontier = list(items)
    while frontier:
        item = frontier.pop()
        val = item.val
        if isinstance(val, hcl1.ObjectList) and val.items and all(isinstance(s.val, hcl1.ObjectList)
                                                                  for s in val.items):
            frontier += [hcl1.ObjectItem(item.keys + s.keys, s.val, item.assign_line) for s in val.items]
        elif isinstance(val, hcl1.ListNode) and val.items and all(isinstance(e, hcl1.ObjectList) for e in val.items):
            frontier += [hcl1.ObjectItem(item.keys, e, item.assign_line) for e in val.items]
        else:
            out.append(item)
    out.reverse()
    for item in out:
        _flatten_values(item.val)
    return out


def _flatten_values(node: Any) -> None:
    if isinstance(node, hcl1.ObjectList):
        node.items = _flatten(node.items)
    elif isinstance(node, hcl1.ListNode):
        for element in node.items:
            _flatten_values(element)


def parse(text: str, trailing_commas: bool = False, nomad: bool = False) -> hcl1.ObjectList:
    """The root object of a JSON policy text (which starts with ``{``), flattened as HCL1 does.
    Raises :class:`~.hcl1.HclError` for text that is not JSON. ``trailing_commas``: a comma before
    an object's ``}`` or a list's ``]`` is accepted, as HCL1's JSON parser accepts it (Nomad's own
    policy tests write them; the secrets side keeps the strict default, see docs/divergences.md).
    ``nomad``: the library's own lax scanner and parser (:mod:`.hcl1_json_go`), texts included."""
    if nomad:
        root = hcl1_json_go.parse_root(text)
        root.items = _flatten(root.items)
        return root
    parser = _Parser(text, trailing_commas)
    parser._skip()
    root = parser.object()
    root.items = _flatten(root.items)
    return root


__all__ = ["parse"]
