"""Upstream mode: the same downstream suite against a real server.

``pytest --schedpki-upstream=bao`` (ini ``schedpki_upstream``) points the ``schedpki`` fixture's
secrets side at a real OpenBao dev server that the plugin starts (:mod:`.bao`), or at the URL of a
running server (``--schedpki-upstream=http://127.0.0.1:8200 --schedpki-upstream-token=...``);
``--schedpki-upstream-scheduler=URL`` does the same for the scheduler side (a running Nomad agent,
or ``schedpki serve``).

Pieces: :mod:`.client` (a small JSON HTTP client, standard library only), :mod:`.bao` (start and
stop ``bao server -dev``), :mod:`.proxy` (a recording pass-through in front of the secrets server:
it learns the role and private key of each certificate issued through it and whether the test
wrote anything), :mod:`.seeding` (seed files applied over HTTP), :mod:`.certs` (``schedpki.certs``
over the API), :mod:`.session` (baseline, reset between tests), :mod:`.handle` (the per-test handle
and the skips of double-only knobs), :mod:`.shadow`/:mod:`.shadow_run`/:mod:`.shadow_allow` (shadow
mode), :mod:`.run_report` (the header and the summary of what either mode compared, summed over
xdist workers, and the skip of a test that failed after the proxy refused one of its requests).

May import the package's surface modules (``testing``, ``handle``, ``seed``, ``errors``, ``clock``);
nothing of the double's services imports this package.
"""
