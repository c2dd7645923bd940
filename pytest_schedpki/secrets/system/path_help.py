"""Path help: any request with a non-empty ``help`` query parameter (``GET pki/issue/web?help=1``,
what ``bao path-help`` sends) answers the matched route's help instead of running it.

The answer has OpenBao's shape, without an envelope: ``help`` (text starting with ``Request:`` and
``Matching Route:`` lines, then the path's purpose and its parameters with their types), ``openapi``
(an OpenAPI 3.0.2 document with the one path, its path parameters and operations) and ``see_also``
(``null``). The texts are the double's own (OpenBao's descriptions are not copied). A path no route
matches is 404 ``unsupported path``; the token and policy checks come first, as for the path itself.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from ..framework.logical import LogicalResponse, unsupported_path
from ..framework.router import Path, Router
from ..service import VERSION

_TYPE_NAMES = {"string": "string", "lowercase_string": "lowercase string", "name_string": "name string",
               "bool": "bool", "int": "int", "duration_second": "duration (sec)",
               "signed_duration_second": "signed duration (sec)", "comma_string_slice": "comma-separated string slice",
               "string_slice": "string slice", "comma_int_slice": "comma-separated int slice", "map": "map",
               "any": "any"}
_OPENAPI_TYPES = {"bool": "boolean", "int": "integer", "map": "object", "comma_string_slice": "array",
                  "string_slice": "array", "comma_int_slice": "array", "duration_second": "string",
                  "signed_duration_second": "string"}
_METHODS = {"read": "get", "list": "get", "update": "post", "delete": "delete", "patch": "patch"}


def help_requested(query_string: bytes) -> bool:
    """Whether the raw query string carries ``help`` with a non-empty value (``help=0`` included)."""
    return b"help=" in query_string and bool(re.search(rb"(?:^|&)help=[^&]", query_string))


def _purpose(route: Path) -> str:
    for handler in route.operations.values():
        doc = inspect.getdoc(handler) or inspect.getdoc(inspect.getmodule(handler))
        if doc:
            return doc.split("\n\n", 1)[0].replace("\n", " ")
    return "<no description>"


def _openapi_path(route: Path) -> str:
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", route.pattern)
    return "/" + re.sub(r"[?$^\\]|\(\?:[^)]*\)", "", text).rstrip("/")


def help_response(router: Router, inner: str) -> LogicalResponse:
    """The help answer for ``inner`` (the path relative to its mount or to ``sys/``/``auth/token/``)."""
    found = router.match(inner)
    if found is None:
        raise unsupported_path()
    route, captures = found
    purpose = _purpose(route)
    params = sorted(name for name in route.fields if name not in captures and not _is_capture(route, name))
    lines = [f"Request:        {inner}", f"Matching Route: ^{route.pattern}$", "", purpose, ""]
    if params:
        lines += ["## PARAMETERS", ""]
        for name in params:
            lines += [f"    {name} ({_TYPE_NAMES.get(route.fields[name].type, route.fields[name].type)})", ""]
    path_doc: dict[str, Any] = {"description": purpose}
    captured = [n for n in route.regex.groupindex]
    if captured:
        path_doc["parameters"] = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                                  for n in captured]
    if route.unauthenticated:
        path_doc["x-vault-unauthenticated"] = True
    for operation in route.operations:
        method = _METHODS[operation]
        entry = path_doc.setdefault(method, {"responses": {"200": {"description": "OK"}}})
        if operation == "list":
            entry["parameters"] = [{"name": "list", "in": "query", "required": True, "schema": {"type": "string"}}]
        if method in ("post", "patch") and params:
            entry["requestBody"] = {"content": {"application/json": {"schema": {"type": "object", "properties": {
                name: {"type": _OPENAPI_TYPES.get(route.fields[name].type, "string")} for name in params}}}}}
    openapi = {"openapi": "3.0.2",
               "info": {"title": "OpenBao API", "description": "The pytest-schedpki test double of OpenBao.",
                        "version": VERSION, "license": {"name": "Mozilla Public License 2.0",
                                                        "url": "https://www.mozilla.org/en-US/MPL/2.0"}},
               "paths": {_openapi_path(route): path_doc}}
    return LogicalResponse(data={"help": "\n".join(lines).rstrip("\n"), "openapi": openapi, "see_also": None},
                           bare=True)


def _is_capture(route: Path, name: str) -> bool:
    return name in route.regex.groupindex
