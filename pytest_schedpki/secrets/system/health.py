"""``/v1/sys/health`` as OpenBao's HTTP layer answers it (``internal/http/sys_health.go``), ahead of
the logical pipeline: no token, namespace or wrapping checks.

* ``GET`` and ``HEAD`` only; any other method: 405 ``{"errors":[]}``;
* ``standbyok`` (read as ``parseutil.ParseBool``: mapstructure's weak bool, ``""`` is false) and the
  status codes ``uninitcode``, ``sealedcode``, ``standbycode``, ``activecode`` (Go ``strconv.Atoi``
  of the first value; a query's ``+`` is a space) are checked in that order; a bad value: 400
  ``{"errors":[]}`` (``HEAD``: no body, no ``Content-Type``); ``perfstandbyok`` is not read;
* the answer's status is ``activecode`` (default 200), or ``sealedcode`` (default 503) while sealed;
  a code Go's ``WriteHeader`` refuses (below 100 or above 999) drops the connection without an
  answer, a 1xx code gives an interim answer and then 200, 204 and 304 carry no body.
"""

from __future__ import annotations

import re
from typing import Any

from werkzeug.wrappers import Response

from ...golang.strconv import decimal_in_range
from ...golang.url import go_parse_query
from ...wire.connections import drop_connection
from ..framework.fields import ConversionError, to_bool
from ..framework.logical import JSON_HEADERS, dumps
from ..service import VERSION

_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_CODES = (("uninitcode", 501), ("sealedcode", 503), ("standbycode", 429), ("activecode", 200))
_INT64 = 2 ** 63


def health_body(service: Any) -> dict[str, Any]:
    """The ``HealthResponse``: a sealed node reports itself standby, without cluster identity."""
    if service.sealed:
        return {"initialized": True, "sealed": True, "standby": True, "replication_performance_mode": "unknown",
                "replication_dr_mode": "unknown", "server_time_utc": int(service.clock.now().timestamp()),
                "version": VERSION}
    return {"initialized": True, "sealed": False, "standby": False, "replication_performance_mode": "disabled",
            "replication_dr_mode": "disabled", "server_time_utc": int(service.clock.now().timestamp()),
            "version": VERSION, "cluster_name": service.cluster_name, "cluster_id": service.cluster_id}


def _status(service: Any, query: dict[str, list[str]]) -> int | None:
    """The answer's status code, or ``None`` for a bad parameter (400)."""
    if "standbyok" in query:
        try:
            to_bool(query["standbyok"][0])
        except ConversionError:
            return None
    codes = {}
    for name, default in _CODES:
        codes[name] = default
        if name in query:
            text = query[name][0]
            code = decimal_in_range(text, -_INT64, _INT64 - 1) if _ATOI.match(text) else None
            if code is None:
                return None
            codes[name] = code
    return codes["sealedcode"] if service.sealed else codes["activecode"]


def health_response(service: Any, environ: dict[str, Any]) -> Response:
    """The answer to ``environ``'s request on ``/v1/sys/health`` (see the module docstring)."""
    method = environ.get("REQUEST_METHOD", "GET")  # case-sensitive, as Go compares r.Method
    headers = {"Content-Type": "application/json", **JSON_HEADERS}
    if method not in ("GET", "HEAD"):
        return Response(b'{"errors":[]}\n', status=405, headers=headers)
    query = go_parse_query(environ.get("QUERY_STRING", ""))
    code = _status(service, query)
    if code is None:
        if method == "HEAD":  # no body, so no Content-Type either
            response = Response(b"", status=400, headers=JSON_HEADERS)
            del response.headers["Content-Type"]
            return response
        return Response(b'{"errors":[]}\n', status=400, headers=headers)
    if not 100 <= code <= 999:  # Go's WriteHeader panics; the server closes the connection unanswered
        drop_connection(environ)
        return Response(b"", status=500, headers={"Content-Length": "0"})
    if code < 200:
        code = 200  # the 1xx goes out as an interim answer; the body then comes with 200
    body = b"" if method == "HEAD" or code in (204, 304) else (dumps(health_body(service)) + "\n").encode()
    response = Response(body, headers=headers)
    response.status = f"{code} {_reason(code)}"
    return response


def _reason(code: int) -> str:
    """Go's status line text: ``http.StatusText``, else ``status code N``."""
    from http import HTTPStatus

    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return f"status code {code}"


__all__ = ["health_body", "health_response"]
