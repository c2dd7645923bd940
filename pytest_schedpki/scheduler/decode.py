"""Request bodies -> :class:`~.model.AuthMethod`, exactly as Nomad's HTTP handler decodes them.

:func:`decode_method` reproduces ``structs.ACLAuthMethod.UnmarshalJSON`` run by Go's
``encoding/json`` decoder:

* keys match field names case-insensitively (Go's folding, so ``maxtokenttl`` and ``Tokenlocality``
  work); the last of duplicate keys wins, but a repeated ``Config``/``ClaimMappings``/client
  assertion object is merged into the earlier one, as Go reuses non-nil pointers and maps;
* unknown keys are ignored; ``null`` leaves a field alone (or sets a pointer/slice/map to nil);
* ``MaxTokenTTL``: a Go duration string or a number of **nanoseconds**; ``""`` is an error
  (``time: invalid duration ""``); null, bools, objects and arrays are silently ignored;
* leeways: a duration string (``""`` = 0) or nanoseconds, anything else is
  ``unexpected ExpirationLeeway type: <%v>``;
* wrong JSON types give ``json: cannot unmarshal <kind> into Go struct field .Alias.<Field> of type
  <type>`` (Go >= 1.24 field paths); ``CreateTime``/``ModifyTime`` must be RFC 3339 strings.

Every failure raises :class:`DecodeError`, whose text is the upstream 400 body.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, fields

from ..golang.base64 import go_base64_error
from ..golang.duration import GoDurationError, parse_duration
from ..golang.json import GoJSONError, JArr, JNum, JObj, JStr, decode_first_value, go_format_value, kind_name
from ..golang.strconv import decimal_in_range
from ..golang.time import ZERO_TIME, GoTimeError, parse_rfc3339
from .model import AuthMethod, AuthMethodConfig, OIDCClientAssertion, PrivateKey, frozen_map

AUX_METHOD_TYPE = "struct { MaxTokenTTL interface {}; *structs.Alias }"
AUX_CONFIG_TYPE = ("struct { ExpirationLeeway interface {}; NotBeforeLeeway interface {}; "
                   "ClockSkewLeeway interface {}; *structs.Alias }")
LEEWAYS = ("ExpirationLeeway", "NotBeforeLeeway", "ClockSkewLeeway")
_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


class DecodeError(ValueError):
    """The body cannot be decoded into an auth method; ``str()`` is Nomad's 400 text."""


@dataclass(frozen=True)
class _TypeErr:
    value: str
    gotype: str
    struct: str = ""
    field: str = ""

    def text(self) -> str:
        if self.struct or self.field:
            return (f"json: cannot unmarshal {self.value} into Go struct field {self.struct}.{self.field} "
                    f"of type {self.gotype}")
        return f"json: cannot unmarshal {self.value} into Go value of type {self.gotype}"


class _Abort(Exception):
    """A hard error from a nested UnmarshalJSON: stops decoding at once (a saved type error does not)."""

    def __init__(self, err: _TypeErr | str):
        super().__init__(err)
        self.err = err


def _text(err: _TypeErr | str) -> str:
    return err.text() if isinstance(err, _TypeErr) else err


def _fold(key: str) -> str:
    """Go's foldName for matching ASCII field names (Kelvin sign and long s fold to K and S)."""
    return "".join("K" if c == "\u212a" else "S" if c == "\u017f" else c.upper() if c.isascii() else c
                   for c in key)


@dataclass(frozen=True)
class _Field:
    name: str
    kind: str  # string, bool, uint64, strings, bytes, strmap, time, any, struct, config
    gotype: str = ""
    embedded: bool = True  # promoted from the embedded *Alias (error paths say ".Alias.<name>")
    sub: _Struct | None = None


class _Struct:
    def __init__(self, goname: str, *specs: _Field):
        self.goname = goname
        self.fields = {_fold(f.name): f for f in specs}


def _f(name: str, kind: str, gotype: str = "", embedded: bool = True, sub: _Struct | None = None) -> _Field:
    return _Field(name, kind, gotype or {"string": "string", "bool": "bool", "uint64": "uint64",
                                         "strings": "[]string", "strmap": "map[string]string"}.get(kind, ""),
                  embedded, sub)


