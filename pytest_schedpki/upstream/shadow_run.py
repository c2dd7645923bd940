"""Shadow mode's session: a real server that mirrors the double, and the per-test comparison.

``--schedpki-shadow=bao`` (or a URL with ``--schedpki-shadow-token``; ini ``schedpki_shadow``,
``schedpki_shadow_token``) starts or connects to the real server and applies the session's seeds to
it over HTTP; the ``schedpki`` fixture's secrets URL becomes the :class:`~.shadow.ShadowRecorder` in
front of the double. At each test's setup the real server is reset like in upstream mode and the
marker's seeds are applied to it too; at teardown the test's secrets requests are replayed against it
and every difference is reported with the request and both answers: the test fails
(``schedpki_shadow_mode = fail``, the default) or gets a :class:`ShadowDifferenceWarning` (``warn``).
What each test's comparison covered (:class:`ShadowResult`) is kept for the run's summary
(:mod:`.run_report`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

from ..double import Double
from .client import Client
from .session import UpstreamSession
from .settings import UpstreamSettings
from .shadow import IdMap, ShadowRecorder, align_seeded, replay


class ShadowDifferenceWarning(UserWarning):
    """The double and the real server answered a request of the test differently."""


@dataclass
class ShadowResult:
    """What the comparison of one test covered: ``total`` secrets requests recorded, the first
    ``compared`` of them replayed and compared, ``differences`` among those, and ``stopped`` (why
    the rest were not compared: the request and the double-only knob in force; ``""`` when all were)."""

    total: int
    compared: int
    differences: int
    stopped: str = ""


class ShadowSession:
    """The real server (an :class:`~.session.UpstreamSession` in mirror mode) and the recorder."""

    def __init__(self, target: str, token: str, double: Double, seeds: list[str], mode: str = "fail"):
        if mode not in ("fail", "warn"):
            raise ValueError(f"schedpki_shadow_mode must be 'fail' or 'warn', got {mode!r}")
        self.mode = mode
        self.double = double
        self.real = UpstreamSession(UpstreamSettings(secrets=target, secrets_token=token), double, seeds, mirror=True)
        self.recorder: ShadowRecorder | None = None
        self.idmap = IdMap()
        self.stopped_reason = ""
        self.last: ShadowResult | None = None  # the running (or last finished) test's comparison

    @property
    def url(self) -> str:
        return self.recorder.url

    def start(self) -> ShadowSession:
        self.real.start()
        self.recorder = ShadowRecorder(self.double).start()
        return self

    def stop(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()
        self.real.stop()

    def begin_test(self, marker_seeds: list[str | os.PathLike | dict[str, Any]]) -> None:
        """Reset the real server, apply the marker's seeds to it, forget the last test's exchanges."""
        self.real.reset()
        for seed in marker_seeds:
            self.real.seed(seed)
        self.last = None
        self.recorder.clear()
        self.idmap = IdMap()  # the seeded issuers of both sides, paired while both are at the baseline
        align_seeded(self.idmap, Client(self.double.secrets_url, self.double.root_token), self.real.secrets)
        self.double.journal.clear()  # those reads are not the test's

    def finish_test(self) -> list[str]:
        """Replay the test's exchanges; returns the report lines of the differences (empty: none)
        and keeps what was compared in :attr:`last`."""
        exchanges = list(self.recorder.exchanges)
        if not exchanges:
            self.last = ShadowResult(0, 0, 0)
            return []
        differences, self.stopped_reason = replay(exchanges, self.real.secrets, self.idmap, self.double.root_token)
        compared = next((i for i, ex in enumerate(exchanges) if ex.stop), len(exchanges))
        self.last = ShadowResult(len(exchanges), compared, len(differences), self.stopped_reason)
        if any(ex.method not in ("GET", "HEAD", "LIST", "OPTIONS") for ex in exchanges):
            self.real.dirty = True
        return [d.describe() for d in differences]

    def report(self, lines: list[str], nodeid: str) -> str | None:
        """Fail text, or None after warning (warn mode) or when there is nothing to say."""
        if not lines:
            return None
        text = (f"schedpki shadow mode: {len(lines)} answer(s) of the double differ from the real server "
                f"({self.real.settings.secrets}) in {nodeid}:\n" + "\n".join(lines))
        if self.mode == "warn":
            warnings.warn(ShadowDifferenceWarning(text), stacklevel=2)
            return None
        return text


def shadow_handle(session: ShadowSession):
    """The test's handle in shadow mode: the double's, with the secrets URL of the recorder and
    ``seed()`` applied to both the double and the real server."""
    from ..handle import SchedpkiHandle, ServiceHandle

    class ShadowHandle(SchedpkiHandle):
        def seed(self, seed):
            super().seed(seed)
            session.real.seed(self.resolve_seed(seed))

    class _Factories:
        """The secrets factories write into the double only: the comparison ends at their first use."""

        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            session.recorder.knob_used = session.recorder.knob_used or f"factories.secrets.{name}() before it"
            return getattr(self._inner, name)

    handle = ShadowHandle(session.double)
    handle.secrets = ServiceHandle(session.url, session.double.root_token, session.double.secrets)
    handle.factories.secrets = _Factories(handle.factories.secrets)
    handle.shadow = session
    return handle
