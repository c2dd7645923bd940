"""A token write's body decoded as ``ACLToken.UnmarshalJSON`` decodes it (``nomad/structs/acl.go``).

The body is decoded into an anonymous struct wrapping the token, so Go's type errors name the
field without a struct (``json: cannot unmarshal number into Go struct field .Name of type
string``). ``ExpirationTTL`` is any JSON value: a string is a Go duration (``time: invalid
duration "x"``), a number nanoseconds (``time.Duration(float64)``; one that overflows a float64 is
``json: cannot unmarshal number 1e999 into Go struct field .ExpirationTTL of type float64``, in
document order with the other type errors), anything else ignored. ``CreateTime`` and
``ExpirationTime`` are RFC 3339 strings (``Time.UnmarshalJSON: input is not a JSON string``, or
Go's parse error). ``Hash``, ``CreateIndex`` and ``ModifyIndex`` are read and ignored.
"""

from __future__ import annotations

from ...golang.duration import GoDurationError, parse_duration
from ...golang.json import GoJSONError, JNum, JObj, JStr, decode_first_value, kind_name
from ...golang.time import GoTimeError, parse_rfc3339
from ..aclstore.tokens import TokenRequest
from ..decode import duration_of_float
from ..sso.body import BodyError, _fold, decode_struct

FIELDS = {"AccessorID": "string", "SecretID": "string", "Name": "string", "Type": "string",
          "Policies": "strings", "Roles": "links", "Global": "bool", "CreateIndex": "uint64",
          "ModifyIndex": "uint64", "Hash": "string", "ExpirationTTL": "any"}
_SPECIAL = {"EXPIRATIONTTL": "ExpirationTTL", "CREATETIME": "CreateTime", "EXPIRATIONTIME": "ExpirationTime"}
ANON = "struct { ExpirationTTL interface {}; Hash string; *structs.Alias }"


def _time(node):
    if not isinstance(node, JStr):
        raise BodyError("Time.UnmarshalJSON: input is not a JSON string")
    try:
        parsed = parse_rfc3339(node.raw)
    except GoTimeError as exc:
        raise BodyError(str(exc)) from None
    return None if parsed.is_zero() else parsed.to_datetime()  # Go's zero time: "not set"


def decode_token(data: bytes) -> TokenRequest:
    """The :class:`~..aclstore.tokens.TokenRequest` in ``data``; raises :class:`BodyError` with Go's text."""
    try:
        node = decode_first_value(data)
    except GoJSONError as exc:
        raise BodyError(str(exc)) from None
    if node is None:
        return TokenRequest()
    if not isinstance(node, JObj):
        raise BodyError(f"json: cannot unmarshal {kind_name(node)} into Go value of type {ANON}")
    request = TokenRequest()
    for key, value in node.pairs:
        field = _SPECIAL.get(_fold(key))
        if field is None or value is None:
            continue
        if field == "ExpirationTTL":
            if isinstance(value, JStr) and value.value:
                try:
                    request.ExpirationTTL = parse_duration(value.value)
                except GoDurationError as exc:
                    raise BodyError(str(exc)) from None
            elif isinstance(value, JNum):  # one that overflows float64 is decode_struct's type error
                request.ExpirationTTL = duration_of_float(float(value.raw))
        else:
            setattr(request, field, _time(value))
    values = decode_struct(data, "", FIELDS, "[]*structs.ACLTokenRoleLink")
    for name in ("AccessorID", "SecretID", "Name", "Type", "Global"):
        if name in values:
            setattr(request, name, values[name])
    if "Policies" in values:
        request.Policies = values["Policies"]
    if "Roles" in values:
        request.Roles = values["Roles"]
    return request
