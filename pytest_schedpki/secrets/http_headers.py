"""Headers at the secrets service's HTTP edge: the request's headers as the handlers see them, and the
response headers a mount lets through (OpenBao ``routing/router.go`` ``filteredHeaders``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping


def allowed_headers(mount, headers: dict[str, str]) -> dict[str, str] | None:
    """The response headers a handler set that the mount lets through: those named (any case) by its
    ``allowed_response_headers`` tune, none without it (OpenBao ``routing/router.go``
    ``filteredHeaders``; ACME's Replay-Nonce, Link and Location need the tune)."""
    allowed = {name.strip().lower() for name in (mount.tune_lists.get("allowed_response_headers") or [])
               if isinstance(name, str)} if mount is not None else set()
    kept = {name: value for name, value in headers.items() if name.lower() in allowed}
    return kept or None


def request_headers(environ: dict) -> dict[str, str]:
    """``dict(request.headers.items())`` (werkzeug's ``EnvironHeaders`` order and names) in one pass."""
    out = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            if key != "HTTP_CONTENT_TYPE" and key != "HTTP_CONTENT_LENGTH":
                out[key[5:].replace("_", "-").title()] = value
        elif (key == "CONTENT_TYPE" or key == "CONTENT_LENGTH") and value:
            out[key.replace("_", "-").title()] = value
    return out


class RequestHeaders(Mapping):
    """The request's headers as :func:`request_headers` gives them, built from the WSGI environ on
    first use: most handlers never read them (``LogicalRequest.headers``)."""

    __slots__ = ("_environ", "_headers")

    def __init__(self, environ: dict) -> None:
        self._environ = environ
        self._headers: dict[str, str] | None = None

    def _built(self) -> dict[str, str]:
        if self._headers is None:
            self._headers = request_headers(self._environ)
        return self._headers

    def __getitem__(self, name: str) -> str:
        return self._built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())
