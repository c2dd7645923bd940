"""The ``schedpki`` handle in upstream mode, and the skips of what only the double can do.

A test that reaches for a knob the real server does not have is skipped (never failed), with the
reason ``schedpki upstream mode (<servers>): <knob> exists only in the double``. With the secrets
side upstream these skip:

* ``faults`` on an upstream side, ``seal()``/``unseal()``;
* the double's clock: ``clock``, ``use_clock()``, the marker's ``clock=``; a secrets request made
  under ``freezegun.freeze_time`` (a real server keeps real time) is refused by the proxy;
* ``factories.secrets`` (they write into the double's memory), ``secrets.state``;
* ``kv`` (the double's record of KV reads and writes);
* ``journal`` queries that concern the secrets side (``service="secrets"``, or no ``service=`` and
  a path outside Nomad's ``/v1/acl/``): its requests went to the real server, so the double's
  journal cannot say whether they were made (:class:`UpstreamJournal`);
* the marker's ``enterprise=True``; the control endpoints ``/_schedpki/`` on the upstream secrets
  URL (refused by the proxy, see :mod:`.proxy`);
* ``acme_knobs()`` and ``acme`` (the double's ACME knobs and records).

With the scheduler side upstream: replication lag and leadership (``set_lag()``, the marker's
``lag``/``lag_reads``/``paused``, ``sync()``, ...), ``factories.scheduler``, ``scheduler.state``,
the built-in identity provider's helpers, the marker's ``bootstrap=False`` (a fresh cluster) and
``journal`` queries of the scheduler side. ``scheduler.allows``/``assert_allowed``/``assert_denied``
work: they read the agent's token, roles and policies over HTTP.

A test that fails after the proxy refused one of its own requests is reported skipped with the
refused knob (:mod:`.run_report`); a failure in any other test stays a failure.
"""

from __future__ import annotations

import datetime
import inspect
import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

import pytest

from ..factories import Factories
from ..handle import SchedpkiHandle, ServiceHandle
from ..journal import Journal
from ..sso_testing import SchedulerHandle
from .certs import UpstreamCertificateInspector
from .session import UpstreamSession


def double_only_reason(session: UpstreamSession, knob: str) -> str:
    """The skip reason for ``knob`` (names the upstream servers)."""
    return f"schedpki upstream mode ({session.settings.describe()}): {knob} exists only in the double"


def skip_double_only(session: UpstreamSession, knob: str) -> None:
    """Skip the running test: ``knob`` exists only in the double (reported at the test's location)."""
    try:
        skipped = pytest.skip.Exception(double_only_reason(session, knob), _use_item_location=True)
    except TypeError:  # pragma: no cover - a pytest without item locations for skips
        skipped = pytest.skip.Exception(double_only_reason(session, knob))
    raise skipped


class _Guarded:
    """Stands for a double-only object on an upstream side: any attribute use skips the test."""

    def __init__(self, session: UpstreamSession, knob: str):
        self._session, self._knob = session, knob

    def __getattr__(self, name: str) -> Any:
        skip_double_only(self._session, f"{self._knob}.{name}")


class _UpstreamFaults:
    """``schedpki.faults`` when a side is upstream: faults of the double's side still work; a fault
    that would touch an upstream side skips the test."""

    def __init__(self, session: UpstreamSession, faults):
        self._session, self._faults = session, faults

    def add(self, fault):
        upstream = {"secrets": self._session.secrets is not None, "scheduler": self._session.scheduler is not None}
        if fault.service == "*" and any(upstream.values()) or upstream.get(fault.service):
            skip_double_only(self._session, f"a fault on the {fault.service} service")
        return self._faults.add(fault)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._faults, name)


