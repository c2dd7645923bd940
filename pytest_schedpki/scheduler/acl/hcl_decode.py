"""HCL1's decoder (``hcl.Decode`` into a Go struct, ``github.com/hashicorp/hcl`` ``v1.0.1-nomad-1``,
``decoder.go``) for the shapes a Nomad ACL policy has, then ``hclDecode``'s repair pass
(``acl/policy.go``).

A schema is a :class:`Struct` of :class:`Field` s; a field's kind is ``"string"``, ``"[]string"``,
``("ptr", Struct)`` or ``("slice", Struct)`` (a slice of pointers to structs), ``"key"`` (the block's
label, ``hcl:",key"``) or ``"unusedKeys"``. Decoded structs are dicts by Go field name; a nil
pointer or slice is ``None``, an empty slice ``[]`` (they print differently in Nomad's errors).

What the decoder does, as HCL1 does it:

* a struct field's items are found by the tag name or the Go name, compared as ``strings.EqualFold``
  does; labelled items (``namespace "a" {}``) are decoded first, all together, then each unlabelled
  one (``namespace {}``) in turn into the same value (a later one overwrites a string, appends to a
  slice);
* the keys of all the items of the top-level body, labels included, minus one per field found, are
  the ``unusedKeys`` (sorted);
* an unlabelled block decoded as a list of structs yields one struct per item of its body, labelled
  with that item's key; a block with two labels (``path "a" "b" {}``) is read as nested blocks;
* type errors say ``At <pos>: <root.name[i].Field>: <why>``; where Go would panic (the position of an
  empty object, an index out of range), :class:`GoPanic` carries Go's runtime text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...hcl import hcl1
from ...hcl.unquote import UnquoteError, unquote


class GoPanic(Exception):
    """Where the Go code panics; ``str()`` is the panic value as ``%v`` prints it."""


class DecodeError(ValueError):
    """A type error of the decoder: ``At <line:col>: <name>: <why>``."""


@dataclass(frozen=True)
class Field:
    name: str  # Go field name
    kind: Any
    tag: str = ""  # the hcl tag's name part, when it differs from the Go name


@dataclass(frozen=True)
class Struct:
    go_type: str  # e.g. "acl.NamespacePolicy"
    fields: tuple[Field, ...]


def _index_panic(index: int, length: int) -> GoPanic:
    return GoPanic(f"runtime error: index out of range [{index}] with length {length}")


NIL_DEREFERENCE = "runtime error: invalid memory address or nil pointer dereference"
_FOLD = {"k": "kK\u212a", "s": "sS\u017f"}  # simple case-folding orbits beyond upper/lower (Go's EqualFold)


def equal_fold(a: str, b: str) -> bool:
    """Go's ``strings.EqualFold`` for the ASCII names a schema uses (``b``)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x != y and x not in _FOLD.get(y.lower(), y.lower() + y.upper()):
            return False
    return True


def _bare(items: list[hcl1.ObjectItem]) -> hcl1.ObjectList:
    return hcl1.ObjectList(list(items), None)


def _is_object_type(node: Any) -> bool:
    return isinstance(node, hcl1.ObjectList) and node.token is not None


def type_name(node: Any) -> str:
    """The Go type HCL1 names in its errors (``%T``)."""
    if isinstance(node, hcl1.ObjectList):
        return "*ast.ObjectType" if node.token is not None else "*ast.ObjectList"
    return {hcl1.Literal: "*ast.LiteralType", hcl1.ListNode: "*ast.ListType",
            hcl1.ObjectItem: "*ast.ObjectItem"}[type(node)]


def position(node: Any) -> str:
    """``node.Pos()`` as ``line:col`` (``-`` when unknown, as for JSON); an empty object list has
    none (Go indexes its first item and panics)."""
    if isinstance(node, hcl1.ObjectItem):
        return node.keys[0].pos if node.keys else position(node.val)
    if isinstance(node, hcl1.ObjectList) and node.token is None:
        if not node.items:
            raise _index_panic(0, 0)
        return position(node.items[0])
    if node.token is None:  # an object HCL1 builds itself (a block with two labels)
        return "-"
    return node.token.pos


def key_value(token: hcl1.Token) -> str:
    """``Token.Value()`` of a key or string: HCL's unquoting for HCL text (a bad escape panics:
    ``unquote "\\500" err: invalid syntax``), JSON's for JSON (already checked by the JSON reader)."""
    if token.type == "STRING" and token.line:
        try:
            return unquote(token.text)
        except UnquoteError as exc:
            raise GoPanic(f"unquote {token.text} err: {exc}") from None
    return str(token.value())


def filter_fold(items: list[hcl1.ObjectItem], key: str) -> list[hcl1.ObjectItem]:
    """``ObjectList.Filter(key)``: the items whose first key folds to ``key``, that key removed."""
    return [hcl1.ObjectItem(i.keys[1:], i.val, i.assign_line) for i in items
            if i.keys and equal_fold(key_value(i.keys[0]), key)]


