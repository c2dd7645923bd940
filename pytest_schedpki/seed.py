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
from typing import TYPE_CHECKING, Any, Protocol

from .errors import SeedError

if TYPE_CHECKING:  # pragma: no cover
    from .scheduler.state import SchedulerState
    from .secrets.service import SecretsService


class Seedable(Protocol):
    """What a seed is applied to: both services' state (a :class:`~pytest_schedpki.double.Double`)."""

    scheduler: SchedulerState
    secrets: SecretsService


SECTIONS = ("scheduler", "secrets")
DEFAULT_SEED = "default"  # names the packaged seed wherever a seed path is accepted


def default_seed_path() -> str:
    """Path of the packaged ``default_seed.yaml`` (what ``schedpki serve`` loads without ``--seed``,
    and what the seed name ``"default"`` means: ini ``schedpki_seed = default``, marker
    ``seed="default"``, ``schedpki.seed("default")``, ``--seed default``)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "default_seed.yaml")
    if os.path.exists(path):
        return path
    from importlib import resources  # a zipped install: slower, so only when needed

    return str(resources.files("pytest_schedpki").joinpath("default_seed.yaml"))


def is_default_seed(seed: object) -> bool:
    """Whether ``seed`` is the name of the packaged seed (the string ``"default"``)."""
    return isinstance(seed, str) and seed == DEFAULT_SEED


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


def apply_seed(double: Seedable, data: dict[str, Any], source: str = "<dict>") -> None:
    """Apply a parsed seed mapping to ``double``'s backends.

    Unknown top-level sections raise SeedError (a typo would otherwise silently seed nothing).
    """
    if not isinstance(data, dict):
        raise SeedError(source, "", f"the top level must be a mapping, got {type(data).__name__}")
    for key in data:
        if key not in SECTIONS:
            raise SeedError(source, str(key), f"unknown section; expected one of: {', '.join(SECTIONS)}")
    if data.get("scheduler") is not None:
        from .scheduler.seed import apply_scheduler_seed  # the services: imported by whoever seeds them

        apply_scheduler_seed(double.scheduler, data["scheduler"], source)
    if data.get("secrets") is not None:
        from .secrets.seed import apply_secrets_seed

        apply_secrets_seed(double.secrets, data["secrets"], source)


def seed_from(double: Seedable, seed: str | os.PathLike | dict[str, Any]) -> None:
    """Seed ``double`` from a file path, ``"default"`` (the packaged seed: :func:`default_seed_path`)
    or an already parsed mapping."""
    if is_default_seed(seed):
        seed = default_seed_path()
    if isinstance(seed, dict):
        apply_seed(double, seed, "<dict>")
    else:
        apply_seed(double, load_seed_file(seed), os.fspath(seed))
