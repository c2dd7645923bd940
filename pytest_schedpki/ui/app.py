"""The page's WSGI application, mounted by the control endpoints at ``/_schedpki/ui/`` on both
listeners.

| path under ``/_schedpki/ui/`` | answer |
|---|---|
| (nothing) | the page (HTML, rendered by Jinja2 with autoescaping) |
| ``static/ui.js``, ``static/ui.css`` | the page's script and style, shipped with the package |
| ``api/secrets`` | :func:`~.secrets_views.secrets_view` |
| ``api/certs?mount=&sort=&cursor=&limit=&serial=&role=&status=&q=`` | :func:`~.cert_views.certificate_page` |
| ``api/certs/pem?mount=&serial=`` | ``{"serial", "pem"}`` of one certificate |
| ``api/kv/value?mount=&path=&version=`` | ``{"mount", "path", "version", "value"}``: one KV value, asked for |
| ``api/scheduler`` | :func:`~.scheduler_views.scheduler_view` |
| ``api/double?service=&path=&status=`` | :func:`~.double_views.double_view` (journal filters) |

JSON answers carry an ``ETag`` (a hash of the body); a request whose ``If-None-Match`` names it gets
``304`` with no body, so the page polls each second for the price of building the answer. Errors are
``{"error": "..."}`` with 400 (a bad parameter), 403 (:mod:`.guard`), 404 (unknown path, mount or
serial) or 405 (a method other than GET/HEAD: the page's actions go to the control endpoints).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from typing import Any

from werkzeug.wrappers import Request, Response

from . import PREFIX, cert_views, double_views, scheduler_views, secrets_views
from . import page_url as page_url  # noqa: PLC0414 - where callers found it
from .guard import SECURITY_HEADERS, ui_refusal

_STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
_environment = None


def _templates():
    """The Jinja2 environment (made once; autoescaping on for every template)."""
    global _environment
    if _environment is None:
        import jinja2  # lazily: only the page needs it

        _environment = jinja2.Environment(loader=jinja2.PackageLoader("pytest_schedpki.ui", "templates"),
                                          autoescape=True, undefined=jinja2.StrictUndefined)
    return _environment


def _json(payload: Any, status: int = 200, request: Request | None = None, cache: bool = True) -> Response:
    body = (json.dumps(payload, default=str, sort_keys=True) + "\n").encode()
    tag = hashlib.sha256(body).hexdigest()[:32]
    headers = [*SECURITY_HEADERS, ("Cache-Control", "no-cache" if cache else "no-store")]
    if status == 200 and cache:
        headers.append(("ETag", f'"{tag}"'))
        if request is not None and tag in request.headers.get("If-None-Match", ""):
            return Response(b"", status=304, headers=headers)
    return Response(body, status=status, mimetype="application/json", headers=headers)


def _pki_backend(target, mount: str):
    found = target.secrets.mounts.get(mount.strip("/") + "/")
    if found is None or found.type != "pki":
        raise LookupError(f"no PKI mount {mount!r}")
    return found.backend


def _page(target) -> Response:
    html = _templates().get_template("page.html").render(
        prefix=PREFIX, control_token=bool(getattr(target, "control_token", None)))
    return Response(html, mimetype="text/html", headers=[*SECURITY_HEADERS, ("Cache-Control", "no-store")])


def _certs(target, args) -> dict[str, Any]:
    backend = _pki_backend(target, args.get("mount", ""))
    limit = int(args.get("limit") or cert_views.PAGE_SIZE)
    with target.secrets.lock:
        return {"mount": args.get("mount", "").strip("/"), **cert_views.certificate_page(
            backend.state.certs, target.clock.now(), sort=args.get("sort", "newest"), cursor=args.get("cursor", ""),
            limit=limit, serial=args.get("serial", ""), role=args.get("role", ""), status=args.get("status", ""),
            q=args.get("q", ""))}


def _pem(target, args) -> dict[str, Any]:
    backend = _pki_backend(target, args.get("mount", ""))
    serial = args.get("serial", "").strip().lower().replace("-", ":")
    with target.secrets.lock:
        record = backend.state.certs.get(serial)
        if record is None:
            raise LookupError(f"no certificate {serial!r} on mount {args.get('mount')!r}")
        return {"serial": serial, "pem": record.pem}


def _api(target, action: str, args) -> tuple[Any, bool]:
    """(the answer, whether it may be cached by ETag)."""
    if action == "secrets":
        return secrets_views.secrets_view(target.secrets), True
    if action == "certs":
        return _certs(target, args), True
    if action == "certs/pem":
        return _pem(target, args), False
    if action == "kv/value":
        mount, path = args.get("mount", ""), args.get("path", "")
        version = int(args.get("version") or 0)
        value = secrets_views.kv_value(target.secrets, mount, path, version)
        return {"mount": mount, "path": path, "version": version, "value": value}, False
    if action == "scheduler":
        return scheduler_views.scheduler_view(target.scheduler), True
    if action == "double":
        return double_views.double_view(target, args.get("service", ""), args.get("path", ""),
                                        args.get("status", "")), True
    raise FileNotFoundError(f"unknown page endpoint {PREFIX}/api/{action}")


def make_ui_app(target):
    """The WSGI app for ``/_schedpki/ui/...`` (either listener), reading ``target`` (a :class:`~pytest_schedpki.double.Double`: its ``secrets``,
    ``scheduler``, ``journal``, ``faults``, ``clock``, ``control_token``, ``seeds_loaded``)."""

    def handle(request: Request) -> Response:
        rest = request.path[len(PREFIX):]
        if request.method not in ("GET", "HEAD"):
            return _json({"error": f"{request.method} not allowed here: the page's actions are the control "
                                   "endpoints (GET /_schedpki/ lists them)"}, 405)
        if rest == "":
            return Response(status=308, headers=[("Location", PREFIX + "/")])
        if rest == "/":
            return _page(target)
        if rest.startswith("/static/"):
            name = rest[len("/static/"):]
            if name not in _STATIC:
                return _json({"error": f"unknown file {name!r}"}, 404)
            data = importlib.resources.files("pytest_schedpki.ui").joinpath("static", name).read_bytes()
            return Response(data, content_type=_STATIC[name], headers=[*SECURITY_HEADERS, ("Cache-Control", "no-cache")])
        if not rest.startswith("/api/"):
            return _json({"error": f"unknown page path {request.path}"}, 404)
        try:
            payload, cache = _api(target, rest[len("/api/"):].strip("/"), request.args)
        except (LookupError, FileNotFoundError) as exc:
            return _json({"error": str(exc.args[0]) if exc.args else str(exc)}, 404)
        except ValueError as exc:
            return _json({"error": str(exc)}, 400)
        return _json(payload, request=request, cache=cache)

    def app(environ: dict, start_response):
        path = environ.get("PATH_INFO", "")
        needs_token = path.startswith(PREFIX + "/api/")
        refused = ui_refusal(environ, environ.get("SERVER_NAME", ""), getattr(target, "control_token", None),
                             needs_token)
        if refused is not None:
            return _json({"error": refused}, 403)(environ, start_response)
        return handle(Request(environ))(environ, start_response)

    return app
