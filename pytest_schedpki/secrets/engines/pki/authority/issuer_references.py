"""Warnings about roles left pointing at an issuer reference that changes (OpenBao's
``addWarningOnDereferencing``): ``<N> roles reference <ref>`` for each reference that ``N > 0``
roles name in their ``issuer_ref``.

Given on ``DELETE issuer/:ref`` (for the deleted issuer's id and name; then, when it was the default,
the ``Deleted issuer ...`` warning and ``default``) and when an update renames an issuer (its old
name).
"""

from __future__ import annotations

from typing import Any


def dereference_warnings(state: Any, refs: list[str]) -> list[str]:
    """One warning per reference in ``refs`` (in that order) that some roles of ``state`` name;
    empty references are skipped. A role without ``issuer_ref`` names ``default``."""
    warnings = []
    for ref in refs:
        if not ref:
            continue
        count = sum(1 for role in state.roles.values() if (getattr(role, "issuer_ref", "") or "default") == ref)
        if count:
            warnings.append(f"{count} roles reference {ref}")
    return warnings


def deletion_warnings(state: Any, issuer: Any, ref: str, was_default: bool) -> list[str]:
    """The warnings of ``DELETE issuer/:ref`` once ``issuer`` (reached through ``ref``) is gone."""
    warnings = dereference_warnings(state, [issuer.issuer_id, issuer.issuer_name])
    if was_default:
        warnings.append(f"Deleted issuer {issuer.issuer_id} (via issuer_ref {ref}); this was configured as the "
                        "default issuer. Operations without an explicit issuer will not work until a new default "
                        "is configured.")
        warnings += dereference_warnings(state, ["default"])
    return warnings
