"""The double's live state page, ``/_schedpki/ui/`` on both listeners (``schedpki serve`` prints its
URL; ``--schedpki-keep-on-failure`` holds a failed test's state for it).

* ``scheduler_access``: the few reads of the scheduler's state the page makes (one module, so the ACL
  store's move changes one file);
* ``secrets_views``, ``cert_views``, ``double_views``, ``scheduler_views``: state turned into plain
  dicts, secrets left out or redacted (a token's id, private keys, secret IDs, client secrets; KV
  values only through :func:`~.secrets_views.kv_value`, one at a time, when the page asks);
* ``guard``: the control endpoints' guard (:mod:`~pytest_schedpki.wire.control_guard`), reads
  included;
* ``app``: the WSGI application (the page, its static files, the JSON API under ``api/``) the control
  endpoints hand ``/_schedpki/ui/...`` to; ``templates/`` (Jinja2, autoescaped) and ``static/`` (one
  JavaScript and one CSS file, no build step, no CDN) ship with the package;
* here: :data:`PREFIX` and :func:`page_url`, which ``schedpki serve`` prints once it listens (without
  importing the page's views, which load cryptography's X.509 layer, while it answers its first
  requests);
* ``keep_on_failure``: the pytest option ``--schedpki-keep-on-failure`` (the plugin declares and
  configures it through this module; it imports ``pytest``, never the rest of the user surface).

May import: ``scheduler/``, ``secrets/``, ``journal``, ``faults``, ``clock``, ``wire/``, ``errors``
(never ``double``, ``control`` or the user surface: ``control`` imports this package).
"""

PREFIX = "/_schedpki/ui"


def page_url(base_url: str, control_token: str | None = None) -> str:
    """The page's URL on a listener whose base URL is ``base_url`` (``http://127.0.0.1:4646``); with a
    control token, a hint to append it as the ``#token=`` fragment (the token itself is not written)."""
    url = base_url.rstrip("/") + PREFIX + "/"
    return url + ("  (append #token=<control token>)" if control_token else "")
