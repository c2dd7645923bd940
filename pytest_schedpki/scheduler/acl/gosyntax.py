"""Go's ``%#v`` of the policy blocks Nomad prints in its errors (``Invalid namespace policy: %#v``):
``&acl.NamespacePolicy{Name:"default", Policy:"foo", Capabilities:[]string(nil),
Variables:(*acl.VariablesPolicy)(nil)}``.

A non-nil pointer inside the block prints as its address in Go, which changes from run to run; the
double prints the fixed :data:`POINTER` there (docs/divergences.md).
"""

from __future__ import annotations

from typing import Any

from ...golang.duration import go_quote
from .hcl_decode import Struct

POINTER = "0xc000010000"


def _value(kind: Any, value: Any) -> str:
    if kind in ("string", "key"):
        return go_quote(value)
    if kind == "[]string":
        if value is None:
            return "[]string(nil)"
        return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"
    if isinstance(kind, tuple) and kind[0] == "ptr":
        return f"(*{kind[1].go_type})({'nil' if value is None else POINTER})"
    if isinstance(kind, tuple) and kind[0] == "slice":
        go_type = f"[]*{kind[1].go_type}"
        if value is None:
            return f"{go_type}(nil)"
        return go_type + "{" + ", ".join(f"(*{kind[1].go_type})({POINTER})" for _ in value) + "}"
    raise AssertionError(kind)


def go_sharp_v(schema: Struct, block: dict) -> str:
    """``fmt.Sprintf("%#v", &block)`` for a decoded block of ``schema``."""
    parts = [f"{f.name}:{_value(f.kind, block.get(f.name))}" for f in schema.fields if f.kind != "unusedKeys"]
    return f"&{schema.go_type}{{{', '.join(parts)}}}"