class UpstreamJournal:
    """``schedpki.journal`` when a side is upstream: the double's journal holds only the double's
    side. ``find``, ``entries``, ``assert_request_made`` and ``assert_no_request`` answer for a query
    of the double's side and skip the test for a query that concerns an upstream side; the side of
    a query is its ``service=``, else the scheduler for a path under ``/v1/acl/`` (the Nomad API the
    double serves; ``^``-patterns too), else either side. Anything else (``clear()``, ``evicted``,
    bounds) is the double's journal's."""

    _CHECKED = ("find", "entries", "assert_request_made", "assert_no_request")

    def __init__(self, session: UpstreamSession, journal: Journal):
        self._session, self._journal = session, journal

    def _upstream_side(self, service: str | None, path: str | None) -> str:
        if service:
            sides = [service]
        elif isinstance(path, str) and path.lstrip("^").startswith("/v1/acl/"):
            sides = ["scheduler"]
        else:
            sides = ["secrets", "scheduler"]
        return next((side for side in sides if getattr(self._session, side, None) is not None), "")

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._journal, name)
        if name not in self._CHECKED:
            return target
        signature = inspect.signature(target)

        def checked(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind_partial(*args, **kwargs).arguments
            side = self._upstream_side(bound.get("service"), bound.get("path"))
            if side:
                skip_double_only(self._session, f"the journal of {side} requests (journal.{name}())")
            return target(*args, **kwargs)

        checked.__doc__ = target.__doc__
        return checked


class UpstreamSchedulerHandle(SchedulerHandle):
    """``schedpki.scheduler`` when the scheduler is a real Nomad agent: ``url``/``token``/``headers()``
    are the agent's; ``login()`` posts to its ``/v1/acl/login``; ``assert_token()`` reads
    ``/v1/acl/token/self`` with the token's SecretID (Nomad's ACLToken JSON: ``Policies``, ``Roles``
    as ``[{ID, Name}]``, ``Type``, ``Global``). The helpers that need the double's built-in identity
    provider or its clock (``jwt``, ``login_jwt``, ``oidc_login``, ``set_oidc_user``,
    ``login_tokens``) skip the test."""

    def __init__(self, session: UpstreamSession):
        super().__init__(session.scheduler.url, session.scheduler.token, _Guarded(session, "scheduler.state"))
        self._session = session

    def headers(self) -> dict[str, str]:
        """``{"X-Nomad-Token": <the agent's management token>}``."""
        return {"X-Nomad-Token": self.token}

    def jwt(self, *args: Any, **kwargs: Any) -> str:
        """Skips the test: the token would be signed with the double's identity-provider key."""
        skip_double_only(self._session, "scheduler.jwt() (the built-in identity provider's key)")

    def login_jwt(self, *args: Any, **kwargs: Any) -> dict:
        """Skips the test (see :meth:`jwt`)."""
        skip_double_only(self._session, "scheduler.login_jwt() (the built-in identity provider's key)")

    def set_oidc_user(self, *args: Any, **kwargs: Any) -> None:
        """Skips the test: the built-in identity provider is the double's."""
        skip_double_only(self._session, "scheduler.set_oidc_user() (the built-in identity provider)")

    def oidc_login(self, *args: Any, **kwargs: Any) -> dict:
        """Skips the test: the flow goes through the double's built-in identity provider."""
        skip_double_only(self._session, "scheduler.oidc_login() (the built-in identity provider)")

    def _acl_for(self, token):
        """The token's ACL from what the agent stores: its policies and roles read over HTTP with the
        token itself (``/v1/acl/token/self``, ``/v1/acl/policy/<name>``, ``/v1/acl/role/<id>``), the
        rules compiled by the double's reading of Nomad's ``acl`` package."""
        from ..scheduler.acl.evaluate import new_acl
        from ..scheduler.acl.policy import parse

        secret = token["SecretID"] if isinstance(token, dict) else (token or "")

        def get(path: str) -> dict:
            request = urllib.request.Request(self.url + path, headers={"X-Nomad-Token": secret})
            try:
                with urllib.request.urlopen(request, timeout=30) as resp:  # noqa: S310 - the configured agent
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                if exc.code == 404 and path != "/v1/acl/token/self":  # a deleted policy or role grants nothing
                    return {}
                raise AssertionError(f"GET {path}: {exc.code} {exc.read().decode('utf-8', 'replace').strip()}") from None

        record = get("/v1/acl/token/self")
        if record.get("Type") == "management":
            return new_acl(True, [])
        names = list(record.get("Policies") or [])
        for link in record.get("Roles") or []:
            names += [p["Name"] for p in get(f"/v1/acl/role/{link['ID']}").get("Policies") or []]
        return new_acl(False, [parse(get(f"/v1/acl/policy/{quote(n)}").get("Rules") or "", strict=False)
                               for n in names])

    def login_tokens(self) -> list:
        """Skips the test: it reads the double's token table."""
        skip_double_only(self._session, "scheduler.login_tokens() (the double's token table)")

    def assert_token(self, token: dict | str, policies: list[str] | None = None, roles: list[str] | None = None,
                     type: str | None = None, global_: bool | None = None) -> None:  # noqa: A002
        """Assert what the agent says a token (its JSON or SecretID) grants, read from
        ``GET /v1/acl/token/self`` (Nomad's ``ACL.WhoAmI``): ``policies`` (as sets), ``roles`` (names),
        ``type`` (``"client"``/``"management"``) and ``global_``. Raises AssertionError naming the
        agent's status and text when it does not know the secret (403 ``Permission denied``)."""
        secret = token["SecretID"] if isinstance(token, dict) else token
        request = urllib.request.Request(self.url + "/v1/acl/token/self", headers={"X-Nomad-Token": secret})
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:  # noqa: S310 - the configured agent
                record = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"no ACL token with SecretID {secret!r}: {exc.code} "
                                 f"{exc.read().decode('utf-8', 'replace').strip()}") from None
        actual = {"policies": sorted(record.get("Policies") or ()),
                  "roles": sorted(r.get("Name", r.get("ID")) for r in record.get("Roles") or ()),
                  "type": record.get("Type"), "global": record.get("Global")}
        wanted = {"policies": None if policies is None else sorted(policies),
                  "roles": None if roles is None else sorted(roles), "type": type, "global": global_}
        diff = {k: v for k, v in wanted.items() if v is not None and v != actual[k]}
        assert not diff, f"token {record.get('AccessorID')} grants {actual}, expected {diff}"


