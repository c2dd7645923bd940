"""The double itself as the page shows it: the request journal (newest first, filtered; bodies as the
journal redacts them), the faults with their hit counts, the clock, the seeds loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..journal import REDACTED, redact

if TYPE_CHECKING:  # pragma: no cover
    from ..clock import SwitchableClock
    from ..faults import FaultSet
    from ..journal import Journal

JOURNAL_ROWS = 200  # newest entries the page shows at most
HIDDEN_VALUE = "<hidden: a KV value or wrapped response; the KV view shows values one at a time>"
_FAULT_FIELDS = ("service", "method", "path", "status", "body", "content_type", "latency", "drop", "hang", "times",
                 "probability", "seed")


def journal_view(journal: Journal, service: str = "", path: str = "", status: str = "",
                 limit: int = JOURNAL_ROWS, hidden_prefixes: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"entries": [{"time", "service", "method", "path", "query", "status", "duration_ms",
    "token_kind", "body", "response"}], "kept", "evicted", "recorded", "redacting"}``: the newest
    ``limit`` entries of ``service`` (``""``: both) whose path contains ``path`` and whose status is
    ``status`` (``""``: any; not a number: none). Bodies come redacted even from a journal told not to
    redact (``Journal(redact=False)``): the page is not a test's assertion."""
    try:
        wanted = int(status) if status.strip() else None
    except ValueError:
        return {"entries": [], "kept": len(journal), "evicted": journal.evicted,
                "recorded": journal.recorded, "redacting": journal.redact, "error": f"status {status!r} is not a number"}
    found = journal.newest(max(1, min(limit, JOURNAL_ROWS)), service or None, path or None, wanted)
    entries = []
    for e in found:
        hide = e.service == "secrets" and e.path.startswith(hidden_prefixes)
        entries.append({"time": e.time.isoformat().replace("+00:00", "Z"), "service": e.service, "method": e.method,
                        "path": e.path, "query": redact(e.query), "status": e.status,
                        "duration_ms": round(e.duration * 1000, 3), "token_kind": e.token_kind,
                        "body": HIDDEN_VALUE if hide and e.body else _safe(e.body),
                        "response": HIDDEN_VALUE if hide and e.response else _safe(e.response)})
    return {"entries": entries, "kept": len(journal), "evicted": journal.evicted,
            "recorded": journal.recorded, "redacting": journal.redact}


def _safe(value: Any) -> Any:
    """A journal body with secrets redacted (a string body is kept only when the journal already
    redacted it: it is then text the journal's own rules cleaned)."""
    if isinstance(value, str):
        from ..journal import redact_text

        return redact_text(value)
    try:
        return redact(value)
    except RecursionError:
        return REDACTED


def faults_view(faults: FaultSet) -> list[dict[str, Any]]:
    """The active faults: their fields, ``hits`` (times fired), ``matched`` (requests matched) and
    ``exhausted``, in the order they match."""
    return [{name: getattr(f, name) for name in _FAULT_FIELDS}
            | {"hits": f.hits, "matched": f.matched, "exhausted": f.exhausted} for f in faults.all()]


def _hidden(service) -> tuple[str, ...]:
    """The request paths whose bodies hold values: every KV mount's, and response wrapping's."""
    with service.lock:
        mounts = [path for path, mount in service.mounts.items() if mount.type in ("kv", "generic", "cubbyhole")]
    return (*(f"/v1/{path}" for path in mounts), "/v1/sys/wrapping/")


def clock_view(clock: SwitchableClock) -> dict[str, Any]:
    """``{"mode": "follow"|"real"|"manual", "now": RFC 3339 UTC}``."""
    return {"mode": clock.mode, "now": clock.now().isoformat().replace("+00:00", "Z")}


def double_view(target: Any, service: str = "", path: str = "", status: str = "") -> dict[str, Any]:
    """``{"journal", "faults", "clock", "seeds", "tls", "control_token"}`` of a double (``seeds``: what
    :meth:`~pytest_schedpki.double.Double.seed` loaded, oldest first; ``control_token``: whether one is
    required, never its value)."""
    return {"journal": journal_view(target.journal, service, path, status, hidden_prefixes=_hidden(target.secrets)),
            "faults": faults_view(target.faults),
            "clock": clock_view(target.clock), "seeds": list(getattr(target, "seeds_loaded", [])),
            "tls": getattr(target, "tls", None) is not None, "control_token": bool(getattr(target, "control_token", None))}
