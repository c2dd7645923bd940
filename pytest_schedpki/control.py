"""Control endpoints for non-Python suites, under the reserved prefix ``/_schedpki/`` on both
listeners (never journaled or faulted). Requests a web page could send on the tester's behalf are
refused, and a configured control token is required (see :mod:`.wire.control_guard`).

| method and path | body | effect |
|---|---|---|
| ``GET /_schedpki/`` | - | this list as JSON: ``{"endpoints": [{"methods", "path", "body", "effect"}, ...]}`` |
| ``POST /_schedpki/reset`` | - | back to the baseline (the state right after start and seeding); clears faults and the journal |
| ``POST /_schedpki/seed`` | YAML or JSON seed | applies it on top of the current state |
| ``POST /_schedpki/baseline`` | - | makes the current state the baseline |
| ``GET/POST /_schedpki/lag`` | ``{"seconds": 5}`` / ``{"paused": true}`` / ``{"after_reads": 3}`` | scheduler replication lag |
| ``POST /_schedpki/sync`` | - | replicate every pending scheduler write now |
| ``GET/POST /_schedpki/clock`` | ``{"mode": "manual", "now": "2030-01-01T00:00:00Z"}`` / ``{"advance": 3600}`` | the double's clock |
| ``GET/POST/DELETE /_schedpki/faults`` | a fault (see faults.py fields) | list / add / clear faults |
| ``GET/DELETE /_schedpki/journal`` | - | the request journal as JSON / clear it |
| ``POST /_schedpki/seal``, ``/_schedpki/unseal`` | - | seal or unseal the secrets service |
| ``POST /_schedpki/leader`` | ``{"leader": false}`` | scheduler without (or with) a leader |
| ``GET/POST /_schedpki/oidc/users`` | ``{"name": "alice", "claims": {"groups": ["eng"]}, "default": true}`` | the built-in identity provider's users (name -> claims) and default user |
| ``GET/POST/DELETE /_schedpki/acme`` | ``{"challenge_address": "127.0.0.1:5002", "always_valid": false, "validation_delay": 0, "bad_nonce_share": 0.1, "seed": 1}`` | the ACME knobs of the PKI engine (all off by default; DELETE turns them off) |
| ``GET /_schedpki/keypool`` | - | the RSA key pool: ``{"deterministic": false, "pools": [{"key_type": "rsa", "bits": 2048, "size": 4, "ready": 4}]}`` |
| ``GET /_schedpki/ui/`` | - | the live state page (its JSON under ``/_schedpki/ui/api/``, see :mod:`.ui.app`) |

Errors are JSON ``{"error": "..."}`` with 400 (bad body: not JSON or YAML, nested too deeply, cut
short; a seed that fails applies nothing), 403 (refused by :mod:`.wire.control_guard`), 404 (unknown
control path) or 413 (a body over :data:`MAX_BODY_SIZE`).
"""

from __future__ import annotations

import datetime
import json
from typing import TYPE_CHECKING, Any, Protocol

from werkzeug.exceptions import ClientDisconnected, HTTPException
from werkzeug.wrappers import Request, Response

from .errors import SeedError
from .faults import Fault
from .wire.control_guard import refusal

if TYPE_CHECKING:  # pragma: no cover
    from .clock import SwitchableClock
    from .faults import FaultSet
    from .journal import Journal
    from .scheduler.state import SchedulerState
    from .secrets.service import SecretsService


class ControlTarget(Protocol):
    """What the control endpoints act on (a :class:`~pytest_schedpki.double.Double`)."""

    scheduler: SchedulerState
    secrets: SecretsService
    clock: SwitchableClock
    faults: FaultSet
    journal: Journal

    def reset(self) -> None: ...

    def save_baseline(self) -> None: ...

    def seed(self, seed: Any) -> None: ...

MAX_BODY_SIZE = 32 * 1024 * 1024  # bytes of a control request body (a seed); larger: 413
_FAULT_FIELDS = {"service", "path", "method", "status", "body", "content_type", "latency", "drop", "hang",
                 "times", "probability", "seed"}


