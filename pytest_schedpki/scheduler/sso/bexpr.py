"""Binding-rule selectors: the go-bexpr (v0.1.16) subset that Nomad's binder evaluates.

No maintained Python implementation of go-bexpr exists (PyPI has none), so the double carries
this small one. Grammar (PEG, ordered choice, as go-bexpr's ``grammar.peg``)::

    Input      <- _? Or _? EOF
    Or         <- And (_ "or" _ Or)?
    And        <- Not (_ "and" _ And)?
    Not        <- "not" _ Not / "(" _? Or _? ")" / Match
    Match      <- Selector (_? "==" _? / _? "!=" _? / _ "not"? _ "contains" _ / _ "not"? _ "matches" _) Value
                / Selector _ "is" _ "not"? _ ("empty" / "nil")
                / Value _ "not"? _ "in" _ Selector
    Selector   <- Identifier ("." Identifier)* / '"' ("/" [^"/]+)+ '"'    (a JSON pointer)
    Identifier <- [a-zA-Z] [a-zA-Z0-9_/]*
    Value      <- Number / '"' Go-escaped '"' / '`' raw '`' / Identifier ("." Identifier)*  (a bare word is a string)

A parse error is ``<line>:<col> (<offset>): no match found, expected: <list>`` like the pigeon
parser go-bexpr uses (``reference §3.2``: tests match the text up to ``no match found``).

Evaluation (:func:`matches`) runs over Nomad's selector datum ``{"value": {name: str},
"list": {name: [str]}}`` (``lib/auth/claims.go``). Missing keys never raise: ``==``, ``in``,
``matches``, ``is not empty`` and ``is not nil`` are false, their negations true. Any other
evaluation error (a name outside ``value``/``list``, ``==`` on a list, a regex Go's ``regexp``
refuses) makes the whole selector not match, as Nomad's binder treats an evaluation error
(``reference §7``). ``matches`` runs on RE2 (google-re2): Go's syntax, linear time.
``any``/``all`` blocks are not supported (docs/divergences.md).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

_WS = " \t\r\n"
_MISSING = object()


class BexprError(ValueError):
    """A selector that does not parse; ``str()`` is the parser's text."""


class _EvalError(Exception):
    pass


@dataclass(frozen=True)
class Match:
    """One comparison: ``op`` (``==``, ``!=``, ``contains``, ``not contains``, ``matches``,
    ``not matches``, ``is empty``, ``is not empty``, ``is nil``, ``is not nil``), the selector
    path and the value text (None for the ``is`` forms)."""

    op: str
    path: tuple[str, ...]
    value: str | None


@dataclass(frozen=True)
class Bool:
    """``and``/``or`` of two nodes, or ``not`` of ``left``."""

    op: str
    left: object
    right: object = None


