"""Seed files applied over HTTP to a real server (upstream mode).

The same YAML as for the double (``pytest_schedpki.secrets.seed`` and
``pytest_schedpki.scheduler.seed`` describe the schema); each entry becomes the API request the
double's seeding makes in-process, sent to the real server with its root or management token. The
first refusal raises :class:`~pytest_schedpki.errors.SeedError` naming the file, the entry and the
server's error text. Scheduler tokens cannot be seeded into a real Nomad (it chooses the ids): such an
entry raises SeedError saying so.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..errors import SeedError
from ..secrets.seed import SeedCall, walk_secrets_seed
from ..seed import SECTIONS, default_seed_path, is_default_seed, load_seed_file
from .client import Client, UpstreamError


def read_seed(seed: str | os.PathLike | dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``(mapping, source name)`` of a seed given as a path, ``"default"`` or a mapping."""
    if isinstance(seed, dict):
        return seed, "<dict>"
    if is_default_seed(seed):
        seed = default_seed_path()
    data = load_seed_file(seed)
    for key in data:
        if key not in SECTIONS:
            raise SeedError(os.fspath(seed), str(key), f"unknown section; expected one of: {', '.join(SECTIONS)}")
    return data, os.fspath(seed)


KV_UPGRADING = "Upgrading from non-versioned to versioned data"  # a KV v2 mount's first moments (OpenBao's kv plugin)
KV_UPGRADE_WAIT = 30.0  # seconds a seed request waits for a new KV version 2 mount to finish its upgrade


def _send(client: Client, source: str, entry: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
    """Send one seed request; a 400 ``Upgrading from non-versioned to versioned data...`` (a KV
    version 2 mount just enabled: the real server runs its upgrade in the background) is sent again
    every 50 ms for up to :data:`KV_UPGRADE_WAIT` seconds. Any other refusal raises SeedError."""
    deadline = time.monotonic() + KV_UPGRADE_WAIT
    while True:
        try:
            return client.call(method, path, body).data()
        except UpstreamError as exc:
            if exc.answer.status == 400 and KV_UPGRADING in str(exc) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise SeedError(source, entry, str(exc)) from None


def _mapping(value: Any, source: str, entry: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SeedError(source, entry, f"expected a mapping, got {type(value).__name__}")
    return dict(value)


def _list(value: Any, source: str, entry: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SeedError(source, entry, f"expected a list, got {type(value).__name__}")
    return value


_METHODS = {"update": "POST", "patch": "PATCH", "read": "GET", "delete": "DELETE", "list": "LIST"}


def http_caller(client: Client, source: str) -> SeedCall:
    """A :data:`~pytest_schedpki.secrets.seed.SeedCall` over HTTP: each operation becomes the request
    the CLI would send (``update`` -> POST, ``patch`` -> PATCH with a merge-patch body)."""
    def call(entry: str, operation: str, path: str, data: dict[str, Any]) -> dict[str, Any]:
        return _send(client, source, entry, _METHODS[operation], f"/v1/{path}", data)

    return call


def apply_secrets_seed_http(client: Client, section: Any, source: str) -> None:
    """Apply a ``secrets:`` section to a real Vault/OpenBao through ``client`` (root token): the same
    checks and calls as for the double (:func:`~pytest_schedpki.secrets.seed.walk_secrets_seed`)."""
    walk_secrets_seed(http_caller(client, source), section, source)


def apply_scheduler_seed_http(client: Client, section: Any, source: str) -> None:
    """Apply a ``scheduler:`` section to a running Nomad agent (management token): auth methods are
    created with ``PUT /v1/acl/auth-method``. Tokens raise SeedError (a real Nomad picks their ids)."""
    section = _mapping(section, source, "scheduler")
    unknown = set(section) - {"tokens", "auth_methods"}
    if unknown:
        raise SeedError(source, f"scheduler.{sorted(unknown)[0]}", "unknown key; expected tokens or auth_methods")
    if section.get("tokens"):
        raise SeedError(source, "scheduler.tokens", "tokens cannot be seeded into a scheduler upstream "
                        "(a real Nomad chooses SecretID and AccessorID); create them with the ACL token API")
    for i, raw in enumerate(_list(section.get("auth_methods"), source, "scheduler.auth_methods")):
        entry = f"scheduler.auth_methods[{i}]"
        method = _mapping(raw, source, entry)
        try:
            client.call("PUT", "/v1/acl/auth-method", method)
        except UpstreamError as exc:
            raise SeedError(source, entry, str(exc)) from None
