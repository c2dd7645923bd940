"""Who may read the page and its JSON: the control endpoints' rules
(:func:`~pytest_schedpki.wire.control_guard.refusal`: the control token when one is set, a local
``Host``, no cross-site request) applied to reads too, since the page's answers describe the double's
state and one of them (a KV value) is a secret. The page's HTML and static files hold no state: they
need no control token (the page's script sends it, read from the URL's ``#token=`` fragment, which no
browser sends to a server), but they too are refused to another site."""

from __future__ import annotations

from ..wire.control_guard import refusal

# what every answer of the page carries: no framing by another page, no inline script, no guessing types
SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                                "form-action 'none'"),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
]


def ui_refusal(environ: dict, listen_host: str, token: str | None, needs_token: bool = True) -> str | None:
    """Why this request for the page is refused (the ``error`` text), or ``None``: ``refusal`` with the
    control token (``needs_token``: the JSON API) or without (the HTML and static files), then its
    cross-site rule for reads as well as writes."""
    token = token if needs_token else None
    refused = refusal(environ, listen_host, token)
    if refused is not None or not _cross_site_marked(environ):
        return refused
    return refusal({**environ, "REQUEST_METHOD": "POST"}, listen_host, token)


def _cross_site_marked(environ: dict) -> bool:
    return bool(environ.get("HTTP_SEC_FETCH_SITE") or environ.get("HTTP_ORIGIN"))
