"""The double's one time source.

Every time the APIs expose or depend on (certificate NotBefore/NotAfter, TTL clamping, CRL dates,
Nomad CreateTime/ModifyTime, replication visibility) comes from a :class:`Clock`'s ``now()``.

* :class:`FollowClock` (the default) reads ``datetime.datetime.now(timezone.utc)`` at call time, so
  ``freezegun.freeze_time`` and its ``tick()``/``move_to()`` move it in every thread, the server's
  threads included.
* :class:`ManualClock` stands still until told to move (``set``/``advance``); no freezegun needed.
* :class:`RealClock` ignores freezegun: the client may be frozen while the double is not.

Real waits (blocking queries, injected latency) never read these clocks: they use
:func:`real_monotonic`, which stays real under a freeze, so a frozen clock cannot make a wait spin
or hang.

freezegun is not imported here (it costs ~35 ms of start-up): nothing can be frozen before
``freezegun.api`` is loaded, so until then the standard functions are the real ones; afterwards its
saved originals (``real_datetime``, ``real_monotonic``) are used.
"""

from __future__ import annotations

import datetime
import sys
import threading
import time

UTC = datetime.timezone.utc
_FREEZEGUN = "freezegun.api"


def real_datetime_class() -> type[datetime.datetime]:
    """The real ``datetime.datetime`` class, even while freezegun replaces it."""
    api = sys.modules.get(_FREEZEGUN)
    return api.real_datetime if api is not None else datetime.datetime


def is_frozen() -> bool:
    """Whether freezegun currently replaces ``datetime.datetime`` (a freeze is active)."""
    api = sys.modules.get(_FREEZEGUN)
    return api is not None and datetime.datetime is not api.real_datetime


def real_monotonic() -> float:
    """Seconds from a monotonic source that freezegun never fakes (for deadlines of real waits)."""
    api = sys.modules.get(_FREEZEGUN)
    return api.real_monotonic() if api is not None else time.monotonic()


# A tiny self-signed certificate (EC P-256, 2000-01-01 .. 2999-12-31): reading its validity makes
# cryptography resolve the ``datetime.datetime`` class it converts to and from.
_WARM_UP_CERT = b"""-----BEGIN CERTIFICATE-----
MIIBEDCBt6ADAgECAgEBMAoGCCqGSM49BAMCMBExDzANBgNVBAMMBndhcm11cDAg
Fw0wMDAxMDEwMDAwMDBaGA8yOTk5MTIzMTIzNTk1OVowETEPMA0GA1UEAwwGd2Fy
bXVwMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8p7yXwsBGRRTPwWz3Gz4BhLp
lHXMDswf3kO2umjauocfFrGsOGX6jaEdwjyp6DkbSJVD6WQPgWdVf0t+YqdP9jAK
BggqhkjOPQQDAgNIADBFAiAdlXpVqssV2zQBMnNAQ59xpvCBRPSb/bwTGPvKlRqX
4AIhAIL8W7n1LNn0WIMUerr1O/lK27vBh737NEC/DZQNM5AH
-----END CERTIFICATE-----
"""
_warmed_up = False


def warm_up_datetime_types() -> None:
    """Make ``cryptography`` bind the REAL ``datetime.datetime`` class, once per process.

    cryptography's Rust core looks ``datetime.datetime`` up on the ``datetime`` module the first
    time it converts a time (building, signing or reading a certificate or CRL) and keeps that
    class for the life of the process. If that first time happens inside ``freezegun.freeze_time``
    (which replaces the module attribute by ``FakeDatetime``), every later conversion of a real
    ``datetime`` fails with ``TypeError: 'datetime' object is not an instance of 'FakeDatetime'``.
    Reading the validity of a tiny certificate here, with the real class in place, pins the right
    one. Called by the pytest plugin at configure time (every process, xdist workers included) and
    by :class:`~pytest_schedpki.double.Double`; cheap and idempotent.
    """
    global _warmed_up
    if _warmed_up:
        return
    from cryptography import x509

    api = sys.modules.get(_FREEZEGUN)
    frozen_class = datetime.datetime
    if api is not None and frozen_class is not api.real_datetime:
        datetime.datetime = api.real_datetime  # a freeze is active: look the real class up anyway
    try:
        not_before = x509.load_pem_x509_certificate(_WARM_UP_CERT).not_valid_before_utc  # the conversion that binds
        _warm_up_ocsp_signing()
    finally:
        datetime.datetime = frozen_class
    _warmed_up = not_before.year == 2000