class _Parser:
    def __init__(self, text: str):
        self.s = text
        self.far = -1
        self.expected: set[str] = set()

    def fail(self, pos: int, desc: str) -> None:
        if pos > self.far:
            self.far, self.expected = pos, set()
        if pos == self.far:
            self.expected.add(desc)

    def lit(self, pos: int, word: str) -> int | None:
        if self.s.startswith(word, pos):
            return pos + len(word)
        self.fail(pos, json.dumps(word))
        return None

    def cls(self, pos: int, chars, desc: str) -> int | None:
        if pos < len(self.s) and chars(self.s[pos]):
            return pos + 1
        self.fail(pos, desc)
        return None

    def ws(self, pos: int, required: bool) -> int | None:
        end = pos
        while end < len(self.s) and self.s[end] in _WS:
            end += 1
        if end == pos:
            self.fail(pos, "[ \\t\\r\\n]")
            return None if required else pos
        return end

    # -- grammar ----------------------------------------------------------------------------------
    def parse(self):
        pos = self.ws(0, False)
        found = self.or_(pos)
        if found is not None:
            node, end = found
            end = self.ws(end, False)
            if end == len(self.s):
                return node
            self.fail(end, "EOF")
        raise BexprError(self.error_text())

    def error_text(self) -> str:
        pos = max(self.far, 0)
        before = self.s[:pos]
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        offset = len(before.encode("utf-8"))
        items = sorted(self.expected, key=lambda t: t.encode("utf-8"))
        listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
        return f"{line}:{col} ({offset}): no match found, expected: {listed}"

    def _binary(self, pos: int, word: str, sub, again):
        found = sub(pos)
        if found is None:
            return None
        left, end = found
        p = self.ws(end, True)
        p = p is not None and self.lit(p, word)
        p = p and self.ws(p, True)
        if p:
            right = again(p)
            if right is not None:
                return Bool(word, left, right[0]), right[1]
        return left, end

    def or_(self, pos: int):
        return self._binary(pos, "or", self.and_, self.or_)

    def and_(self, pos: int):
        return self._binary(pos, "and", self.not_, self.and_)

    def not_(self, pos: int):
        p = self.lit(pos, "not")
        p = p and self.ws(p, True)
        if p:
            inner = self.not_(p)
            if inner is not None:
                return Bool("not", inner[0]), inner[1]
        p = self.lit(pos, "(")
        if p:
            inner = self.or_(self.ws(p, False))
            if inner is not None:
                end = self.lit(self.ws(inner[1], False), ")")
                if end:
                    return inner[0], end
        return self.match(pos)

    def match(self, pos: int):
        sel = self.selector(pos)
        if sel is not None:
            path, p = sel
            for op, spaced in (("==", False), ("!=", False), ("contains", True), ("not contains", True),
                               ("matches", True), ("not matches", True)):
                q = self._op(p, op, spaced)
                if q is not None:
                    val = self.value(q)
                    if val is not None:
                        return Match(op, path, val[0]), val[1]
            for op in ("is empty", "is not empty", "is nil", "is not nil"):
                q = self._op(p, op, True, trailing=False)
                if q is not None:
                    return Match(op, path, None), q
        val = self.value(pos)
        if val is not None:
            for op in ("in", "not in"):
                q = self._op(val[1], op, True)
                if q is not None:
                    sel = self.selector(q)
                    if sel is not None:
                        return Match("contains" if op == "in" else "not contains", sel[0], val[0]), sel[1]
        return None

    def _op(self, pos: int, op: str, spaced: bool, trailing: bool = True) -> int | None:
        p = self.ws(pos, spaced)
        for i, word in enumerate(op.split(" ")):
            if p is None:
                return None
            if i:
                p = self.ws(p, True)
                if p is None:
                    return None
            p = self.lit(p, word)
        if p is None or not trailing:
            return p
        return self.ws(p, spaced)

    def identifier(self, pos: int):
        p = self.cls(pos, lambda c: c.isascii() and c.isalpha(), "[a-zA-Z]")
        if p is None:
            return None
        while p < len(self.s) and (self.s[p].isascii() and (self.s[p].isalnum() or self.s[p] in "_/")):
            p += 1
        return self.s[pos:p], p

    def dotted(self, pos: int):
        first = self.identifier(pos)
        if first is None:
            return None
        parts, p = [first[0]], first[1]
        while p < len(self.s) and self.s[p] == ".":
            nxt = self.identifier(p + 1)
            if nxt is None:
                break
            parts.append(nxt[0])
            p = nxt[1]
        return parts, p

    def selector(self, pos: int):
        found = self.dotted(pos)
        if found is not None:
            return tuple(found[0]), found[1]
        if self.s.startswith('"/', pos):
            end = self.s.find('"', pos + 1)
            segments = self.s[pos + 2:end].split("/") if end > 0 else [""]
            if end > 0 and all(segments):
                return tuple(segments), end + 1
        return None

    def value(self, pos: int):
        m = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?").match(self.s, pos)
        if m:
            return m.group(0), m.end()
        self.cls(pos, lambda c: c == "-", '"-"')
        self.cls(pos, lambda c: c == "0", '"0"')
        self.cls(pos, lambda c: c in "123456789", "[1-9]")
        if self.s.startswith('"', pos):
            m = re.compile(r'"((?:[^"\\\n]|\\.)*)"').match(self.s, pos)
            if m:
                try:
                    return json.loads(m.group(0)), m.end()
                except ValueError:
                    pass
        else:
            self.fail(pos, '"\\""')
        if self.s.startswith("`", pos):
            end = self.s.find("`", pos + 1)
            if end > 0:
                return self.s[pos + 1:end], end + 1
        else:
            self.fail(pos, '"`"')
        found = self.dotted(pos)
        return None if found is None else (".".join(found[0]), found[1])


