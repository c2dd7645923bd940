"""HCL1's JSON scanner and parser token by token, as Nomad's fork runs them (``hashicorp/hcl``
``v1.0.1-nomad-1``: ``json/scanner/scanner.go``, ``json/parser/parser.go``), for
:func:`.hcl1_json.parse` with ``nomad=True``.

The library is lax where a JSON parser is strict, and Nomad's own policy tests rely on it:

* after an object's item, any token but ``,`` ends the object (``objectList``), and an object
  whose parse failed on a ``}`` is kept (``objectType``): a ``]`` may close a ``{``, a trailing
  comma is accepted, ``{"a": 1 "b": 2}`` is ``{"a": 1}``;
* an item may have several keys (``{"a" "b": {...}}``); an item cut short by the end of the text
  ends the object without an error; whatever follows the root object is never read;
* in a list, ``true``/``false`` and ``[`` are skipped, the first ``]`` ends it, ``null`` and
  other tokens are ``unexpected token while parsing list: <TYPE>``;
* scanner errors (``illegal char``, ``literal not terminated``, ``illegal char escape``,
  ``numbers cannot start with 0``) win over the parser's result, as ``<line>:<col>: <msg>`` of the
  last character read; only tokens the parser asked for are scanned.

Error texts are the library's: ``expected: STRING got: COLON``, ``Expected object value, got
unknown token: {Type:RBRACE Pos:1:8 Text:}}``, ``illegal``.
"""

from __future__ import annotations

from typing import Any

from . import hcl1

_ESCAPE_DIGITS = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}


class _EOF(Exception):
    """``errEofToken``."""


class _Token:
    __slots__ = ("type", "text", "line", "col")

    def __init__(self, type_: str, text: str, line: int, col: int):
        self.type, self.text, self.line, self.col = type_, text, line, col

    def __str__(self) -> str:  # %+v of token.Token
        return f"{{Type:{self.type} Pos:{self.line}:{self.col} Text:{self.text}}}"


def _digit(ch: str) -> int:
    if "0" <= ch <= "9":
        return ord(ch) - 48
    if "a" <= ch <= "f" or "A" <= ch <= "F":
        return ord(ch.lower()) - 87
    return 16


class _Scanner:
    def __init__(self, text: str):
        self.src, self.at = text, 0
        self.error: str | None = None

    def _pos(self, index: int) -> tuple[int, int]:
        line = self.src.count("\n", 0, index) + 1
        return line, index - (self.src.rfind("\n", 0, index) + 1) + 1

    def _err(self, msg: str) -> None:  # at the last character read
        line, col = self._pos(max(self.at - 1, 0))
        self.error = f"{line}:{col}: {msg}"

    def _peek(self) -> str:
        return self.src[self.at] if self.at < len(self.src) else ""

    def _next(self) -> str:
        ch = self._peek()
        self.at += 1
        return ch

    def _digits(self) -> None:
        while self._peek().isascii() and self._peek().isdigit():
            self.at += 1

    def _exponent(self) -> None:  # after the e/E
        if self._peek() in ("+", "-") and self._peek():
            self.at += 1
        self._digits()

    def _number(self, first: str) -> str:
        start = self.at
        self._digits()
        ch = self._peek()
        if ch in ("e", "E"):
            self.at += 1
            self._exponent()
            return "FLOAT"
        if ch == ".":
            self.at += 1
            self._digits()
            if self._peek() in ("e", "E"):
                self.at += 1
                self._exponent()
            return "FLOAT"
        if first == "0" and self.at != start:
            self._err("numbers cannot start with 0")
        return "NUMBER"

    def _string(self) -> None:
        while True:
            ch = self._next()
            if ch in ("\n", ""):
                self._err("literal not terminated")
                return
            if ch == '"':
                return
            if ch == "\\":
                self._escape()

    def _escape(self) -> None:
        ch = self._next()
        if ch and ch in 'abfnrtv\\"':
            return
        if ch and ch in "01234567":
            base, n = 8, 2
        elif ch in _ESCAPE_DIGITS and ch:
            base, n = _ESCAPE_DIGITS[ch]
        else:
            self._err("illegal char escape")
            return
        while n > 0 and _digit(self._peek()) < base:
            self.at += 1
            n -= 1
        if n > 0:
            self.at += 1
            self._err("illegal char escape")
            self.at -= 1

    def scan(self) -> _Token:
        while self._peek() in (" ", "\t", "\n", "\r") and self._peek():
            self.at += 1
        start = self.at
        line, col = self._pos(start)
        ch = self._next()
        kind = "ILLEGAL"
        if ch.isalpha() or ch == "_":
            while (c := self._peek()) and (c.isalpha() or c == "_" or c.isdigit() or c == "-"):
                self.at += 1
            word = self.src[start:self.at]
            kind = "BOOL" if word in ("true", "false") else "NULL" if word == "null" else "ILLEGAL"
            if kind == "ILLEGAL":
                self._err("illegal char")
        elif ch.isascii() and ch.isdigit():
            kind = self._number(ch)
        elif ch == "":
            kind, self.at = "EOF", len(self.src)
        elif ch == '"':
            kind = "STRING"
            self._string()
        elif ch == ".":
            kind = "PERIOD"
            if self._peek().isascii() and self._peek().isdigit():
                kind = "FLOAT"
                self._digits()
                if self._peek() in ("e", "E") and self._peek():
                    self.at += 1
                    self._exponent()
        elif ch in "[]{},:":
            kind = {"[": "LBRACK", "]": "RBRACK", "{": "LBRACE", "}": "RBRACE", ",": "COMMA", ":": "COLON"}[ch]
        elif ch == "-":
            if self._peek().isascii() and self._peek().isdigit():
                kind = self._number(self._next())
            else:
                self._err("illegal char")
        else:
            self._err("illegal char: " + ch)
        return _Token(kind, self.src[start:min(self.at, len(self.src))], line, col)


