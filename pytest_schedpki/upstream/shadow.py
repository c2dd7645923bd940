"""Shadow mode: the double answers; every secrets request of the test is replayed, in order, against
a real server at the test's teardown, and the answers are compared.

* :class:`ShadowRecorder` sits in front of the double's secrets listener (the test's
  ``schedpki.secrets.url``) and records each exchange: method, raw path and query, token, body, and
  the double's status, content type and body. An exchange made while a double-only knob is in force
  (a fault, a sealed double, a clock that does not follow real time or a freezegun freeze, a control
  endpoint, the secrets factories) ends the comparison there: the real server cannot be put in that
  state.
* :func:`replay` sends the exchanges to the real server, translating every identifier the double
  minted into the real server's (serials in all their spellings, issuer and key ids, token ids and
  accessors, lease ids), learned by walking the two answers side by side and, for the seeded state,
  by issuer name.
* :func:`normalise` makes answers comparable: identifiers become ``<id:N>``, times ``<time>``
  (times are tolerated, not compared; remaining ``ttl`` seconds within 1 s, :func:`same`), PEM blocks the facts that matter (block type, subject, SANs,
  validity length), random per-server values (request ids, cluster ids) disappear; the
  intentional divergences of :mod:`.shadow_allow` are set aside.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from cryptography import x509

from ..clock import is_frozen
from ..double import Double
from .client import Answer, Client
from .proxy import RecordingProxy
from .shadow_allow import allowed_for

ID_KEYS = {"serial_number", "issuer_id", "key_id", "accessor", "client_token", "lease_id", "entity_id", "default",
           "default_follows_latest_issuer", "id", "subject_key_id", "authority_key_id"}
TTL_KEYS = {"ttl"}  # remaining seconds, read a moment apart on each side: equal within 1 s
LIST_ID_KEYS = {"imported_issuers", "imported_keys", "existing_issuers", "existing_keys"}
VOLATILE_KEYS = {"request_id", "cluster_name", "cluster_id", "server_time_utc"}
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----\n?", re.S)
_TIME_KEYS = re.compile(r"(^|_)(time|expiration|expire_time|issue_time|creation_time|last_renewal|"
                        r"not_before|not_after|revocation_time|revocation_time_rfc3339|last_update|next_update)$")


@dataclass
class Exchange:
    """One request of the test and the double's answer."""

    method: str
    target: str
    path: str
    token: str
    body: bytes
    status: int
    content_type: str
    payload: bytes
    stop: str = ""  # a double-only knob in force: the comparison ends here (the reason)


class ShadowRecorder(RecordingProxy):
    """The pass-through in front of the double's secrets listener, recording :class:`Exchange` s."""

    intercept_control = False  # the control endpoints belong to the double behind

    def __init__(self, double: Double, host: str = "127.0.0.1"):
        super().__init__(Client(double.secrets_url, double.root_token), host)
        self.double = double
        self.exchanges: list[Exchange] = []
        self.knob_used = ""  # set by the handle when the test wrote into the double directly (factories)
        self._local = threading.local()

    def clear(self) -> None:
        with self._lock:
            self.exchanges = []
            self.knob_used = ""

    def _double_only(self, path: str) -> str:
        if self.knob_used:
            return self.knob_used
        if path.startswith("/_schedpki/"):
            return f"the control endpoint {path}"
        if self.double.faults.all():
            return "an injected fault"
        if self.double.secrets.sealed:
            return "a sealed double"
        if self.double.clock.mode != "follow":
            return f"the double's {self.double.clock.mode} clock"
        if is_frozen():
            return "a freezegun freeze"
        return ""

    def __call__(self, environ, start_response):
        self._local.stop = self._double_only(environ.get("PATH_INFO", ""))  # before the request changes it
        return super().__call__(environ, start_response)

    def observe(self, method, target, path, headers, body, status, answer_headers, payload) -> None:
        token = next((v for k, v in headers.items() if k.lower() in ("x-vault-token", "x-secrets-token")), "")
        if not token:
            auth = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
            token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        content_type = next((v for k, v in answer_headers if k.lower() == "content-type"), "")
        stop = getattr(self._local, "stop", "")
        with self._lock:
            self.exchanges.append(Exchange(method, target, path, token, body, status, content_type, payload, stop))


