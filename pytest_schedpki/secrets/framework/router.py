"""Paths of a secrets engine and how a request finds its handler (OpenBao ``sdk/framework``).

An engine declares :class:`Path` objects: an anchored regex with named captures, a field schema,
and handlers per operation (``read``, ``list``, ``update`` for POST/PUT, ``delete``, ``patch``).
:class:`Router` answers like the framework: no matching path -> 404 ``unsupported path``; a path
without the operation -> 405 ``unsupported operation``; sent fields the schema does not know ->
the ``Endpoint ignored these unrecognized parameters: [a b]`` warning; body fields that a path
capture overrides -> the ``Endpoint replaced the value of these parameters ...`` warning.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .fields import Field, FieldData
from .logical import LogicalResponse, unsupported_operation, unsupported_path

if TYPE_CHECKING:  # pragma: no cover
    from ..auth.token.store import Token
    from ..service import Mount, SecretsService

OPERATIONS = ("read", "list", "update", "delete", "patch")


@dataclass
class LogicalRequest:
    """A request as a handler sees it.

    ``operation`` is one of :data:`OPERATIONS`; ``path`` is relative to the mount (``issue/web``);
    ``data`` holds the converted fields (path captures included); ``token`` is the caller's token
    record (``None`` on unauthenticated paths); ``mount`` and ``service`` give access to state;
    ``http_body`` is the raw body of a ``POST``/``PUT`` sent as ``application/ocsp-request`` (OpenBao
    hands such a request to the handler undecoded, with no data), else ``None``.
    """

    operation: str
    path: str
    data: FieldData
    mount: Mount | None
    service: SecretsService
    token: Token | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # read-only: a dict, or the HTTP layer's lazy view
    remote_addr: str = ""
    http_body: bytes | None = None


Handler = Callable[[LogicalRequest], LogicalResponse]


_META = set(".^$*+?{}[]\\|()")
_QUANTIFIERS = set("*+?{")


@functools.cache  # the patterns are a fixed set; routers are rebuilt on every reset
def literal_prefix(pattern: str) -> str:
    """The literal text every match of the anchored ``pattern`` starts with (``"issue/"`` for
    ``issue/(?P<role>...)``; ``""`` when the pattern has a top-level ``|``). Used to skip patterns
    cheaply before running their regex."""
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                i += 1  # a leading ] is a literal member of the class
            continue
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return ""
        i += 1
    prefix = []
    for char in pattern:
        if char in _META:
            if char in _QUANTIFIERS and prefix:
                prefix.pop()  # the quantified character is optional
            break
        prefix.append(char)
    return "".join(prefix)


@dataclass
class Path:
    """One route: ``pattern`` (anchored regex, named groups become fields), ``fields`` (schema),
    ``operations`` (``{operation: handler}``), ``unauthenticated`` (no token needed, as the engine's
    ``PathsSpecial.Unauthenticated``), ``sudo`` (the root-protected paths that need ``sudo``), ``any_token``
    (a valid token is needed but no policy: the handler itself checks the token's access, as
    ``sys/internal/ui/mounts/:path`` does), ``existence`` (OpenBao's existence check:
    ``existence(mount_backend, captures) -> bool``; an update of a missing item needs ``create``).

    ``regex`` (the compiled, anchored pattern) is compiled on first use and may be replaced by an
    object with a compatible ``match`` (see secrets/engines/pki/enterprise/gate.py); ``prefix`` is :func:`literal_prefix`."""

    pattern: str
    fields: dict[str, Field]
    operations: dict[str, Handler]
    unauthenticated: bool = False
    sudo: bool = False
    takes_arbitrary_input: bool = False
    any_token: bool = False
    existence: Callable[[Any, dict[str, str]], bool] | None = None
    field_prefix: bool = True  # False: field errors without "Field validation failed: " (handlers reading fields themselves)

    def __post_init__(self) -> None:
        self.prefix = literal_prefix(self.pattern)
        self._regex: Any = None

    @property
    def regex(self) -> re.Pattern:
        if self._regex is None:
            self._regex = re.compile("^" + self.pattern + "$")
        return self._regex

    @regex.setter
    def regex(self, value: Any) -> None:
        self._regex = value


def _special_path_pattern(pattern: str) -> str:
    """A ``PathsSpecial`` entry as a regex pattern (``re.S``): a trailing ``*`` is any suffix, ``+`` one
    segment."""
    prefix = pattern.endswith("*")
    parts = [("[^/]+" if seg == "+" else re.escape(seg)) for seg in pattern.rstrip("*").split("/")]
    return "^" + "/".join(parts) + (".*" if prefix else "") + "$"


_UNMATCHED: Any = object()  # "not matched yet": the methods below call :meth:`Router.match` themselves


class Router:
    """Ordered list of paths; the first full match wins (declare specific paths first).

    Matching only tries the paths whose literal prefix fits the request path's first segment (the
    candidate lists are kept per segment; they are rebuilt if ``paths`` changes length)."""

    _MAX_SEGMENTS = 1024  # candidate lists kept (request paths are client input)

    def __init__(self, paths: list[Path], unauthenticated: Iterable[str] = ()):
        self.paths = paths
        patterns = [_special_path_pattern(p) for p in unauthenticated]
        # one alternation: a request checks every pattern in one regex call, not one call each; compiled
        # on the first request (~5 ms for the PKI engine's 72), not when the mount is made
        self._unauthenticated_source = "|".join(f"(?:{p})" for p in patterns)
        self._unauthenticated_any: re.Pattern | None = None
        self._candidates: dict[str, list[Path]] = {}
        self._known = len(paths)

    def _candidates_for(self, segment: str) -> list[Path]:
        if self._known != len(self.paths) or len(self._candidates) >= self._MAX_SEGMENTS:
            self._candidates = {}
            self._known = len(self.paths)
        found = self._candidates.get(segment)
        if found is None:
            found = self._candidates[segment] = [
                p for p in self.paths
                if (p.prefix.partition("/")[0] == segment if "/" in p.prefix else segment.startswith(p.prefix))]
        return found

    def match(self, path: str) -> tuple[Path, dict[str, str]] | None:
        """The first path matching ``path`` and its captures, or ``None``."""
        for candidate in self._candidates_for(path.partition("/")[0]):
            if not path.startswith(candidate.prefix):
                continue
            m = (candidate._regex or candidate.regex).match(path)  # compiled: no property call
            if m:
                return candidate, {k: v for k, v in m.groupdict().items() if v is not None}
        return None

    def is_unauthenticated(self, path: str, found: Any = _UNMATCHED) -> bool:
        """Whether ``path`` (mount-relative) is served without a token: its path says so, or it matches
        one of the engine's ``PathsSpecial.Unauthenticated`` patterns (``cert/*`` covers paths no
        handler serves, like ``cert/zz``). Upstream routes such paths as login requests, so their
        errors are not wrapped in a multierror (see ``http.dispatch``)."""
        if self._unauthenticated_source:
            if self._unauthenticated_any is None:
                self._unauthenticated_any = re.compile(self._unauthenticated_source, re.S)
            if self._unauthenticated_any.match(path):
                return True
        found = self.match(path) if found is _UNMATCHED else found
        return bool(found and found[0].unauthenticated)

    def capability_for(self, operation: str, path: str, backend: Any, found: Any = _UNMATCHED) -> str:
        """The ACL capability ``operation`` needs on ``path``: ``create`` for an update of an item the
        path's existence check reports missing, else the operation's own name."""
        if operation == "update":
            found = self.match(path) if found is _UNMATCHED else found
            if found and found[0].existence is not None and not found[0].existence(backend, found[1]):
                return "create"
        return operation

    def is_any_token(self, path: str, found: Any = _UNMATCHED) -> bool:
        """Whether ``path`` needs only a valid token (no ACL check before its handler)."""
        found = self.match(path) if found is _UNMATCHED else found
        return bool(found and found[0].any_token)

    def is_sudo(self, path: str, found: Any = _UNMATCHED) -> bool:
        """Whether ``path`` needs the ``sudo`` capability."""
        found = self.match(path) if found is _UNMATCHED else found
        return bool(found and found[0].sudo)

    def handle(self, operation: str, path: str, raw: dict[str, Any], make_request: Callable[..., LogicalRequest],
               found: Any = _UNMATCHED) -> LogicalResponse:
        """Route and run. Raises LogicalError (404/405/400 and whatever the handler raises).
        ``found``: what :meth:`match` returned for ``path`` in this request, when the caller has it
        (the ``is_*`` checks take it too: one match per request instead of one per question)."""
        found = self.match(path) if found is _UNMATCHED else found
        if found is None:
            raise unsupported_path()
        route, captures = found
        handler = route.operations.get(operation)
        if handler is None:
            raise unsupported_operation()
        if raw:
            ignored = sorted(k for k in raw if k not in route.fields) if not route.takes_arbitrary_input else []
            replaced = sorted(k for k in captures if raw.get(k) is not None)
        else:  # nothing sent (most reads): nothing ignored or replaced
            ignored = replaced = []
        merged = dict(raw)
        if operation == "patch":  # a merge-patch null removes the key: the stored value stays
            merged = {k: v for k, v in merged.items() if v is not None}
        merged.update(captures)
        data = FieldData(merged, route.fields)
        data.validate("Field validation failed: " if route.field_prefix else "")
        response = handler(make_request(operation=operation, path=path, data=data, raw=raw))
        if response is not None and response.status != 204 and response.raw is None:
            if ignored:
                response.add_warning(f"Endpoint ignored these unrecognized parameters: [{' '.join(ignored)}]")
            if replaced:
                response.add_warning("Endpoint replaced the value of these parameters with the values captured "
                                     f"from the endpoint's path: [{' '.join(replaced)}]")
        return response
