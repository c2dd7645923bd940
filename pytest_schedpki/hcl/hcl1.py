"""HCL1 as the two upstreams' policy parsers read it (``github.com/hashicorp/hcl`` v1): scanner and parser.

Written from the grammar and from the errors ``bao`` answers for hand-made mistakes, so that error
texts and ``At line:column`` positions come out as OpenBao's. Columns follow Go's scanner: each
read past the end of the text counts one more column (an identifier at the very end, or an end of
text scanned twice by the parser, lands one column further), and a position just after a newline
is reported at the end of the previous line.

:func:`parse` returns an :class:`ObjectList`; errors raise :class:`HclError` whose ``str()`` is
HCL1's text (``At 1:12: object expected closing RBRACE got: EOF``; OpenBao prefixes it with
``failed to parse policy: ``, Nomad with ``Failed to parse ACL Policy: ``). Scanner errors
(``illegal char``, ``literal not terminated``, ``comment not terminated``) win over parser errors,
as in HCL1.

``nomad=True`` reads as Nomad's fork of the library (``v1.0.1-nomad-1``, ``hcl/parser/parser.go``
``objectType``) does: an error inside an object whose last token read is its closing ``}`` is
dropped and the items read so far are kept (``a { b = }`` then fails, if at all, on what follows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .unquote import UnquoteError, unquote

EOF = "EOF"


class HclError(ValueError):
    """A policy text HCL1 refuses; ``str()`` is ``At <line>:<col>: <reason>``."""


class _EofToken(Exception):
    """HCL1's ``errEofToken``: the text ended where an item could start (not an error at top level)."""


@dataclass
class Token:
    """One token: ``type`` (IDENT, STRING, NUMBER, FLOAT, BOOL, LBRACE, ..., EOF, ILLEGAL), its
    ``text`` as written and its position."""

    type: str
    text: str
    line: int
    col: int

    @property
    def pos(self) -> str:
        """``line:col``; ``-`` for a token without a position (HCL1's JSON parser keeps none)."""
        return f"{self.line}:{self.col}" if self.line else "-"

    def value(self) -> Any:
        """The token's value: a string without quotes, a number, a bool, or the identifier."""
        if self.type == "STRING":
            if not self.line:  # a token of HCL1's JSON parser: JSON's quoting, checked by the JSON reader
                return json.loads(self.text)
            try:
                return unquote(self.text)
            except UnquoteError:
                # HCL1's Token.Value panics here (OpenBao drops the connection; Nomad's decoder recovers
                # with this text); the scanner let the escape through (an octal above \377, ...)
                raise HclError(f"At {self.pos}: unquote {self.text} err: invalid syntax") from None
        if self.type == "NUMBER":
            return int(self.text)
        if self.type == "FLOAT":
            return float(self.text)
        if self.type == "BOOL":
            return self.text == "true"
        return self.text


@dataclass
class Literal:
    token: Token


@dataclass
class ListNode:
    items: list[Any]
    token: Token  # the LBRACK


@dataclass
class ObjectItem:
    keys: list[Token]
    val: Any
    assign_line: int = 0  # 0 for blocks (``path "a" { }``), as OpenBao reports them


@dataclass
class ObjectList:
    items: list[ObjectItem] = field(default_factory=list)
    token: Token | None = None  # the LBRACE of an object value

    def filter(self, key: str) -> ObjectList:
        """The items whose first key is ``key``, with that key removed (HCL1's ``Filter``)."""
        return ObjectList([ObjectItem(i.keys[1:], i.val, i.assign_line) for i in self.items
                           if i.keys and i.keys[0].value() == key])


_PUNCT = {"[": "LBRACK", "]": "RBRACK", "{": "LBRACE", "}": "RBRACE", ",": "COMMA", "=": "ASSIGN",
          "+": "ADD", "-": "SUB", ".": "PERIOD"}


def _digit_value(ch: str) -> int:
    """Go's ``digitVal``: a hex digit's value, 16 for anything else."""
    return int(ch, 16) if len(ch) == 1 and ch in "0123456789abcdefABCDEF" else 16


def _is_letter(ch: str) -> bool:
    return ch.isalpha() or ch == "_"


