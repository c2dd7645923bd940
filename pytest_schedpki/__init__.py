"""pytest-schedpki: a test double of Nomad's ACL auth methods API and the Vault/OpenBao PKI engine.

Public names:

* :class:`Double` - both services' state and listeners (what the plugin and ``schedpki serve`` run).
* :class:`SeedError` - raised for an invalid seed file or mapping.
* :class:`FollowClock`, :class:`ManualClock`, :class:`RealClock` - the double's time sources.
* :class:`Fault` - an injected fault (``schedpki.faults.add(Fault(...))``).
* :class:`JournalEntry`, :class:`IssuedCertificate` - what the journal and ``schedpki.certs`` return.

Layout (docs/architecture.md): the user surface (``plugin``, ``handle``, ``factories``, ``testing``,
``sso_testing``, ``cli``) over the double's core (``double``, ``seed``, ``control``, ``clock``,
``journal``, ``faults``, ``errors``) over the services (``scheduler/``, ``secrets/``) over the
foundations (``wire/``, ``golang/``). Imports point down, never in a cycle; each sub-package's
docstring says what it may import.
"""

from .clock import FollowClock, ManualClock, RealClock
from .errors import SeedError
from .faults import Fault
from .journal import JournalEntry

__all__ = ["Double", "SeedError", "FollowClock", "ManualClock", "RealClock", "Fault", "JournalEntry", "IssuedCertificate"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """``Double`` and ``IssuedCertificate`` are imported on first use: ``Double`` brings werkzeug,
    both services and cryptography's X.509 layer (~100 ms), which ``schedpki serve`` imports only
    after it has set its RSA key pool going (see :mod:`.cli`); ``IssuedCertificate``'s module loads
    ``cryptography``."""
    if name == "Double":
        from .double import Double

        return Double
    if name == "IssuedCertificate":
        from .testing import IssuedCertificate

        return IssuedCertificate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