# (methods, path, body, effect): what GET /_schedpki/ lists (the table above)
ENDPOINTS = (
    ("GET", "/_schedpki/", "-", "this list"),
    ("POST", "/_schedpki/reset", "-", "back to the baseline (the state after start and seeding); clears faults "
                                      "and the journal"),
    ("POST, PUT", "/_schedpki/seed", "YAML or JSON seed", "applies it on top of the current state (all or nothing)"),
    ("POST", "/_schedpki/baseline", "-", "makes the current state the baseline"),
    ("GET, POST", "/_schedpki/lag", '{"seconds": 5} | {"paused": true} | {"after_reads": 3}',
     "scheduler replication lag"),
    ("POST", "/_schedpki/sync", "-", "replicate every pending scheduler write now"),
    ("GET, POST", "/_schedpki/clock", '{"mode": "manual", "now": "2030-01-01T00:00:00Z"} | {"advance": 3600}',
     "the double's clock"),
    ("GET, POST, DELETE", "/_schedpki/faults", "a fault: " + ", ".join(sorted(_FAULT_FIELDS)),
     "list / add / clear injected faults"),
    ("POST", "/_schedpki/faults/release", "-", "release requests held by hang faults"),
    ("GET, DELETE", "/_schedpki/journal", "-", "the request journal as JSON / clear it"),
    ("POST", "/_schedpki/seal", "-", "seal the secrets service"),
    ("POST", "/_schedpki/unseal", "-", "unseal the secrets service"),
    ("POST", "/_schedpki/leader", '{"leader": false}', "scheduler without (or with) a leader"),
    ("GET, POST", "/_schedpki/oidc/users", '{"name": "alice", "claims": {"groups": ["eng"]}, "default": true}',
     "the built-in identity provider's users and default user"),
    ("GET, POST, DELETE", "/_schedpki/acme",
     '{"challenge_address": "127.0.0.1:5002", "always_valid": false, "validation_delay": 0, "bad_nonce_share": 0.1, '
     '"seed": 1}', "the PKI engine's ACME knobs (all off by default; DELETE turns them off)"),
    ("GET", "/_schedpki/keypool", "-", "the RSA key pool's state"),
    ("GET", "/_schedpki/ui/", "-", "the live state page of both services and the double (JSON under "
                                   "/_schedpki/ui/api/)"),
)


def _json(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload, default=str) + "\n", status=status, mimetype="application/json")


def _body(request: Request) -> Any:
    """The parsed JSON or YAML body (``{}`` when empty); raises ValueError naming the problem."""
    request.max_content_length = MAX_BODY_SIZE
    try:
        raw = request.get_data()
    except ClientDisconnected:
        raise ValueError("request body cut short (unexpected EOF)") from None
    if not raw.strip():
        return {}
    import yaml  # lazily: it costs ~8 ms of start-up

    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ValueError(f"body is neither JSON nor YAML: {exc}") from None
    except RecursionError:
        raise ValueError("body is nested too deeply to parse") from None


MAX_SECONDS = 10 ** 10  # ~317 years: far beyond any test, well inside what datetime can add