class UpstreamHandle(SchedpkiHandle):
    """:class:`~pytest_schedpki.handle.SchedpkiHandle` whose secrets and/or scheduler side is a real
    server: ``.url`` and ``.token`` are the real server's (the secrets URL is the recording proxy in
    front of it), ``.state`` is a guard that skips, ``.certs`` reads the real server's API, ``seed()``
    applies over HTTP; ``.kv``, ``.factories`` of an upstream side, ``.clock`` and the other
    double-only knobs (listed in the module docstring) skip the test, and so does a ``.journal``
    query of an upstream side (:class:`UpstreamJournal`). Knobs of the double's side work as usual."""

    def __init__(self, session: UpstreamSession):
        super().__init__(session.double)
        self.upstream = session
        if session.secrets is not None:
            self.secrets = ServiceHandle(session.proxy.url, session.secrets.token,
                                         _Guarded(session, "secrets.state"), "X-Vault-Token")
            self.certs = UpstreamCertificateInspector(session.secrets, session.proxy)
            self.kv = _Guarded(session, "kv (the double's record of KV reads and writes)")
            self.acme = _Guarded(session, "acme (the double's ACME accounts, orders and knobs)")
        if session.scheduler is not None:
            self.scheduler = UpstreamSchedulerHandle(session)
        self.factories = Factories(session.double.scheduler, session.double.secrets, session.double.scheduler_url)
        if session.secrets is not None:
            self.factories.secrets = _Guarded(session, "factories.secrets")
        if session.scheduler is not None:
            self.factories.scheduler = _Guarded(session, "factories.scheduler")
        self.faults = _UpstreamFaults(session, session.double.faults)
        self.journal = UpstreamJournal(session, session.double.journal)
        self.clock = _Guarded(session, "the double's clock") if session.secrets is not None else self.clock

    def seed(self, seed: str | os.PathLike | dict[str, Any]) -> None:
        """Apply a seed over HTTP to the upstream side(s) (to the double for the other side); a relative
        path is resolved against the test file's folder, as :meth:`SchedpkiHandle.seed` does."""
        self.upstream.seed(self.resolve_seed(seed))

    def use_clock(self, mode: str, start: datetime.datetime | None = None):
        if self.upstream.secrets is not None:
            skip_double_only(self.upstream, "use_clock()")
        return super().use_clock(mode, start)

    def seal(self) -> None:
        if self.upstream.secrets is not None:
            skip_double_only(self.upstream, "seal()")
        super().seal()

    def unseal(self) -> None:
        if self.upstream.secrets is not None:
            skip_double_only(self.upstream, "unseal()")
        super().unseal()

    def acme_knobs(self, **knobs: Any) -> dict[str, Any]:
        """Skips the test when the secrets side is a real server (the knobs exist only in the double's
        ACME server); sets the double's knobs otherwise."""
        if self.upstream.secrets is not None:
            skip_double_only(self.upstream, "acme_knobs()")
        return super().acme_knobs(**knobs)

    def _scheduler_knob(self, name: str) -> None:
        if self.upstream.scheduler is not None:
            skip_double_only(self.upstream, name)

    def set_lag(self, lag):
        self._scheduler_knob("set_lag()")
        super().set_lag(lag)

    def set_lag_reads(self, reads):
        self._scheduler_knob("set_lag_reads()")
        super().set_lag_reads(reads)

    def pause_replication(self):
        self._scheduler_knob("pause_replication()")
        super().pause_replication()

    def sync(self):
        self._scheduler_knob("sync()")
        super().sync()

    def authoritative_view(self):
        self._scheduler_knob("authoritative_view()")
        return super().authoritative_view()

    def replicated_view(self):
        self._scheduler_knob("replicated_view()")
        return super().replicated_view()

    def set_leader(self, leader: bool) -> None:
        self._scheduler_knob("set_leader()")
        super().set_leader(leader)