def _error(node: Any, text: str) -> DecodeError:
    return DecodeError(f"At {position(node)}: {text}")


class _Decoder:
    def decode(self, name: str, node: Any, kind: Any, current: Any) -> Any:
        if kind == "string":
            return self.string(name, node)
        if kind == "[]string":
            return self.slice(name, node, "string", current)
        if isinstance(kind, tuple) and kind[0] == "slice":
            return self.slice(name, node, ("ptr", kind[1]), current)
        if isinstance(kind, tuple) and kind[0] == "ptr":
            value = current if current is not None else zero(kind[1])
            self.struct(name, node, kind[1], value)
            return value
        raise AssertionError(kind)

    def string(self, name: str, node: Any) -> str:
        if isinstance(node, hcl1.Literal):
            tok = node.token
            if tok.type in ("NUMBER", "FLOAT", "BOOL"):
                return tok.text
            if tok.type == "STRING":
                return key_value(tok)
            if tok.type == "NULL":  # JSON null: HCL1 reads it as an empty string
                return ""
        raise _error(node, f"{name}: unknown type for string {type_name(node)}")

    def slice(self, name: str, node: Any, elem: Any, current: list | None) -> list:
        result = list(current) if current is not None else []
        if isinstance(node, hcl1.ObjectList) and node.token is None:
            items: list[Any] = list(node.items)
        elif isinstance(node, hcl1.ObjectList):
            items = [node]
        elif isinstance(node, hcl1.ListNode):
            items = list(node.items)
        else:
            raise _error(node, f"unknown slice type: {type_name(node)}")
        for index, item in enumerate(items):
            if elem != "string":
                item = _expand_object(item)
            result.append(self.decode(f"{name}[{index}]", item, elem, None))
        return result

    def struct(self, name: str, node: Any, schema: Struct, out: dict) -> None:
        item = None
        if isinstance(node, hcl1.ObjectItem):
            item, node = node, node.val
        if _is_object_type(node):
            node = _bare(node.items)
        if isinstance(node, hcl1.Literal) and item is not None:
            node = _bare([item])
        if not (isinstance(node, hcl1.ObjectList) and node.token is None):
            raise _error(node, f"{name}: not an object type for struct ({type_name(node)})")
        unused = [key_value(k) for i in node.items for k in i.keys]
        unused_field = None
        for field in schema.fields:
            if field.kind == "key":
                if item is None:
                    raise _error(node, f"{name}: {field.name} asked for 'key', impossible")
                out[field.name] = key_value(item.keys[0]) if item.keys else ""
                continue
            if field.kind == "unusedKeys":
                unused_field = field.name
                continue
            key = field.tag or field.name
            found = filter_fold(node.items, key)
            labelled = [i for i in found if i.keys]
            plain = [i for i in found if not i.keys]
            if not found:
                continue
            for at, candidate in enumerate(unused):
                if equal_fold(candidate, key):
                    del unused[at]
                    break
            full = f"{name}.{key}"
            if labelled:
                out[field.name] = self.decode(full, _bare(labelled), field.kind, out.get(field.name))
            for match in plain:
                value = _bare(match.val.items) if _is_object_type(match.val) else match.val
                out[field.name] = self.decode(full, value, field.kind, out.get(field.name))
        if unused and unused_field is not None:
            out[unused_field] = sorted(unused)


def _expand_object(node: Any) -> Any:
    """``expandObject``: an item with two labels becomes a block holding a block."""
    if not isinstance(node, hcl1.ObjectItem) or len(node.keys) != 2:
        return node
    inner = hcl1.ObjectItem(node.keys[1:], node.val, node.assign_line)
    return hcl1.ObjectItem(node.keys[:1], hcl1.ObjectList([inner], hcl1.Token("LBRACE", "{", 0, 0)))


def zero(schema: Struct) -> dict:
    """A struct's zero value: empty strings, nil pointers and slices."""
    return {f.name: ("" if f.kind in ("string", "key") else None) for f in schema.fields
            if f.kind != "unusedKeys"}


def decode(root: hcl1.ObjectList, schema: Struct) -> dict:
    """``hcl.DecodeObject`` of a parsed text into ``schema`` (named ``root`` in errors). Raises
    :class:`DecodeError` or :class:`GoPanic`."""
    out = zero(schema)
    _Decoder().struct("root", _bare(root.items), schema, out)
    return out


def go_index(values: list | None, index: int) -> Any:
    """``values[index]`` as Go evaluates it (a nil slice has length 0)."""
    length = len(values or ())
    if index >= length:
        raise _index_panic(index, length)
    return values[index]  # type: ignore[index]