_KEY = _Struct("OIDCClientAssertionKey", *(
    _f(n, "string", "structs.OIDCClientAssertionKeyIDHeader" if n == "KeyIDHeader" else "", False)
    for n in ("PemKey", "PemKeyFile", "KeyIDHeader", "PemCert", "PemCertFile", "KeyID")))
_ASSERTION = _Struct(
    "OIDCClientAssertion",
    _f("KeySource", "string", "structs.OIDCClientAssertionKeySource", False),
    _f("Audience", "strings", embedded=False),
    _f("PrivateKey", "struct", "structs.OIDCClientAssertionKey", False, _KEY),
    _f("ExtraHeaders", "strmap", embedded=False),
    _f("KeyAlgorithm", "string", embedded=False),
    _f("ClientSecret", "string", embedded=False),
)
_LIST_FIELDS = ("JWTValidationPubKeys", "OIDCScopes", "BoundAudiences", "BoundIssuer", "AllowedRedirectURIs",
                "DiscoveryCaPem", "SigningAlgs")
_CONFIG = _Struct(
    "",
    *(_f(n, "any", embedded=False) for n in LEEWAYS),
    *(_f(n, "strings") for n in _LIST_FIELDS),
    *(_f(n, "string") for n in ("JWKSURL", "OIDCDiscoveryURL", "OIDCClientID", "OIDCClientSecret", "JWKSCACert")),
    _f("OIDCClientAssertion", "struct", "structs.OIDCClientAssertion", sub=_ASSERTION),
    *(_f(n, "bool") for n in ("OIDCEnablePKCE", "OIDCDisableUserInfo", "VerboseLogging")),
    *(_f(n, "strmap") for n in ("ClaimMappings", "ListClaimMappings")),
)
_METHOD = _Struct(
    "",
    _f("MaxTokenTTL", "any", embedded=False),
    *(_f(n, "string") for n in ("Name", "Type", "TokenLocality", "TokenNameFormat")),
    _f("Default", "bool"),
    _f("Config", "config"),
    _f("Hash", "bytes", "[]uint8"),
    _f("CreateTime", "time"),
    _f("ModifyTime", "time"),
    _f("CreateIndex", "uint64"),
    _f("ModifyIndex", "uint64"),
)


def duration_of_float(value: float) -> int:
    """Go's ``time.Duration(float64)`` in nanoseconds: truncation toward zero; out of int64's range
    (and NaN/inf) gives the amd64 result, the minimum int64."""
    return int(value) if -(2.0 ** 63) <= value < 2.0 ** 63 else _INT64_MIN