def _seconds(value: Any, name: str) -> float:
    """``value`` as a number of seconds, or ValueError (400): not a number, not finite (``1e999``),
    or beyond +-:data:`MAX_SECONDS` (where the clock's datetime arithmetic would overflow)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds") from None
    if not -MAX_SECONDS <= number <= MAX_SECONDS:  # also false for inf and nan
        raise ValueError(f"{name} must be a finite number of seconds between -{MAX_SECONDS} and {MAX_SECONDS}")
    return number


def _parse_time(text: str) -> datetime.datetime:
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)


def make_control_app(double: ControlTarget):
    """The WSGI app for ``/_schedpki/...`` acting on ``double``."""

    def handle(request: Request) -> Response:
        action = request.path[len("/_schedpki/"):].strip("/")
        method = request.method.upper()
        body = _body(request) if method in ("POST", "PUT") else {}
        if action == "" and method == "GET":
            return _json({"endpoints": [{"methods": m.split(", "), "path": p, "body": b, "effect": e}
                                        for m, p, b, e in ENDPOINTS]})
        if action == "reset" and method == "POST":
            double.reset()
            return _json({"reset": True})
        if action == "baseline" and method == "POST":
            double.save_baseline()
            return _json({"baseline": True})
        if action == "seed" and method in ("POST", "PUT"):
            _seed_all_or_nothing(double, body or {})
            return _json({"seeded": True})
        if action == "sync" and method == "POST":
            double.scheduler.sync()
            return _json({"synced": True})
        if action == "lag":
            if method == "POST":
                if body.get("paused"):
                    double.scheduler.pause_replication()
                elif "after_reads" in body:
                    double.scheduler.set_lag_reads(int(body["after_reads"]))
                else:
                    double.scheduler.set_lag(_seconds(body.get("seconds") or 0, "seconds"))
            return _json(double.scheduler.lag_settings())
        if action == "clock":
            if method == "POST":
                if "mode" in body:
                    start = _parse_time(body["now"]) if body.get("now") else None
                    double.clock.use(body["mode"], start)
                elif "now" in body:
                    _manual(double).set(_parse_time(body["now"]))
                if "advance" in body:
                    _manual(double).advance(_seconds(body["advance"], "advance"))
            return _json({"mode": double.clock.mode, "now": double.clock.now().isoformat().replace("+00:00", "Z")})
        if action == "faults":
            if method == "POST":
                unknown = set(body) - _FAULT_FIELDS
                if unknown:
                    raise ValueError(f"unknown fault field(s): {', '.join(sorted(unknown))}")
                fault = double.faults.add(Fault(**body))
                return _json({"added": _describe(fault)})
            if method == "DELETE":
                double.faults.clear()
            return _json([_describe(f) for f in double.faults.all()])
        if action == "faults/release" and method == "POST":
            for fault in double.faults.all():
                fault.release()
            return _json({"released": True})
        if action == "journal":
            if method == "DELETE":
                double.journal.clear()
            return _json([{**e.__dict__, "time": e.time.isoformat()} for e in double.journal.entries()])
        if action in ("seal", "unseal") and method == "POST":
            double.secrets.sealed = action == "seal"
            return _json({"sealed": double.secrets.sealed})
        if action == "acme":
            knobs = double.secrets.acme_knobs
            if method == "POST":
                if not isinstance(body, dict):
                    raise ValueError("expected a JSON object of ACME knobs")
                knobs.update(**body)
            elif method == "DELETE":
                knobs.clear()
            return _json(knobs.describe())
        if action == "keypool" and method == "GET":
            from .secrets.engines.pki.codecs import keypool  # lazy for start-up time: loads cryptography

            return _json(keypool.current().status())
        if action == "leader" and method == "POST":
            double.scheduler.set_leader(bool(body.get("leader", True)))
            return _json({"leader": bool(body.get("leader", True))})
        if action == "oidc/users":
            idp = double.scheduler.idp
            if method == "POST":
                if not isinstance(body.get("name"), str) or not isinstance(body.get("claims"), dict):
                    raise ValueError('expected {"name": "<user>", "claims": {...}}')
                idp.set_user(body["name"], body["claims"], bool(body.get("default", True)))
            return _json({"default": idp.default_user, "users": idp.users})
        return _json({"error": f"unknown control endpoint {method} /_schedpki/{action} (GET /_schedpki/ lists them)"},
                     404)

    ui = None

    def app(environ: dict, start_response):
        nonlocal ui
        if environ.get("PATH_INFO", "").startswith("/_schedpki/ui"):
            if ui is None:
                from .ui.app import make_ui_app  # lazily: the page loads Jinja2 and the views

                ui = make_ui_app(double)
            return ui(environ, start_response)
        refused = refusal(environ, environ.get("SERVER_NAME", ""), getattr(double, "control_token", None))
        if refused is not None:
            return _json({"error": refused}, 403)(environ, start_response)
        request = Request(environ)
        try:
            response = handle(request)
        except (SeedError, ValueError, TypeError, KeyError, AttributeError) as exc:
            response = _json({"error": str(exc)}, 400)
        except RecursionError:
            response = _json({"error": "body is nested too deeply to apply"}, 400)
        except HTTPException as exc:  # 413 for a body over MAX_BODY_SIZE
            text = f"request body too large (over {MAX_BODY_SIZE} bytes)" if exc.code == 413 else exc.name
            response = _json({"error": text}, exc.code or 400)
        return response(environ, start_response)

    return app


def _seed_all_or_nothing(double: ControlTarget, body: Any) -> None:
    """Apply a seed; when any part of it fails, both backends return to their state before it."""
    before = (double.scheduler.snapshot(), double.secrets.snapshot())
    try:
        double.seed(body)
    except BaseException:
        double.scheduler.restore(before[0])
        double.secrets.restore(before[1])
        raise


def _manual(double: ControlTarget):
    if double.clock.mode != "manual":
        double.clock.use("manual")
    return double.clock.inner


def _describe(fault: Fault) -> dict[str, Any]:
    return {k: getattr(fault, k) for k in sorted(_FAULT_FIELDS)} | {"hits": fault.hits}