def parse(text: str):
    """Parse a selector; returns the tree (:class:`Match`/:class:`Bool`). Raises :class:`BexprError`
    (also for nesting deeper than Python's recursion limit: ``1:1 (0): expression nested too deeply``)."""
    try:
        return _Parser(text).parse()
    except RecursionError:
        raise BexprError("1:1 (0): expression nested too deeply") from None


def _resolve(datum: dict, path: tuple[str, ...]):
    if path[0] not in datum:
        raise _EvalError(f"error finding value in datum: /{'/'.join(path)}")
    node = datum[path[0]]
    for key in path[1:]:
        if not isinstance(node, dict):
            raise _EvalError("cannot index")
        node = node.get(key, _MISSING)
        if node is _MISSING:
            return _MISSING
    return node


_SURROGATE = re.compile("[\ud800-\udfff]")
_GO_REFUSED_ESCAPE = re.compile(r"\\(?:\\|(C))")


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str):
    import re2  # google-re2: RE2, the engine and syntax of Go's regexp (linear time)

    if any(m.group(1) for m in _GO_REFUSED_ESCAPE.finditer(pattern)):  # RE2's \C (any byte): Go has none
        return None
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(_SURROGATE.sub("\ufffd", pattern), options)
    except re2.error:
        return None


def _regexp(pattern: str):
    """go-bexpr's ``regexp.Compile`` of a ``matches`` value, with RE2 (google-re2): the same syntax
    as Go's regexp (backreferences, lookarounds and ``\\C`` refused) and matching in linear time.
    A pattern Go refuses raises _EvalError (go-bexpr: ``failed to compile regular expression``),
    so the rule does not match."""
    compiled = _compiled(pattern)
    if compiled is None:
        raise _EvalError(f"failed to compile regular expression {json.dumps(pattern)}")
    return compiled


_WHEN_MISSING = {"==": False, "!=": True, "contains": False, "not contains": True, "matches": False,
                 "not matches": True, "is empty": True, "is not empty": False, "is nil": True, "is not nil": False}


def _match(node: Match, datum: dict) -> bool:
    v = _resolve(datum, node.path)
    if v is _MISSING:
        return _WHEN_MISSING[node.op]
    op = node.op
    negate = op.startswith("not ") or op == "!=" or op.startswith("is not")
    base = op.removeprefix("not ").replace("is not", "is")
    if base in ("==", "!="):
        if not isinstance(v, str):
            raise _EvalError("== on a non-string")
        result = v == node.value
    elif base == "contains":
        result = node.value in v  # list element, substring, or map key
    elif base == "matches":
        if not isinstance(v, str):
            raise _EvalError("matches on a non-string")
        result = _regexp(node.value).search(_SURROGATE.sub("\ufffd", v)) is not None
    elif base == "is empty":
        result = len(v) == 0
    else:  # is nil: a present value is never nil
        result = False
    return not result if negate else result


def evaluate(node, datum, match=None) -> bool:
    """Evaluate a parsed tree: ``not``/``and``/``or`` short-circuit as go-bexpr does, each
    :class:`Match` answered by ``match(node, datum)`` (default: the binder's claim datum rules)."""
    match = match or _match
    if isinstance(node, Match):
        return match(node, datum)
    if node.op == "not":
        return not evaluate(node.left, datum, match)
    if node.op == "and":
        return evaluate(node.left, datum, match) and evaluate(node.right, datum, match)
    return evaluate(node.left, datum, match) or evaluate(node.right, datum, match)


def matches(selector: str, datum: dict) -> bool:
    """Whether ``selector`` matches ``datum`` (``{"value": {...}, "list": {...}}``); an empty selector
    matches everything; a selector that fails to parse or to evaluate does not match."""
    if not selector:
        return True
    try:
        return evaluate(parse(selector), datum)
    except (BexprError, _EvalError, RecursionError):
        return False