def apply_marker_upstream(session: UpstreamSession, kwargs: dict, test_path: str) -> None:
    """``@pytest.mark.schedpki(...)`` in upstream mode: seeds over HTTP; lag knobs on the double's
    scheduler (skip when the scheduler is upstream); ``clock=`` and ``enterprise=True`` skip."""
    from ..seed import is_default_seed

    seeds = kwargs.get("seed")
    for seed in seeds if isinstance(seeds, (list, tuple)) else ([seeds] if seeds else []):
        if isinstance(seed, (str, os.PathLike)) and not os.path.isabs(seed) and not is_default_seed(seed):
            seed = os.path.join(os.path.dirname(test_path), seed)
        session.seed(seed)
    if kwargs.get("clock") and session.secrets is not None:
        skip_double_only(session, "the marker's clock=")
    if kwargs.get("enterprise") and session.secrets is not None:
        skip_double_only(session, "the Vault Enterprise emulation (marker enterprise=True)")
    lag = {k: kwargs.get(k) for k in ("lag", "lag_reads", "paused") if kwargs.get(k)}
    if lag and session.scheduler is not None:
        skip_double_only(session, "scheduler replication lag (marker " + ", ".join(lag) + ")")
    if kwargs.get("lag") is not None:
        session.double.scheduler.set_lag(kwargs["lag"])
    if kwargs.get("lag_reads") is not None:
        session.double.scheduler.set_lag_reads(kwargs["lag_reads"])
    if kwargs.get("paused"):
        session.double.scheduler.pause_replication()
    if kwargs.get("bootstrap") is False:
        if session.scheduler is not None:
            skip_double_only(session, "a fresh, unbootstrapped cluster (marker bootstrap=False)")
        session.double.scheduler.unbootstrap()
    clock = kwargs.get("clock")
    if clock:
        session.double.clock.use("manual", clock) if isinstance(clock, datetime.datetime) else session.double.clock.use(clock)
