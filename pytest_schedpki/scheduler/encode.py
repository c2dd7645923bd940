"""Auth methods -> JSON, byte for byte as Nomad's server writes them.

* :func:`method_json` is ``ACLAuthMethod.MarshalJSON`` (Go ``encoding/json``): ``MaxTokenTTL``
  first as a duration string (``""`` when 0), then Name, Type, TokenLocality, TokenNameFormat,
  Default, Config (leeways first, map keys sorted, nothing omitted, nil as ``null``), Hash
  (base64), CreateTime, ModifyTime (RFC3339Nano), CreateIndex, ModifyIndex; ``<``, ``>``, ``&``,
  U+2028 and U+2029 are escaped as ``\\u003c``... Give it a sanitized method.
* :func:`sanitized_json` is ``method_json(sanitize(m))`` for a stored method, remembered per record
  (stored methods are frozen and replaced on write; :class:`~.views.Remembered`).
* :func:`stubs_json` is the list body (go-msgpack's JSON handle: declared order, no HTML escaping,
  4-space indentation plus a newline with ``?pretty``).
* :func:`method_to_dict` / :func:`stub_to_dict` give the same shapes as Python values;
  :func:`python_body` turns a Python mapping into the JSON a client would send.
"""

from __future__ import annotations

import base64
import datetime
import json
from dataclasses import fields, is_dataclass

from ..golang.duration import format_duration
from ..golang.time import GoTime
from .decode import LEEWAYS, DecodeError
from .model import AuthMethod, AuthMethodConfig, AuthMethodStub, sanitize
from .views import Remembered

_KEY_NAMES = ("PemKey", "PemKeyFile", "KeyIDHeader", "PemCert", "PemCertFile", "KeyID")


def _dur(ns: int) -> str:
    return format_duration(ns) if ns else ""


def _list(value):
    return None if value is None else list(value)


def _map(value):
    return None if value is None else {k: value[k] for k in sorted(value)}


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def config_to_dict(c: AuthMethodConfig | None) -> dict | None:
    """``ACLAuthMethodConfig.MarshalJSON`` shape: leeways first (duration text, ``""`` for 0)."""
    if c is None:
        return None
    out: dict = {name: _dur(getattr(c, name)) for name in LEEWAYS}
    for f in fields(AuthMethodConfig):
        if f.name in LEEWAYS:
            continue
        value = getattr(c, f.name)
        if f.name == "OIDCClientAssertion" and value is not None:
            k = value.PrivateKey
            value = {
                "KeySource": value.KeySource, "Audience": _list(value.Audience),
                "PrivateKey": None if k is None else {n: getattr(k, n) for n in _KEY_NAMES},
                "ExtraHeaders": _map(value.ExtraHeaders), "KeyAlgorithm": value.KeyAlgorithm,
                "ClientSecret": value.ClientSecret,
            }
        elif isinstance(value, tuple):
            value = list(value)
        elif f.name in ("ClaimMappings", "ListClaimMappings"):
            value = _map(value)
        out[f.name] = value
    return out


def method_to_dict(m: AuthMethod) -> dict:
    """The full method as Nomad's JSON shape (key order, duration strings, base64 Hash, RFC 3339 times).

    Not sanitized: pass ``model.sanitize(m)`` for what HTTP responses show.
    """
    return {
        "MaxTokenTTL": _dur(m.MaxTokenTTL), "Name": m.Name, "Type": m.Type, "TokenLocality": m.TokenLocality,
        "TokenNameFormat": m.TokenNameFormat, "Default": m.Default, "Config": config_to_dict(m.Config),
        "Hash": _b64(m.Hash), "CreateTime": m.CreateTime.rfc3339nano(), "ModifyTime": m.ModifyTime.rfc3339nano(),
        "CreateIndex": m.CreateIndex, "ModifyIndex": m.ModifyIndex,
    }


def stub_to_dict(s: AuthMethodStub) -> dict:
    """A list entry: Name, Type, Default, Hash (base64), CreateIndex, ModifyIndex."""
    return {"Name": s.Name, "Type": s.Type, "Default": s.Default, "Hash": _b64(s.Hash),
            "CreateIndex": s.CreateIndex, "ModifyIndex": s.ModifyIndex}


def _go_escape(text: str, html: bool) -> str:
    if html:
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def method_json(m: AuthMethod) -> str:
    """Compact JSON exactly as ``ACLAuthMethod.MarshalJSON`` writes it (pass a sanitized method)."""
    return _go_escape(json.dumps(method_to_dict(m), ensure_ascii=False, separators=(",", ":")), html=True)


#: ``method_json(sanitize(m))`` of a stored method, what a read answers; remembered per stored record
#: (the decoder builds them from tuples and frozen maps, writes replace them: never changed in place)
sanitized_json = Remembered(lambda m: method_json(sanitize(m)))


def stubs_json(stubs: list[AuthMethodStub], pretty: bool = False) -> str:
    """The list body: ``[]`` when empty; 4-space indented plus a newline when ``pretty``."""
    items = [stub_to_dict(s) for s in stubs]
    if pretty:
        return _go_escape(json.dumps(items, ensure_ascii=False, indent=4), html=False) + "\n"
    return _go_escape(json.dumps(items, ensure_ascii=False, separators=(",", ":")), html=False)


def _python_default(value):
    if isinstance(value, AuthMethod):
        return method_to_dict(value)
    if is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    if isinstance(value, GoTime):
        return value.rfc3339nano()
    if isinstance(value, datetime.datetime):
        return GoTime.from_datetime(value).rfc3339nano()
    if isinstance(value, datetime.timedelta):
        return format_duration((value.days * 86_400 + value.seconds) * 10**9 + value.microseconds * 1_000)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if hasattr(value, "keys"):
        return dict(value)
    raise TypeError(f"json: unsupported type: {type(value).__name__}")


def python_body(value: object) -> bytes:
    """Encode a Python mapping (or an :class:`AuthMethod`) as the JSON body a client would send.

    ``datetime`` becomes RFC 3339, ``timedelta`` a Go duration string, ``bytes`` base64.
    Raises DecodeError for a value JSON cannot carry.
    """
    try:
        return json.dumps(value, default=_python_default).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise DecodeError(str(exc)) from None
