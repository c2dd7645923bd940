"""pytest-schedpki: a test double of Nomad's ACL auth methods API and the Vault/OpenBao PKI engine.

Public names:

* :class:`Double` - both services' state and listeners (what the plugin and ``schedpki serve`` run).
* :class:`SeedError` - raised for an invalid seed file or mapping.
* :class:`FollowClock`, :class:`ManualClock`, :class:`RealClock` - the double's time sources.
* :class:`Fault` - an injected fault (``schedpki.faults.add(Fault(...))``).
* :class:`JournalEntry`, :class:`IssuedCertificate` - what the journal and ``schedpki.certs`` return.
* :class:`SchedpkiHandle` - the ``schedpki`` fixture's value (for type annotations).
* :class:`LoginError` - a login the scheduler refused (``schedpki.scheduler.login*``/``oidc_login``).
* :class:`UnusedFaultWarning` - the plugin's warning about a fault no request of the test matched.

Layout (docs/architecture.md): the user surface (``plugin``, ``handle``, ``factories``, ``testing``,
``sso_testing``, ``cli``) over the double's core (``double``, ``seed``, ``control``, ``clock``,
``journal``, ``faults``, ``errors``) over the services (``scheduler/``, ``secrets/``) over the
foundations (``wire/``, ``golang/``). Imports point down, never in a cycle; each sub-package's
docstring says what it may import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .clock import FollowClock, ManualClock, RealClock
from .errors import SeedError
from .faults import Fault, UnusedFaultWarning
from .journal import JournalEntry

if TYPE_CHECKING:  # type checkers see the real classes; at run time they are imported on first use
    from .double import Double
    from .handle import SchedpkiHandle
    from .sso_testing import LoginError
    from .testing import IssuedCertificate

__all__ = ["Double", "SeedError", "FollowClock", "ManualClock", "RealClock", "Fault", "UnusedFaultWarning",
           "JournalEntry", "IssuedCertificate", "SchedpkiHandle", "LoginError"]
__version__ = "0.1.0"

def __getattr__(name: str) -> Any:
    """``Double``, ``SchedpkiHandle``, ``IssuedCertificate`` and ``LoginError`` are imported on first
    use: ``Double`` (and the handle, which holds one) brings werkzeug, both services and
    cryptography's X.509 layer (~100 ms), which ``schedpki serve`` imports only after it has set its
    RSA key pool going (see :mod:`.cli`); ``IssuedCertificate``'s module loads ``cryptography``.
    (Plain imports, so that tests/core/test_architecture.py sees them.)"""
    if name == "Double":
        from .process.collector import paused

        with paused():  # ~20,000 long-lived objects: no collection to find nothing (process/collector.py)
            from .double import Double

        return Double
    if name == "IssuedCertificate":
        from .testing import IssuedCertificate

        return IssuedCertificate
    if name == "SchedpkiHandle":
        from .handle import SchedpkiHandle

        return SchedpkiHandle
    if name == "LoginError":
        from .sso_testing import LoginError

        return LoginError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