class IdMap:
    """Identifiers of the double -> the real server's, in every spelling of a serial."""

    def __init__(self) -> None:
        self.forward: dict[str, str] = {}
        self.numbers: dict[str, int] = {}  # both sides' ids -> N of <id:N>

    def _number(self, *values: str) -> int:
        known = next((self.numbers[v] for v in values if v in self.numbers), None)
        if known is None:
            known = len(set(self.numbers.values()))
        for value in values:
            self.numbers.setdefault(value, known)
        return known

    def add(self, ours: Any, theirs: Any) -> None:
        """Pair the double's identifier ``ours`` with the real server's ``theirs`` (same value: only
        numbered, e.g. a token id the seed chose)."""
        if not isinstance(ours, str) or not isinstance(theirs, str) or not ours or not theirs:
            return
        self._number(ours, theirs)
        if ours == theirs:
            return
        for a, b in _spellings(ours, theirs):
            self.forward.setdefault(a, b)

    def translate(self, text: str) -> str:
        for ours in sorted(self.forward, key=len, reverse=True):
            if ours in text:
                text = text.replace(ours, self.forward[ours])
        return text

    def learn(self, ours: Any, theirs: Any, key: str = "") -> None:
        """Walk two answers side by side; pair the values of identifier keys."""
        if isinstance(ours, dict) and isinstance(theirs, dict):
            for k in ours.keys() & theirs.keys():
                if k in ID_KEYS:
                    self.add(ours[k], theirs[k])
                elif k in LIST_ID_KEYS and isinstance(ours[k], list) and isinstance(theirs[k], list):
                    for a, b in zip(ours[k], theirs[k], strict=False):
                        self.add(a, b)
                else:
                    self.learn(ours[k], theirs[k], k)


def _spellings(ours: str, theirs: str) -> list[tuple[str, str]]:
    pairs = [(ours, theirs)]
    if re.fullmatch(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2})+", ours):
        for f in (lambda s: s.replace(":", "-"), str.upper, lambda s: s.replace(":", "-").upper(),
                  lambda s: s.replace(":", "%3A"), lambda s: s.replace(":", "%3a"),
                  lambda s: s.upper().replace(":", "%3A")):
            pairs.append((f(ours), f(theirs)))
    return pairs


def align_seeded(idmap: IdMap, ours: Client, theirs: Client) -> None:
    """Pair the identifiers of seeded state: issuers (and their keys and serials) by mount and
    issuer name."""
    mounts = {p.rstrip("/") for p, i in ours.call("GET", "/v1/sys/mounts").data().items() if (i or {}).get("type") == "pki"}
    for mount in sorted(mounts):
        a = ours.call("LIST", f"/v1/{mount}/issuers", ok=(200, 404)).data().get("key_info") or {}
        b = theirs.call("LIST", f"/v1/{mount}/issuers", ok=(200, 404)).data().get("key_info") or {}
        by_name = {info.get("issuer_name"): (issuer_id, info) for issuer_id, info in b.items() if info.get("issuer_name")}
        for issuer_id, info in a.items():
            match = by_name.get(info.get("issuer_name"))
            if match:
                idmap.add(issuer_id, match[0])
                idmap.add(info.get("key_id"), match[1].get("key_id"))
                idmap.add(info.get("serial_number"), match[1].get("serial_number"))


@dataclass
class Difference:
    """One request whose answers differ: what was sent and both answers (normalised)."""

    index: int
    method: str
    target: str
    ours: Any
    theirs: Any

    def describe(self) -> str:
        return (f"request {self.index + 1}: {self.method} {self.target}\n"
                f"  double: {json.dumps(self.ours, sort_keys=True)[:2000]}\n"
                f"  real:   {json.dumps(self.theirs, sort_keys=True)[:2000]}")


def replay(exchanges: list[Exchange], real: Client, idmap: IdMap, root_token: str) -> tuple[list[Difference], str]:
    """Replay ``exchanges`` against ``real`` in order; returns the differences and, when a
    double-only knob ended the comparison, the reason."""
    differences: list[Difference] = []
    for index, ex in enumerate(exchanges):
        if ex.stop:
            return differences, f"request {index + 1} ({ex.method} {ex.target}) was made with {ex.stop}"
        token = root_token if ex.token == root_token else idmap.translate(ex.token)
        answer = _send(real, ex.method, idmap.translate(ex.target), token, idmap.translate(ex.body.decode("utf-8", "replace")))
        ours_body, theirs_body = _parse(ex.payload, ex.content_type), _parse(answer.body, answer.headers.get("content-type", ""))
        idmap.learn(ours_body, theirs_body)
        if isinstance(ours_body, dict) and isinstance(ours_body.get("auth"), dict) and isinstance(theirs_body, dict):
            idmap.learn(ours_body["auth"], theirs_body.get("auth") or {})
        path = ex.path[len("/v1/"):] if ex.path.startswith("/v1/") else ex.path
        ours = {"status": ex.status, "body": normalise(ours_body, idmap)}
        theirs = {"status": answer.status, "body": normalise(theirs_body, idmap)}
        for entry in allowed_for(ex.method, path):
            _apply_allowance(entry, ours["body"], theirs["body"])
        if not same(ours, theirs):
            differences.append(Difference(index, ex.method, ex.target, ours, theirs))
    return differences, ""


