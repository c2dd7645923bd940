"""What a test holds: the ``schedpki`` fixture's value."""

from __future__ import annotations

import datetime
import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .double import Double
from .seed import is_default_seed
from .sso_testing import SchedulerHandle

if TYPE_CHECKING:  # pragma: no cover
    from .acme.inspect import AcmeInspector
    from .factories import Factories
    from .secrets.kv_inspection import KvInspector
    from .testing import CertificateInspector


@dataclass
class ServiceHandle:
    """One service as a test sees it: ``url`` (base URL without ``/v1``), ``token`` (the scheduler's
    management token secret, or the secrets service's root token) and ``state`` (the backend:
    ``SchedulerState`` or ``SecretsService``) for seeding and inspection without HTTP."""

    url: str
    token: str
    state: Any
    token_header: str | None = None  # None: from the type of state

    def headers(self) -> dict[str, str]:
        """Headers carrying :attr:`token` as the real clients send it (``X-Nomad-Token`` for the
        scheduler, ``X-Vault-Token`` for the secrets service)."""
        name = self.token_header or ("X-Nomad-Token" if type(self.state).__name__ == "SchedulerState" else "X-Vault-Token")
        return {name: self.token}


class SchedpkiHandle:
    """The per-test handle: both services, the clock and the knobs.

    * ``scheduler``: :class:`~pytest_schedpki.sso_testing.SchedulerHandle` (``.url``, ``.token``,
      ``.state``, and SSO helpers: ``jwt()``, ``login()``, ``login_jwt()``, ``oidc_login()``,
      ``set_oidc_user()``, ``login_tokens()``, ``assert_token()``);
    * ``secrets``: :class:`ServiceHandle` (``.url``, ``.token``, ``.state``);
    * ``double``: the session's :class:`~pytest_schedpki.double.Double`;
    * ``clock``: the double's switchable clock (``.use("manual"|"follow"|"real")``);
    * ``factories``: ``.scheduler`` (auth methods, tokens) and ``.secrets`` (mounts, issuers, roles,
      policies, tokens) creating state without HTTP (:mod:`pytest_schedpki.factories`);
    * ``certs``: issued certificates as records, ``assert_issued``/``assert_revoked``/
      ``assert_not_revoked``, ``crl()``, ``verify_chain()`` (:mod:`pytest_schedpki.testing`);
    * ``kv``: what the test read from and wrote to KV mounts (:mod:`pytest_schedpki.secrets.kv_inspection`);
    * ``journal``: every request answered (:class:`~pytest_schedpki.journal.Journal`);
    * ``faults``: injected faults (:class:`~pytest_schedpki.faults.FaultSet`);
    * ``ca_path``/``ssl_context``: the CA bundle and a client context when TLS is on (else None);
    * ``acme``: ACME accounts and orders of every PKI mount, ``assert_account``/``assert_order``, and
      ``.knobs`` (:class:`~pytest_schedpki.acme.inspect.AcmeInspector`); knobs are set with
      :meth:`acme_knobs`, a mount is made an ACME server with :meth:`enable_acme`;
    * :meth:`seed`, :meth:`set_lag`, :meth:`pause_replication`, :meth:`sync`.
    """

    def __init__(self, double: Double, test_path: str | os.PathLike | None = None):
        self.double = double
        self.test_path = os.fspath(test_path) if test_path is not None else None
        tls = getattr(double, "tls", None)
        self.ca_path: str | None = tls.ca_path if tls else None
        self.ssl_context = tls.client_context() if tls else None
        self.scheduler = SchedulerHandle(double.scheduler_url, double.management_token, double.scheduler,
                                         self.ssl_context)
        self.secrets = ServiceHandle(double.secrets_url, double.root_token, double.secrets)
        self.clock = double.clock
        self.journal = double.journal
        self.faults = double.faults

    # The inspectors and factories are made (and their modules imported) on first use: most tests
    # use none of them, and the handle is built for every test. A subclass may assign them.
    @functools.cached_property
    def acme(self) -> AcmeInspector:
        """ACME accounts and orders of every PKI mount, ``assert_account``/``assert_order`` and ``.knobs``
        (:class:`~pytest_schedpki.acme.inspect.AcmeInspector`), made on first use."""
        from .acme.inspect import AcmeInspector

        return AcmeInspector(self.double.secrets)

    @functools.cached_property
    def factories(self) -> Factories:
        """``.scheduler`` and ``.secrets`` factories creating state without HTTP
        (:class:`~pytest_schedpki.factories.Factories`; given the CA bundle when TLS is on), made on first use."""
        from .factories import Factories

        tls, ca_pem = getattr(self.double, "tls", None), None
        if tls:
            with open(tls.ca_path, encoding="ascii") as fh:
                ca_pem = fh.read()
        return Factories(self.double.scheduler, self.double.secrets, self.double.scheduler_url, ca_pem)

    @functools.cached_property
    def certs(self) -> CertificateInspector:
        """Issued certificates as records and their assertions
        (:class:`~pytest_schedpki.testing.CertificateInspector`), made on first use."""
        from .testing import CertificateInspector

        return CertificateInspector(self.double.secrets)

    @functools.cached_property
    def kv(self) -> KvInspector:
        """What the test read from and wrote to KV mounts
        (:class:`~pytest_schedpki.secrets.kv_inspection.KvInspector`), made on first use."""
        from .secrets.kv_inspection import KvInspector

        return KvInspector(self.double.secrets)

    def seed(self, seed: str | os.PathLike | dict[str, Any]) -> None:
        """Apply a YAML seed file or mapping on top of the current state (lasts for this test).

        A relative path is resolved as the marker's ``seed=`` is: against the folder of the test file
        (the current directory only when the handle has no test file); ``"default"`` names the
        packaged seed. Raises SeedError naming the file (the absolute path tried), entry and problem."""
        self.double.seed(self.resolve_seed(seed))

    def resolve_seed(self, seed: str | os.PathLike | dict[str, Any]) -> str | os.PathLike | dict[str, Any]:
        """``seed`` with a relative path made absolute against the folder of :attr:`test_path` (the
        test file; the current directory when ``None``); mappings, absolute paths and ``"default"``
        unchanged."""
        if isinstance(seed, (str, os.PathLike)) and not is_default_seed(seed) and not os.path.isabs(seed):
            base = os.path.dirname(self.test_path) if self.test_path else os.getcwd()
            return os.path.join(base, seed)
        return seed

    def acme_knobs(self, **knobs: Any) -> dict[str, Any]:
        """Set ACME knobs of the PKI engine for this test (a reset turns them off): ``challenge_address``
        (``"host:port"`` validation connects to instead of port 80/443 of the identifier; the DNS
        server for dns-01), ``always_valid`` (bool), ``validation_delay`` (seconds), ``bad_nonce_share``
        (0-1, share of valid nonces refused with badNonce) and ``seed``. Returns all knobs; raises
        ``ValueError`` for an unknown knob or a bad value (nothing is set then)."""
        self.acme.knobs.update(**knobs)
        return self.acme.knobs.describe()

    def enable_acme(self, mount: str = "pki", **config: Any) -> str:
        """Make PKI ``mount`` an ACME server as an operator does on OpenBao (tune for the ACME headers,
        ``config/cluster`` ``path``, ``config/acme`` ``enabled`` plus ``config``: ``eab_policy``,
        ``allowed_roles``...); returns its directory URL ``<secrets url>/v1/<mount>/acme/directory``.
        Raises ``urllib.error.HTTPError`` with the refusal when a step is refused."""
        from .acme.testing import enable_acme

        return enable_acme(self.secrets.url, mount, self.secrets.token, **config)

    def set_lag(self, lag: float | datetime.timedelta | None) -> None:
        """Replication lag of the scheduler's local region: seconds or a timedelta on the double's
        clock (``None``/0 = reads see writes at once)."""
        self.double.scheduler.set_lag(lag)

    def set_lag_reads(self, reads: int) -> None:
        """Make each scheduler write visible in the local region only after ``reads`` reads there."""
        self.double.scheduler.set_lag_reads(reads)

    def pause_replication(self) -> None:
        """Stop applying writes to the scheduler's local region until :meth:`sync`."""
        self.double.scheduler.pause_replication()

    def sync(self) -> None:
        """Apply every pending write to the scheduler's local region now (and resume replication)."""
        self.double.scheduler.sync()

    def authoritative_view(self):
        """The scheduler's authoritative region as a RegionView (methods, indexes), for comparison
        with :meth:`replicated_view`."""
        return self.double.scheduler.authoritative_view()

    def replicated_view(self):
        """What the scheduler's local region currently serves (may lag behind the authoritative one)."""
        return self.double.scheduler.replicated_view()

    def use_clock(self, mode: str, start: datetime.datetime | None = None):
        """Switch the double's clock: ``"follow"`` (freezegun, the default), ``"manual"`` (stands still;
        returns the ManualClock with ``set``/``advance``) or ``"real"`` (ignores freezegun)."""
        return self.double.clock.use(mode, start)

    def seal(self) -> None:
        """Seal the secrets service: OpenBao's 503 ``Vault is sealed`` answers until :meth:`unseal`."""
        self.double.secrets.sealed = True

    def unseal(self) -> None:
        self.double.secrets.sealed = False

    def set_leader(self, leader: bool) -> None:
        """Take the scheduler's leader away (``False``: 500 ``No cluster leader``) or give it back."""
        self.double.scheduler.set_leader(leader)
