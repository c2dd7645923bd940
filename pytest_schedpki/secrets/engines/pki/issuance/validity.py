"""Validity of leaf certificates (issue/sign): TTL clamping, ``not_after``/``not_before`` and the
issuer's ``leaf_not_after_behavior``, as OpenBao's ``getCertificateNotAfter`` /
``getCertificateNotBefore`` compute them.

Units: TTLs are integer **seconds** here; times are aware UTC ``datetime`` values from the double's
clock (microsecond precision, where Go has nanoseconds). Warnings and errors use Go's texts: durations
via :func:`pytest_schedpki.golang.duration.format_seconds` (``"768h0m0s"``), times as Go's
``Format(time.RFC3339Nano)`` (fraction trimmed of zeros, ``Z``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from pytest_schedpki.golang.duration import format_seconds

from ..codecs.rfc3339 import Rfc3339Error, format_rfc3339_nano
from ..codecs.rfc3339 import parse_rfc3339 as _parse_rfc3339

UTC = datetime.timezone.utc


class ValidityError(ValueError):
    """A user error (400) with OpenBao's exact text in ``str()``."""


def go_rfc3339nano(when: datetime.datetime) -> str:
    """Go ``t.UTC().Format(time.RFC3339Nano)`` (see :func:`.rfc3339.format_rfc3339_nano`)."""
    return format_rfc3339_nano(when)


def go_time_string(when: datetime.datetime) -> str:
    """Go ``Time.String()`` of a UTC time: ``2020-01-01 00:00:00 +0000 UTC`` (fraction when non-zero)."""
    text = go_rfc3339nano(when)[:-1].replace("T", " ")
    return text + " +0000 UTC"


def parse_rfc3339(value: str) -> datetime.datetime:
    """Go ``time.Parse(time.RFC3339, value)`` (see :func:`.rfc3339.parse_rfc3339`); raises
    :class:`ValidityError` with Go's text, e.g. ``parsing time "tomorrow" as
    "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"``."""
    try:
        return _parse_rfc3339(value)
    except Rfc3339Error as exc:
        raise ValidityError(str(exc)) from None


@dataclass(frozen=True)
class ValidityRequest:
    """What decides a leaf's validity.

    * ``ttl``: request ``ttl`` in seconds (0 = not given); ``not_after``/``not_before``: request
      RFC 3339 texts or ``None`` when not sent;
    * ``role_ttl``/``role_max_ttl``/``role_not_before_duration`` (seconds); ``role_not_after``,
      ``role_not_before`` (RFC 3339 or ``""``); ``not_after_bound`` (``permit``/``forbid``/
      ``ttl-limited``/timestamp), ``not_before_bound`` (``permit``/``duration``/``forbid``);
    * ``mount_default_ttl``/``mount_max_ttl``: the mount's effective lease TTLs (seconds);
    * ``issuer_not_after`` and ``leaf_not_after_behavior`` (``err``/``truncate``/``permit``) of the
      signing issuer.
    """

    now: datetime.datetime
    issuer_not_after: datetime.datetime
    mount_default_ttl: int
    mount_max_ttl: int
    ttl: int = 0
    not_after: str | None = None
    not_before: str | None = None
    role_ttl: int = 0
    role_max_ttl: int = 0
    role_not_after: str = ""
    role_not_before: str = ""
    role_not_before_duration: int = 30
    not_after_bound: str = "permit"
    not_before_bound: str = "permit"
    leaf_not_after_behavior: str = "err"


def leaf_not_before(req: ValidityRequest) -> datetime.datetime | None:
    """The explicit NotBefore (role ``not_before`` or request ``not_before`` under the role's
    ``not_before_bound``), or ``None`` to back-date from now.

    Errors (400): ``not_before_bound is set to forbid. not_before cannot be provided.``; with
    ``duration``: ``not_before_bound is set to duration. Cannot satisfy request as it would result in
    notBefore of <t> that is older than the allowed not_before_duration of <d>``; RFC 3339 parse errors.
    """
    text = req.role_not_before
    if text == "" and req.not_before is not None:
        if req.not_before_bound == "permit":
            text = req.not_before
        elif req.not_before_bound == "duration":
            when = parse_rfc3339(req.not_before)
            if when < req.now - datetime.timedelta(seconds=req.role_not_before_duration):
                raise ValidityError(
                    f"not_before_bound is set to duration. Cannot satisfy request as it would result in notBefore of "
                    f"{go_rfc3339nano(when)} that is older than the allowed not_before_duration of "
                    f"{format_seconds(req.role_not_before_duration)}")
            return when
        elif req.not_before_bound == "forbid":
            raise ValidityError("not_before_bound is set to forbid. not_before cannot be provided.")
    return parse_rfc3339(text) if text else None


