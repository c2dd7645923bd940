"""YAML seed files -> calls on the backends.

A seed file is a YAML mapping with up to two top-level sections::

    scheduler:        # see pytest_schedpki.scheduler.seed
      tokens: [...]
      auth_methods: [...]
    secrets:          # see pytest_schedpki.secrets.seed
      ...

Files are read with ``yaml.safe_load``. Every problem raises :class:`~pytest_schedpki.errors.SeedError`
naming the file, the entry and the problem.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .errors import SeedError

if TYPE_CHECKING:  # pragma: no cover
    from .double import Double

SECTIONS = ("scheduler", "secrets")


def load_seed_file(path: str | os.PathLike) -> dict[str, Any]:
    """Read and parse a YAML seed file; returns the top-level mapping (``{}`` for an empty file).

    Raises SeedError for a missing or unreadable file, a YAML syntax error, or a top level that is
    not a mapping.
    """
    import yaml  # only when a seed file is read: it costs ~8 ms of start-up

    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise SeedError(source, "", f"cannot read file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise SeedError(source, "", f"invalid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SeedError(source, "", f"the top level must be a mapping, got {type(data).__name__}")
    return data


def apply_seed(double: Double, data: dict[str, Any], source: str = "<dict>") -> None:
    """Apply a parsed seed mapping to ``double``'s backends.

    Unknown top-level sections raise SeedError (a typo would otherwise silently seed nothing).
    """
    if not isinstance(data, dict):
        raise SeedError(source, "", f"the top level must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in SECTIONS:
            raise SeedError(source, str(key), f"unknown section; expected one of: {', '.join(SECTIONS)}")
    from .scheduler.seed import apply_scheduler_seed
    from .secrets.seed import apply_secrets_seed

    if data.get("scheduler") is not None:
        apply_scheduler_seed(double.scheduler, data["scheduler"], source)
    if data.get("secrets") is not None:
        apply_secrets_seed(double.secrets, data["secrets"], source)


def seed_from(double: Double, seed: str | os.PathLike | dict[str, Any]) -> None:
    """Seed ``double`` from a file path or an already parsed mapping."""
    if isinstance(seed, dict):
        apply_seed(double, seed, "<dict>")
    else:
        apply_seed(double, load_seed_file(seed), os.fspath(seed))
