"""Request bodies of the SSO endpoints, decoded like Go's ``json.NewDecoder(body).Decode(&struct)``.

:func:`decode_struct` fills a plain dict from a JSON object for a flat Go struct described by
``{FieldName: kind}``: keys match field names case-insensitively (Go's folding), the last duplicate
wins, unknown keys are ignored, ``null`` leaves a field alone. Kinds: ``string``, ``bool``,
``uint64`` (a number outside it: ``number <text>``), ``any`` (``interface{}``: only a number that
overflows a float64 is an error, ``number <text>`` ... ``of type float64``; the value is not kept),
``strings`` (``[]string``), ``links`` (``[]*{Name}`` or ``[]*{ID, Name}``: a list of dicts
of strings). A wrong JSON type raises :class:`BodyError` with Go's text ``json: cannot unmarshal
<kind> into Go struct field <Struct>.<Field> of type <gotype>`` (the first one; decoding goes on
like Go's and reports it at the end); a syntax error raises Go's scanner text (``EOF``,
``unexpected EOF``, ``invalid character ...``). :func:`decode_body` turns a request into those
values or the 400 answer; :func:`json_response` and :func:`empty_response` shape the 200s.
"""

from __future__ import annotations

import math

from werkzeug.wrappers import Request, Response

from ...golang.json import GoJSONError, JArr, JNum, JObj, JStr, decode_first_value, kind_name
from ...golang.strconv import decimal_in_range
from ..request import Reply, decode_with, reply

_GOTYPES = {"string": "string", "bool": "bool", "uint64": "uint64", "strings": "[]string"}
_UINT64_MAX = (1 << 64) - 1


class BodyError(ValueError):
    """The body cannot be decoded; ``str()`` is the upstream 400 text."""


def _fold(key: str) -> str:
    return "".join("K" if c == "\u212a" else "S" if c == "\u017f" else c.upper() if c.isascii() else c
                   for c in key)


def _scalar(node: object, kind: str):
    """The Python value for ``node`` of ``kind``, or None when the JSON kind does not fit."""
    if kind == "string" and isinstance(node, JStr):
        return node.value
    if kind == "bool" and isinstance(node, bool):
        return node
    if kind == "uint64" and isinstance(node, JNum) and node.raw.isdigit():
        return decimal_in_range(node.raw, 0, _UINT64_MAX)
    return None


def _float_overflow(node: object) -> JNum | None:
    """The first number in ``node`` (depth first, in order) that overflows a float64, or None."""
    work = [node]
    while work:
        item = work.pop()
        if isinstance(item, JNum):
            if math.isinf(float(item.raw)):
                return item
        elif isinstance(item, JObj):
            work.extend(reversed([v for _, v in item.pairs]))
        elif isinstance(item, JArr):
            work.extend(reversed(item.items))
    return None


def decode_struct(data: bytes, struct: str, spec: dict[str, str], link_type: str = "") -> dict:
    """Decode ``data`` into ``{field: value}`` for the fields present (see the module doc).

    ``struct`` names the Go struct for error texts (``ACLBindingRule``); ``link_type`` is the Go type
    of ``links`` fields (``[]*structs.ACLRolePolicyLink``). A JSON ``null`` body gives ``{}``.
    """
    try:
        node = decode_first_value(data)
    except GoJSONError as exc:
        raise BodyError(str(exc)) from None
    if node is None:
        return {}
    if not isinstance(node, JObj):
        raise BodyError(f"json: cannot unmarshal {kind_name(node)} into Go value of type structs.{struct}")
    folded = {_fold(name): name for name in spec}
    out: dict = {}
    first_error: str | None = None

    def error(value: object, name: str, gotype: str) -> None:
        nonlocal first_error
        if first_error is None:
            # a number into a number type that does not fit it (strconv.ParseUint / ParseFloat failed)
            # shows its text, as encoding/json's literalStore and convertNumber do
            fits_kind = isinstance(value, JNum) and gotype in ("uint64", "float64")
            shown = f"number {value.raw}" if fits_kind else kind_name(value)
            first_error = f"json: cannot unmarshal {shown} into Go struct field {struct}.{name} of type {gotype}"

    for key, value in node.pairs:
        name = folded.get(_fold(key))
        if name is None or value is None:
            continue
        kind = spec[name]
        if kind == "any":  # interface{}: any JSON value, its numbers as float64
            overflow = _float_overflow(value)
            if overflow is not None:
                error(overflow, name, "float64")
        elif kind in _GOTYPES and kind != "strings":
            got = _scalar(value, kind)
            if got is None:
                error(value, name, _GOTYPES[kind])
            else:
                out[name] = got
        elif kind == "strings":
            if not isinstance(value, JArr):
                error(value, name, "[]string")
                continue
            items = []
            for item in value.items:
                if item is None:
                    items.append("")
                elif isinstance(item, JStr):
                    items.append(item.value)
                else:
                    error(item, name, "string")
            out[name] = items
        else:  # links
            if not isinstance(value, JArr):
                error(value, name, link_type)
                continue
            links = []
            for item in value.items:
                if item is None:
                    continue
                if not isinstance(item, JObj):
                    error(item, name, link_type.removeprefix("[]*").replace("structs.", "structs."))
                    continue
                link = {}
                for k, v in item.pairs:
                    field = {"NAME": "Name", "ID": "ID"}.get(_fold(k))
                    if field and isinstance(v, JStr):
                        link[field] = v.value
                    elif field and v is not None:
                        error(v, f"{name}.{field}", "string")
                links.append(link)
            out[name] = links
    if first_error is not None:
        raise BodyError(first_error)
    return out


def json_response(text: str, index: int | None, headers: dict | None = None) -> Reply | Response:
    """A 200 JSON answer with ``X-Nomad-Index`` (when ``index`` is not None) and extra headers."""
    hdrs = dict(headers or {})
    if index is not None:
        hdrs.setdefault("X-Nomad-Index", str(index))
    return reply(text, 200, "application/json", hdrs)


def empty_response(index: int) -> Reply | Response:
    """A 200 with no body and no Content-Type (Nomad's writes that reply nothing)."""
    return reply(b"", 200, None, {"X-Nomad-Index": str(index)})


def decode_body(request: Request, struct: str, spec: dict, link_type: str = "") -> dict | Reply | Response:
    """The body decoded for a write, or the 400 answer (empty body, Go JSON errors)."""
    return decode_with(request, lambda body: decode_struct(body, struct, spec, link_type), BodyError)