def backdated_not_before(now: datetime.datetime, not_before_duration: int) -> datetime.datetime:
    """certutil's default NotBefore: ``now - not_before_duration`` seconds, or ``now - 30s`` when the
    duration is 0."""
    return now - datetime.timedelta(seconds=not_before_duration if not_before_duration > 0 else 30)


def leaf_not_after(req: ValidityRequest) -> tuple[datetime.datetime, list[str]]:
    """``(not_after, warnings)`` for a leaf, following OpenBao's rules in order:

    1. request ``not_after`` (or the role's) excludes ``ttl``: 400 ``Either ttl or not_after should be
       provided. Both should not be provided in the same request.``; ``not_after_bound`` ``forbid``
       refuses it: ``not_after_bound is set to forbid. not_after cannot be provided.``;
    2. ttl = request ttl -> role ttl -> mount default; max = role max_ttl -> mount max; ttl > max is
       clamped with the warning ``TTL "<ttl>" is longer than permitted maxTTL "<max>", so maxTTL is
       being used`` (a ``not_after`` is not limited by max_ttl);
    3. beyond the issuer's NotAfter: ``err`` -> 400 ``cannot satisfy request, as TTL would result in
       notAfter of <t> that is beyond the expiration of the CA certificate at <ca>``; ``truncate`` ->
       the issuer's NotAfter (400 ``cannot satisfy request, as NotAfter date <t> is in the past`` when
       already past); ``permit`` -> as computed.
    """
    warnings: list[str] = []
    bound = req.not_after_bound
    timestamp = None
    if bound not in ("", "permit", "forbid", "ttl-limited"):
        timestamp = parse_rfc3339(bound)
    explicit: datetime.datetime | None = None
    text = req.role_not_after
    if text == "" and req.not_after is not None:
        if bound == "forbid":
            raise ValidityError("not_after_bound is set to forbid. not_after cannot be provided.")
        text = req.not_after
        explicit = parse_rfc3339(text)
    if req.ttl > 0 and text != "":
        raise ValidityError("Either ttl or not_after should be provided. Both should not be provided in the same request.")
    ttl = req.ttl or req.role_ttl or req.mount_default_ttl
    max_ttl = req.role_max_ttl or req.mount_max_ttl
    if ttl > max_ttl:
        warnings.append(f'TTL "{format_seconds(ttl)}" is longer than permitted maxTTL "{format_seconds(max_ttl)}", '
                        "so maxTTL is being used")
        ttl = max_ttl
    if bound == "ttl-limited" and explicit is not None and explicit > req.now + datetime.timedelta(seconds=ttl):
        raise ValidityError(f"not_after_bound is set to ttl-limited. Cannot satisfy request as that would result in "
                            f"notAfter of {go_rfc3339nano(explicit)} that is beyond the TTL of {format_seconds(ttl)}")
    not_after = parse_rfc3339(text) if text else req.now + datetime.timedelta(seconds=ttl)
    if not_after > req.issuer_not_after:
        behavior = req.leaf_not_after_behavior
        if behavior == "truncate":
            if not_after < req.now:
                raise ValidityError(f"cannot satisfy request, as NotAfter date {go_time_string(not_after)} is in the past")
            not_after = req.issuer_not_after
        elif behavior != "permit":
            raise ValidityError(
                f"cannot satisfy request, as TTL would result in notAfter of {go_rfc3339nano(not_after)} that is beyond "
                f"the expiration of the CA certificate at {go_rfc3339nano(req.issuer_not_after)}")
    if timestamp is not None and not_after > timestamp:
        raise ValidityError(f"not_after_bound is set to {bound}. Cannot statisfy request as that would result in notAfter "
                            f"of {go_rfc3339nano(not_after)} that is beyond the maximum timestamp of "
                            f"{go_rfc3339nano(timestamp)}")
    return not_after, warnings


def check_order(not_before: datetime.datetime, not_after: datetime.datetime) -> None:
    """certutil's sanity check on generated leaves (issue only). Raises 400 ``The certificate's Not
    Before (<t>) is later than the certificate's Not After (<t>)`` or ``... is equal to ...``."""
    if not_before > not_after:
        raise ValidityError(f"The certificate's Not Before ({go_rfc3339nano(not_before)}) is later than the "
                            f"certificate's Not After ({go_rfc3339nano(not_after)})")
    if not_before == not_after:
        raise ValidityError(f"The certificate's Not Before ({go_rfc3339nano(not_before)}) is equal to the "
                            f"certificate's Not After ({go_rfc3339nano(not_after)})")