class _Scanner:
    def __init__(self, text: str, check_escapes: bool = True):
        self.text = text
        self.check_escapes = check_escapes
        self.offset = 0
        self.line, self.col = 1, 0
        self.last_line_len = 0
        self.prev: tuple[int, int, int] = (0, 1, 0)
        self.error: HclError | None = None

    def next(self) -> str:
        self.prev = (self.offset, self.line, self.col)
        self.col += 1
        if self.offset >= len(self.text):
            return EOF
        ch = self.text[self.offset]
        self.offset += 1
        if ch == "\n":
            self.line += 1
            self.last_line_len = self.col
            self.col = 0
        return ch

    def unread(self) -> None:
        self.offset, self.line, self.col = self.prev

    def peek(self) -> str:
        return self.text[self.offset] if self.offset < len(self.text) else EOF

    def _recent(self) -> tuple[int, int]:
        return (self.line, self.col) if self.col > 0 else (self.line - 1, self.last_line_len)

    def err(self, message: str) -> None:
        line, col = self._recent()
        self.error = HclError(f"At {line}:{col}: {message}")

    def _scan_escape(self) -> None:
        """The escape after a backslash in a string, as HCL1's ``scanEscape`` reads it: one of
        ``abfnrtv\\"``, or 3 octal, ``x`` + 2, ``u`` + 4 or ``U`` + 8 hex digits; anything else (or too
        few digits) is ``illegal char escape`` at the character read last. Which values the digits may
        hold is ``unquote``'s business (:meth:`Token.value`)."""
        ch = self.next()
        if ch != EOF and ch in 'abfnrtv\\"':
            return
        digits = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}.get(ch)
        if digits is None and ch != EOF and ch in "01234567":
            digits, ch = (8, 3), ch
        elif digits is not None:
            ch = self.next()
        else:
            self.err("illegal char escape")
            return
        base, n = digits
        start = n
        while n > 0 and ch != EOF and _digit_value(ch) < base:
            ch = self.next()
            if ch == EOF:
                break
            n -= 1
        if n > 0:
            self.err("illegal char escape")
        if n != start and ch != EOF:
            self.unread()

    def scan(self) -> Token:
        ch = self.next()
        while ch in (" ", "\t", "\n", "\r"):
            ch = self.next()
        start = self.offset - (0 if ch == EOF else 1)
        line, col = self._recent()
        if ch == EOF:
            return Token(EOF, "", line, col)
        if _is_letter(ch):
            ch = self.next()
            while ch != EOF and (_is_letter(ch) or ch.isdigit() or ch in "-."):
                ch = self.next()
            if ch != EOF:
                self.unread()
            text = self.text[start:self.offset]
            return Token("BOOL" if text in ("true", "false") else "IDENT", text, line, col)
        if ch.isdigit() or (ch == "-" and self.peek().isdigit()):
            kind = "NUMBER"
            ch = self.next()
            while ch != EOF and (ch.isdigit() or ch in ".eE" or (ch in "+-" and self.text[self.offset - 2] in "eE")):
                if ch in ".eE":
                    kind = "FLOAT"
                ch = self.next()
            if ch != EOF:
                self.unread()
            return Token(kind, self.text[start:self.offset], line, col)
        if ch == '"':
            while True:
                ch = self.next()
                if ch == EOF or ch == "\n":
                    self.err("literal not terminated")
                    break
                if ch == '"':
                    break
                if ch == "\\":
                    if self.check_escapes:
                        self._scan_escape()
                    else:
                        self.next()
            return Token("STRING", self.text[start:self.offset], line, col)
        if ch == "#" or (ch == "/" and self.peek() == "/"):
            while ch not in ("\n", EOF):
                ch = self.next()
            if ch != EOF:
                self.unread()
            return self.scan()
        if ch == "/" and self.peek() != "*":
            self.err("expected '/' for comment")
            return self.scan()
        if ch == "/" and self.peek() == "*":
            self.next()
            ch = self.next()
            while True:
                if ch == EOF:
                    self.err("comment not terminated")
                    return Token(EOF, "", *self._recent())
                previous, ch = ch, self.next()
                if previous == "*" and ch == "/":
                    break
            return self.scan()
        if ch in _PUNCT:
            return Token(_PUNCT[ch], ch, line, col)
        self.err("illegal char")
        return Token("ILLEGAL", ch, line, col)


