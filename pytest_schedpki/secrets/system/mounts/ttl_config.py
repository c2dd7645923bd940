"""A mount's ``default_lease_ttl`` and ``max_lease_ttl`` as OpenBao reads them when a secrets engine or an
auth method is enabled (``handleMount``, ``handleEnableAuth``) and when either is tuned
(``handleTuneWriteCommon``), all in ``internal/vault/logical_system.go``. Values are seconds; 0 is "the
system's" (``"system"`` and ``""`` say so too); negative values are accepted and kept, as upstream does.

Enabling: the ``config`` map is decoded into strings first (``mapstructure.Decode``), so a boolean, a list
or a map there is ``unable to convert given mount config information`` (``... auth config ...`` for an
auth method). Each TTL is then go-secure-stdlib's ``ParseDurationSecond``: ``unable to parse default TTL
of <value>: <reason>`` / ``unable to parse max TTL of <value>: <reason>``. Then ``given default lease TTL
greater than given max lease TTL`` (a max other than 0 below the default), then ``given default lease TTL
greater than system max lease TTL of 2764800`` (no max, a default above the system's).

Tuning: the fields are strings (a boolean is ``"1"``/``"0"``, a number its text), parsed the same way but
the reason alone is the error; a changed pair where both are set and the max is below the default is
``backend max lease TTL of <max> would be less than backend default lease TTL of <default>``. There is no
check against the system max there.
"""

from __future__ import annotations

from typing import Any

from ...framework.fields import ConversionError, duration_seconds
from ...framework.logical import user_error
from ...service import SYSTEM_MAX_LEASE_TTL

_TTL_KEYS = (("default_lease_ttl", "default"), ("max_lease_ttl", "max"))


def _parse(text: str) -> int:
    return duration_seconds(text, signed=True)


def enable_ttls(config: dict[str, Any], kind: str = "mount") -> tuple[int, int]:
    """``(default_lease_ttl, max_lease_ttl)`` in seconds from an enable request's ``config`` map;
    ``kind`` is ``"mount"`` (``sys/mounts``) or ``"auth"`` (``sys/auth``) and names the map in the
    conversion error. Raises LogicalError 400 with the texts of the module doc."""
    for key, _ in _TTL_KEYS:
        value = config.get(key)
        if value is not None and not isinstance(value, str):  # a JSON number is its text (json.Number)
            raise user_error(f"unable to convert given {kind} config information")
    ttls = []
    for key, name in _TTL_KEYS:
        text = config.get(key) or ""
        if text in ("", "system"):
            ttls.append(0)
            continue
        try:
            ttls.append(_parse(text))
        except ConversionError as exc:
            raise user_error(f"unable to parse {name} TTL of {text}: {exc}") from None
    default_ttl, max_ttl = ttls
    if max_ttl != 0 and default_ttl > max_ttl:
        raise user_error("given default lease TTL greater than given max lease TTL")
    if default_ttl > SYSTEM_MAX_LEASE_TTL and max_ttl == 0:
        raise user_error(f"given default lease TTL greater than system max lease TTL of {SYSTEM_MAX_LEASE_TTL}")
    return default_ttl, max_ttl


def tune_ttls(default_text: str, max_text: str, current: tuple[int, int]) -> tuple[int, int]:
    """``(default_lease_ttl, max_lease_ttl)`` in seconds after a tune that sent ``default_text`` and
    ``max_text`` (the string fields' values; ``""`` keeps the current value, ``"system"`` is 0) to a mount
    whose values are ``current``. Raises LogicalError 400 with the texts of the module doc."""
    tuned = []
    for text, now in zip((default_text, max_text), current, strict=True):
        if text == "":
            tuned.append(now)
        elif text == "system":
            tuned.append(0)
        else:
            try:
                tuned.append(_parse(text))
            except ConversionError as exc:
                raise user_error(str(exc)) from None
    default_ttl, max_ttl = tuned
    if (default_ttl, max_ttl) != tuple(current) and default_ttl and max_ttl and max_ttl < default_ttl:
        raise user_error(f"backend max lease TTL of {max_ttl} would be less than backend default lease TTL "
                         f"of {default_ttl}")
    return default_ttl, max_ttl