class _Parser:
    def __init__(self, text: str):
        self.sc = _Scanner(text)
        self.tok = _Token("ILLEGAL", "", 0, 0)

    def scan(self) -> _Token:
        self.tok = self.sc.scan()
        return self.tok

    def object_list(self) -> hcl1.ObjectList:
        node = hcl1.ObjectList([], hcl1.Token("LBRACE", "{", 0, 0))
        while True:
            try:
                item = self.object_item()
            except _EOF:
                break
            except hcl1.HclError as exc:
                exc.partial = node  # type: ignore[attr-defined]
                raise
            node.items.append(item)
            if self.scan().type != "COMMA":
                break
        return node

    def object_item(self) -> hcl1.ObjectItem:
        keys = self.object_key()
        return hcl1.ObjectItem(keys, self.object_value(), self.tok.line)

    def object_key(self) -> list[hcl1.Token]:
        keys: list[hcl1.Token] = []
        while True:
            tok = self.scan()
            if tok.type == "EOF":
                raise _EOF
            if tok.type == "STRING":
                keys.append(hcl1.Token("STRING", tok.text, 0, 0))
            elif tok.type == "COLON" and keys:
                return keys
            elif tok.type == "ILLEGAL":
                raise hcl1.HclError("illegal")
            else:
                raise hcl1.HclError(f"expected: STRING got: {tok.type}")

    def object_value(self) -> Any:
        tok = self.scan()
        if tok.type in ("NUMBER", "FLOAT", "BOOL", "NULL", "STRING"):
            return hcl1.Literal(hcl1.Token(tok.type, tok.text, 0, 0))
        if tok.type == "LBRACE":
            return self.object_type()
        if tok.type == "LBRACK":
            return self.list_type()
        if tok.type == "EOF":
            raise _EOF
        raise hcl1.HclError(f"Expected object value, got unknown token: {tok}")

    def object_type(self) -> hcl1.ObjectList:
        try:
            return self.object_list()
        except hcl1.HclError as exc:
            if self.tok.type != "RBRACE":
                raise
            return exc.partial  # type: ignore[attr-defined]

    def list_type(self) -> hcl1.ListNode:
        node = hcl1.ListNode([], hcl1.Token("LBRACK", "[", 0, 0))
        while True:
            tok = self.scan()
            if tok.type in ("NUMBER", "FLOAT", "STRING"):
                node.items.append(hcl1.Literal(hcl1.Token(tok.type, tok.text, 0, 0)))
            elif tok.type == "LBRACE":
                node.items.append(self.object_type())
            elif tok.type == "RBRACK":
                return node
            elif tok.type not in ("COMMA", "BOOL", "LBRACK"):
                raise hcl1.HclError(f"unexpected token while parsing list: {tok.type}")


def parse_root(text: str) -> hcl1.ObjectList:
    """``Parser.Parse`` up to ``flattenObjects``: the root object, or :class:`~.hcl1.HclError`."""
    parser = _Parser(text)
    try:
        tok = parser.scan()
        if tok.type == "LBRACE":
            root = parser.object_type()
        elif tok.type == "EOF":
            raise _EOF
        else:
            raise hcl1.HclError(f"Expected object, got unknown token: {tok}")
    except _EOF:
        if parser.sc.error:
            raise hcl1.HclError(parser.sc.error) from None
        raise hcl1.HclError("EOF token found") from None
    except hcl1.HclError:
        if parser.sc.error:
            raise hcl1.HclError(parser.sc.error) from None
        raise
    if parser.sc.error:
        raise hcl1.HclError(parser.sc.error)
    return root