class _Parser:
    def __init__(self, text: str, nomad: bool = False):
        self.nomad = nomad
        # Nomad's fork reports no bad escape while scanning: Token.Value's unquoting panics on it later
        self.scanner = _Scanner(text, check_escapes=not nomad)
        self.tok = Token(EOF, "", 1, 1)
        self.buffered = False

    def scan(self) -> Token:
        if self.buffered:
            self.buffered = False
            return self.tok
        self.tok = self.scanner.scan()
        return self.tok

    def unscan(self) -> None:
        self.buffered = True

    def object_list(self, obj: bool) -> ObjectList:
        node = ObjectList()
        while True:
            if obj:
                tok = self.scan()
                self.unscan()
                if tok.type == "RBRACE":
                    break
            try:
                item = self.object_item()
            except _EofToken:
                break
            except HclError as exc:
                exc.partial = node  # HCL1 returns the items read so far with the error
                raise
            node.items.append(item)
            if self.scan().type != "COMMA":
                self.unscan()
        return node

    def object_item(self) -> ObjectItem:
        keys, error = self.object_key()
        if keys and isinstance(error, _EofToken):
            error = None
        if keys and error is not None and self.tok.type == "RBRACE":
            error = None
            self.tok = Token(EOF, self.tok.text, self.tok.line, self.tok.col)
        if error is not None:
            raise error
        if self.tok.type == "ASSIGN":
            line = self.tok.line
            return ObjectItem(keys, self.object(), line)
        if self.tok.type == "LBRACE":
            return ObjectItem(keys, self.object_type())
        shown = " ".join(k.text for k in keys)
        raise HclError(f"At {self.tok.pos}: key '{shown}' expected start of object ('{{') or assignment ('=')")

    def object_key(self) -> tuple[list[Token], Exception | None]:
        keys: list[Token] = []
        while True:
            tok = self.scan()
            if tok.type == EOF:
                return keys, _EofToken()
            if tok.type == "ASSIGN":
                if len(keys) > 1:
                    return [], HclError(f"At {tok.pos}: nested object expected: LBRACE got: {tok.type}")
                if not keys:
                    return [], HclError(f"At {tok.pos}: no object keys found!")
                return keys, None
            if tok.type == "LBRACE":
                if not keys:
                    return keys, HclError(f"At {tok.pos}: expected: IDENT | STRING got: {tok.type}")
                return keys, None
            if tok.type in ("IDENT", "STRING"):
                keys.append(tok)
                continue
            if tok.type == "ILLEGAL":
                return keys, HclError(f"At {tok.pos}: illegal character")
            return keys, HclError(f"At {tok.pos}: expected: IDENT | STRING | ASSIGN | LBRACE got: {tok.type}")

    def object(self) -> Any:
        tok = self.scan()
        if tok.type in ("NUMBER", "FLOAT", "BOOL", "STRING"):
            return Literal(tok)
        if tok.type == "LBRACE":
            return self.object_type()
        if tok.type == "LBRACK":
            return self.list_type()
        if tok.type == EOF:
            raise _EofToken()
        raise HclError(f"At {tok.pos}: Unknown token: {tok.pos} {tok.type} {tok.text}")

    def object_type(self) -> ObjectList:
        lbrace = self.tok
        try:
            node = self.object_list(True)
        except HclError as exc:
            if not (self.nomad and self.tok.type == "RBRACE"):
                raise
            node = exc.partial
        tok = self.scan()
        if tok.type != "RBRACE":
            raise HclError(f"At {tok.pos}: object expected closing RBRACE got: {tok.type}")
        node.token = lbrace
        return node

    def list_type(self) -> ListNode:
        node = ListNode([], self.tok)
        need_comma = False
        while True:
            tok = self.scan()
            if need_comma and tok.type not in ("COMMA", "RBRACK"):
                raise HclError(f"At {tok.pos}: error parsing list, expected comma or list end, got: {tok.type}")
            if tok.type in ("BOOL", "NUMBER", "FLOAT", "STRING"):
                node.items.append(Literal(tok))
                need_comma = True
            elif tok.type == "COMMA":
                need_comma = False
            elif tok.type == "LBRACE":
                try:
                    node.items.append(self.object_type())
                except HclError as exc:
                    raise HclError(f"At {tok.pos}: error while trying to parse object within list: {exc}") from None
                need_comma = True
            elif tok.type == "LBRACK":
                try:
                    node.items.append(self.list_type())
                except HclError as exc:
                    raise HclError(f"At {tok.pos}: error while trying to parse list within list: {exc}") from None
            elif tok.type == "RBRACK":
                return node
            else:
                raise HclError(f"At {tok.pos}: unexpected token while parsing list: {tok.type}")


def parse(text: str, nomad: bool = False) -> ObjectList:
    """The top-level object list of an HCL1 text (``nomad``: as Nomad's fork reads it, see above).
    Raises :class:`HclError`."""
    parser = _Parser(text, nomad)
    try:
        root = parser.object_list(False)
    except HclError:
        if parser.scanner.error is not None:
            raise parser.scanner.error from None
        raise
    if parser.scanner.error is not None:
        raise parser.scanner.error
    return root
