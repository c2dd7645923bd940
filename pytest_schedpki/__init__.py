"""pytest-schedpki: a test double of Nomad's ACL auth methods API and the Vault/OpenBao PKI engine.

Public names:

* :class:`Double` - both services' state and listeners (what the plugin and ``schedpki serve`` run).
* :class:`SeedError` - raised for an invalid seed file or mapping.
* :class:`FollowClock`, :class:`ManualClock`, :class:`RealClock` - the double's time sources.
* :class:`Fault` - an injected fault (``schedpki.faults.add(Fault(...))``).
* :class:`JournalEntry`, :class:`IssuedCertificate` - what the journal and ``schedpki.certs`` return.
"""

from .clock import FollowClock, ManualClock, RealClock
from .double import Double
from .errors import SeedError
from .faults import Fault
from .journal import JournalEntry
from .testing import IssuedCertificate

__all__ = ["Double", "SeedError", "FollowClock", "ManualClock", "RealClock", "Fault", "JournalEntry", "IssuedCertificate"]
__version__ = "0.1.0"