class _Decoder:
    """One ``json.Unmarshal`` run: the first saved type error, the error context, the aux ``any`` fields."""

    def __init__(self):
        self.saved: _TypeErr | str | None = None
        self.struct: str | None = None
        self.stack: list[str] = []
        self.aux: dict[str, object] = {}

    def context(self, err: _TypeErr) -> _TypeErr:
        """Go's addErrorContext: prefix the current struct and field path."""
        if self.struct is None and not self.stack:
            return err
        path = self.stack + ([err.field] if err.field else [])
        return _TypeErr(err.value, err.gotype, self.struct or "", ".".join(path))

    def save(self, value: str, gotype: str) -> None:
        if self.saved is None:
            self.saved = self.context(_TypeErr(value, gotype))

    def struct_into(self, node: JObj, spec: _Struct, target: dict) -> None:
        for key, value in node.pairs:
            field = spec.fields.get(_fold(key))
            if field is None:
                continue
            outer_struct, depth = self.struct, len(self.stack)
            self.struct = spec.goname
            self.stack.extend(("Alias", field.name) if field.embedded else (field.name,))
            self.field_into(value, field, target)
            self.struct = outer_struct
            del self.stack[depth:]

    def field_into(self, node: object, f: _Field, target: dict) -> None:
        kind, name = f.kind, f.name
        if kind == "any":
            self._check_numbers(node)
            self.aux[name] = node
        elif kind in ("string", "bool"):
            if isinstance(node, JStr) and kind == "string":
                target[name] = node.value
            elif isinstance(node, bool) and kind == "bool":
                target[name] = node
            elif node is not None:
                self.save(kind_name(node), f.gotype)
        elif kind == "uint64":
            if isinstance(node, JNum):
                value = decimal_in_range(node.raw, 0, _UINT64_MAX) if node.raw.isdigit() else None
                if value is not None:
                    target[name] = value
                else:
                    self.save("number " + node.raw, "uint64")
            elif node is not None:
                self.save(kind_name(node), "uint64")
        elif kind == "strings":
            self._strings_into(node, f, target)
        elif kind == "bytes":
            self._bytes_into(node, target)
        elif kind == "strmap":
            if node is None or not isinstance(node, JObj):
                if node is None:
                    target[name] = None
                else:
                    self.save(kind_name(node), f.gotype)
                return
            mapping = target.get(name)
            if mapping is None:
                mapping = target[name] = {}
            for key, item in node.pairs:
                if item is not None and not isinstance(item, JStr):
                    self.save(kind_name(item), "string")
                mapping[key] = item.value if isinstance(item, JStr) else ""
        elif kind == "time":
            if node is None:
                return
            if not isinstance(node, JStr):
                raise _Abort("Time.UnmarshalJSON: input is not a JSON string")
            try:
                target[name] = parse_rfc3339(node.raw)
            except GoTimeError as exc:
                raise _Abort(str(exc)) from None
        elif kind == "struct":
            if node is None:
                target[name] = None
                return
            sub = target.get(name)
            if sub is None:
                sub = target[name] = {}
            if isinstance(node, JObj):
                self.struct_into(node, f.sub, sub)
            else:
                self.save(kind_name(node), f.gotype)
        else:  # config: its own UnmarshalJSON, whose errors abort the outer decode
            if node is None:
                target[name] = None
                return
            sub = target.get(name)
            if sub is None:
                sub = target[name] = {}
            try:
                _config_into(node, sub)
            except _Abort as exc:
                raise _Abort(self.context(exc.err) if isinstance(exc.err, _TypeErr) else exc.err) from None

    def _strings_into(self, node: object, f: _Field, target: dict) -> None:
        if node is None:
            target[f.name] = None
        elif not isinstance(node, JArr):
            self.save(kind_name(node), f.gotype)
        else:
            previous = target.get(f.name) or []  # Go decodes into the old elements: null keeps them
            out = []
            for i, item in enumerate(node.items):
                if isinstance(item, JStr):
                    out.append(item.value)
                    continue
                if item is not None:
                    self.save(kind_name(item), "string")
                out.append(previous[i] if i < len(previous) else "")
            target[f.name] = out

    def _bytes_into(self, node: object, target: dict) -> None:
        if node is None:
            target["Hash"] = None
        elif isinstance(node, JStr):
            raw = node.value.encode("utf-8")
            problem = go_base64_error(raw)
            if problem is not None:
                if self.saved is None:
                    self.saved = problem
            else:
                target["Hash"] = base64.b64decode(b"".join(raw.split()) or b"")
        elif isinstance(node, JArr):
            out = bytearray()
            for item in node.items:
                byte = decimal_in_range(item.raw, 0, 255) if isinstance(item, JNum) and item.raw.isdigit() else None
                if byte is not None:
                    out.append(byte)
                else:
                    if item is not None:
                        self.save(("number " + item.raw) if isinstance(item, JNum) else kind_name(item), "uint8")
                    out.append(0)
            target["Hash"] = bytes(out)
        else:
            self.save(kind_name(node), "[]uint8")

    def _check_numbers(self, node: object) -> None:
        work = [node]
        while work:
            item = work.pop()
            if isinstance(item, JNum) and float(item.raw) in (float("inf"), float("-inf")):
                self.save("number " + item.raw, "float64")
            elif isinstance(item, JObj):  # reversed: the stack pops them in document order
                work.extend(reversed([v for _, v in item.pairs]))
            elif isinstance(item, JArr):
                work.extend(reversed(item.items))