def same(ours: Any, theirs: Any, key: str = "") -> bool:
    """Equality of normalised answers, with the tolerance of :data:`TTL_KEYS`."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k], k) for k in ours)
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(same(a, b, key) for a, b in zip(ours, theirs, strict=True))
    if key in TTL_KEYS and all(isinstance(v, int) and not isinstance(v, bool) for v in (ours, theirs)):
        return abs(ours - theirs) <= 1
    return ours == theirs


def _send(real: Client, method: str, target: str, token: str, body: str) -> Answer:
    conn = real.connection()
    try:
        headers = {"X-Vault-Token": token} if token else {}
        if body:
            headers["Content-Type"] = "application/json"
        conn.request(method, target, body.encode() if body else None, headers)
        resp = conn.getresponse()
        return Answer(resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()})
    finally:
        conn.close()


def _parse(payload: bytes, content_type: str) -> Any:
    if not payload.strip():
        return None
    if "json" in content_type:
        try:
            return json.loads(payload)
        except ValueError:
            pass
    text = payload.decode("utf-8", "replace")
    if _PEM.search(text):
        return {"<pem>": [_pem_facts(m.group(0)) for m in _PEM.finditer(text)]}
    return {"<bytes>": content_type.split(";")[0]}


def _pem_facts(block: str) -> Any:
    kind = block.split("-----")[1][len("BEGIN "):]
    if kind == "CERTIFICATE":
        try:
            cert = x509.load_pem_x509_certificate(block.encode())
        except ValueError:
            return kind
        try:
            sans = sorted(str(n.value) for n in cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
        except x509.ExtensionNotFound:
            sans = []
        length = cert.not_valid_after_utc - cert.not_valid_before_utc
        return {"subject": cert.subject.rfc4514_string(), "sans": sans,
                "validity_minutes": round(length / datetime.timedelta(minutes=1))}
    return kind


def normalise(value: Any, idmap: IdMap, key: str = "") -> Any:
    """The comparable form of an answer (see the module docstring)."""
    if isinstance(value, dict):
        return {k: normalise(v, idmap, k) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        items = [normalise(v, idmap, key) for v in value]
        if key == "keys" and all(isinstance(v, str) for v in items):
            return sorted(items)  # listed ids: each side sorts its own (random) values
        return items
    if isinstance(value, str):
        if value in idmap.numbers:
            return f"<id:{idmap.numbers[value]}>"
        if _TIME_KEYS.search(key) and (value == "" or _TIME.fullmatch(value)):
            return "<time>"
        if _PEM.search(value):
            return [_pem_facts(m.group(0)) for m in _PEM.finditer(value)]
        for ours, number in sorted(idmap.numbers.items(), key=lambda kv: -len(kv[0])):
            if len(ours) >= 8 and ours in value:
                value = value.replace(ours, f"<id:{number}>")
        return _TIME.sub("<time>", value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and _TIME_KEYS.search(key) and value:
        return "<time>"
    return value


def _apply_allowance(entry, ours: Any, theirs: Any) -> None:
    for dotted in entry.ignore:
        for side in (ours, theirs):
            _pop_path(side, dotted.split("."))
    for dotted in entry.only_double_keys:
        parts = [p for p in dotted.split(".") if p]
        a, b = _get_path(ours, parts), _get_path(theirs, parts)
        if isinstance(a, dict) and isinstance(b, dict):
            for extra in set(b) - set(a):
                del b[extra]


def _get_path(value: Any, parts: list[str]) -> Any:
    for part in parts:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _pop_path(value: Any, parts: list[str]) -> None:
    parent = _get_path(value, parts[:-1])
    if isinstance(parent, dict):
        parent.pop(parts[-1], None)