def _warm_up_ocsp_signing() -> None:
    """Sign one OCSP response: cryptography's OCSP signer looks ``datetime.datetime`` up on its own (for
    ``producedAt``) and keeps that class too; bound to ``FakeDatetime`` inside a freeze, every later
    signature outside one fails with freezegun's ``IndexError`` (the PKI engine's OCSP responder)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509 import ocsp

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "warm-up")])
    start = datetime.datetime(2000, 1, 1, tzinfo=UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(start).not_valid_after(start + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    (ocsp.OCSPResponseBuilder().add_response(cert, cert, hashes.SHA1(), ocsp.OCSPCertStatus.GOOD, start, None, None, None)
     .responder_id(ocsp.OCSPResponderEncoding.NAME, cert).sign(key, hashes.SHA256()))


def real_now() -> datetime.datetime:
    """The wall-clock time in UTC, ignoring any freezegun freeze."""
    return real_datetime_class().now(UTC)


class Clock:
    """Interface: ``now()`` returns a timezone-aware UTC ``datetime``."""

    mode = "abstract"

    def now(self) -> datetime.datetime:  # pragma: no cover - interface
        raise NotImplementedError


class FollowClock(Clock):
    """Follows ``freezegun.freeze_time`` (and real time when nothing is frozen)."""

    mode = "follow"

    def now(self) -> datetime.datetime:
        value = datetime.datetime.now(UTC)
        real = real_datetime_class()
        if type(value) is real:
            return value
        # FakeDatetime is a datetime subclass; normalise so that comparisons and arithmetic with
        # values created after the freeze ends keep working.
        return real(value.year, value.month, value.day, value.hour, value.minute, value.second,
                    value.microsecond, tzinfo=UTC)


class RealClock(Clock):
    """Real UTC wall-clock time, immune to freezegun."""

    mode = "real"

    def now(self) -> datetime.datetime:
        return real_now()


class ManualClock(Clock):
    """A clock that moves only when told to. Thread-safe.

    ``start`` is a timezone-aware datetime (naive values are taken as UTC); it defaults to the real
    time at construction.
    """

    mode = "manual"

    def __init__(self, start: datetime.datetime | None = None):
        self._lock = threading.Lock()
        self._now = _as_utc(start) if start is not None else real_now()

    def now(self) -> datetime.datetime:
        with self._lock:
            return self._now

    def set(self, when: datetime.datetime) -> None:
        """Jump to ``when`` (aware, or naive meaning UTC)."""
        with self._lock:
            self._now = _as_utc(when)

    def advance(self, delta: datetime.timedelta | float) -> None:
        """Move forward by ``delta`` (a ``timedelta`` or seconds as a number)."""
        if not isinstance(delta, datetime.timedelta):
            delta = datetime.timedelta(seconds=float(delta))
        with self._lock:
            self._now = self._now + delta


class SwitchableClock(Clock):
    """The clock the double holds: delegates to a follow, manual or real clock, switchable at run time."""

    def __init__(self, inner: Clock | None = None):
        self.inner = inner or FollowClock()

    @property
    def mode(self) -> str:  # type: ignore[override]
        return self.inner.mode

    def now(self) -> datetime.datetime:
        return self.inner.now()

    def use(self, mode: str, start: datetime.datetime | None = None) -> Clock:
        """Switch to ``"follow"``, ``"real"`` or ``"manual"`` (optionally starting at ``start``).

        Raises ``ValueError`` for another mode name.
        """
        if mode == "follow":
            self.inner = FollowClock()
        elif mode == "real":
            self.inner = RealClock()
        elif mode == "manual":
            self.inner = ManualClock(start if start is not None else self.inner.now())
        else:
            raise ValueError(f"unknown clock mode {mode!r}: expected 'follow', 'manual' or 'real'")
        return self.inner

    def set(self, when: datetime.datetime) -> None:
        """Move the manual clock to ``when`` (aware, or naive meaning UTC): what ``clock.inner.set``
        does while the mode is ``"manual"`` (:meth:`use`, or the marker's ``clock=datetime(...)``).
        Raises RuntimeError in another mode, saying how to switch."""
        self._manual("set").set(when)

    def advance(self, delta: datetime.timedelta | float) -> None:
        """Move the manual clock forward by ``delta`` (a ``timedelta`` or seconds). Raises
        RuntimeError when the mode is not ``"manual"``, saying how to switch."""
        self._manual("advance").advance(delta)

    def _manual(self, what: str) -> ManualClock:
        inner = self.inner
        if not isinstance(inner, ManualClock):
            raise RuntimeError(
                f"clock.{what}() moves the manual clock, but the double's clock is {inner.mode!r}: switch first "
                "with schedpki.use_clock('manual') or @pytest.mark.schedpki(clock=datetime(...)) (a 'follow' "
                "clock moves with freezegun: freeze_time(...).tick()/move_to())")
        return inner


def _as_utc(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return real_datetime_class()(
        value.year, value.month, value.day, value.hour, value.minute, value.second,
        value.microsecond, tzinfo=UTC,
    )