def _config_into(node: object, target: dict) -> None:
    """``ACLAuthMethodConfig.UnmarshalJSON`` into ``target`` (merging into an earlier Config)."""
    d = _Decoder()
    if not isinstance(node, JObj):
        raise _Abort(_TypeErr(kind_name(node), AUX_CONFIG_TYPE))
    d.struct_into(node, _CONFIG, target)
    if d.saved is not None:
        raise _Abort(d.saved)
    for name in LEEWAYS:
        value = d.aux.get(name)
        if value is None:
            continue
        if isinstance(value, JStr):
            if value.value != "":
                try:
                    target[name] = parse_duration(value.value)
                except GoDurationError as exc:
                    raise _Abort(str(exc)) from None
        elif isinstance(value, JNum):
            target[name] = duration_of_float(float(value.raw))
        else:
            raise _Abort(f"unexpected {name} type: {go_format_value(value)}")


def _tuple(value):
    return None if value is None else tuple(value)


def _build_key(t: dict | None) -> PrivateKey | None:
    return None if t is None else PrivateKey(**{k: t.get(k, "") for k in _KEY_NAMES})


_KEY_NAMES = ("PemKey", "PemKeyFile", "KeyIDHeader", "PemCert", "PemCertFile", "KeyID")


def _build_config(t: dict | None) -> AuthMethodConfig | None:
    if t is None:
        return None
    ca = t.get("OIDCClientAssertion")
    assertion = None if ca is None else OIDCClientAssertion(
        KeySource=ca.get("KeySource", ""), Audience=_tuple(ca.get("Audience")),
        PrivateKey=_build_key(ca.get("PrivateKey")), ExtraHeaders=frozen_map(ca.get("ExtraHeaders")),
        KeyAlgorithm=ca.get("KeyAlgorithm", ""), ClientSecret=ca.get("ClientSecret", ""))
    values = {f.name: t.get(f.name, f.default) for f in fields(AuthMethodConfig)}
    values.update({n: _tuple(t.get(n)) for n in _LIST_FIELDS})
    values.update({n: frozen_map(t.get(n)) for n in ("ClaimMappings", "ListClaimMappings")})
    values["OIDCClientAssertion"] = assertion
    return AuthMethodConfig(**values)


def decode_method(data: bytes) -> AuthMethod:
    """Decode a request body (bytes, any Content-Type) like Nomad's HTTP handler; raises DecodeError."""
    try:
        node = decode_first_value(data)
    except GoJSONError as exc:
        raise DecodeError(str(exc)) from None
    if node is None:  # a JSON null body leaves the method all-zero
        return AuthMethod()
    if not isinstance(node, JObj):
        raise DecodeError(_TypeErr(kind_name(node), AUX_METHOD_TYPE).text())
    d, t = _Decoder(), {}
    try:
        d.struct_into(node, _METHOD, t)
    except _Abort as exc:
        raise DecodeError(_text(exc.err)) from None
    if d.saved is not None:
        raise DecodeError(_text(d.saved))
    ttl, ttl_node = 0, d.aux.get("MaxTokenTTL")
    if isinstance(ttl_node, JStr):
        try:
            ttl = parse_duration(ttl_node.value)
        except GoDurationError as exc:
            raise DecodeError(str(exc)) from None
    elif isinstance(ttl_node, JNum):
        ttl = duration_of_float(float(ttl_node.raw))
    return AuthMethod(
        Name=t.get("Name", ""), Type=t.get("Type", ""), TokenLocality=t.get("TokenLocality", ""),
        TokenNameFormat=t.get("TokenNameFormat", ""), MaxTokenTTL=ttl, Default=t.get("Default", False),
        Config=_build_config(t.get("Config")), Hash=t.get("Hash"),
        CreateTime=t.get("CreateTime", ZERO_TIME), ModifyTime=t.get("ModifyTime", ZERO_TIME),
        CreateIndex=t.get("CreateIndex", 0), ModifyIndex=t.get("ModifyIndex", 0),
    )
