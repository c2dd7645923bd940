"""KV version 2: ``data/:path`` and ``subkeys/:path`` (upstream ``path_data.go``, ``path_subkeys.go``).

* read (``version`` 0 = the current one): 404 ``{"errors":[]}`` for an unknown key or version; a
  deleted or destroyed version answers 404 *with* ``data: {"data": null, "metadata": {...}}``;
* write: ``data`` (required: 400 ``no data provided``), ``options.cas`` (400 ``error parsing
  check-and-set parameter`` / ``check-and-set parameter required for this call`` when the config or
  the key sets ``cas_required`` / ``check-and-set parameter did not match the current version``);
  versions beyond ``max_versions`` are removed, ``deletion_time`` follows ``delete_version_after``;
* PATCH: an RFC 7386 merge patch onto the current version, written as a new version (404 with no
  body for an unknown key; 404 with the version's metadata as ``data`` when it is deleted);
* DELETE: soft-deletes the current version (204 whatever the state);
* subkeys: the key tree of a version with every leaf ``null``, cut at ``depth`` (0 = no limit).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import ANY, INT, STRING, ConversionError, Field, to_int
from pytest_schedpki.secrets.framework.logical import (
    JSON_HEADERS,
    LogicalError,
    LogicalResponse,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .inputs import map_input, merge_patch, plain
from .model import DEFAULT_MAX_VERSIONS, KeyMetadata, Version

if TYPE_CHECKING:  # pragma: no cover
    from .backend import KvBackend


def _backend(req: LogicalRequest) -> KvBackend:
    return req.mount.backend  # type: ignore[union-attr,return-value]


def max_versions(backend: KvBackend, meta: KeyMetadata) -> int:
    """The versions a key keeps: the larger of the config's and the key's ``max_versions``, 10 when
    both are 0 (measured on OpenBao 2.7.2: a key setting below the config's does not lower it)."""
    limit = max(backend.state.config.max_versions, meta.max_versions)
    return limit or DEFAULT_MAX_VERSIONS


def delete_after(backend: KvBackend, meta: KeyMetadata) -> int:
    """Seconds after which a new version is deleted (0: never): the smaller positive of the key's
    and the config's ``delete_version_after``."""
    candidates = [s for s in (meta.delete_version_after, backend.state.config.delete_version_after) if s > 0]
    return min(candidates) if candidates else 0


def check_cas(backend: KvBackend, meta: KeyMetadata | None, options: dict[str, Any]) -> None:
    """The check-and-set rules of a data write or patch (400 texts in the module docstring)."""
    sent = "cas" in options and options["cas"] is not None
    cas = 0
    if sent:
        try:
            cas = to_int(options["cas"])
        except ConversionError:
            raise user_error("error parsing check-and-set parameter") from None
    required = backend.state.config.cas_required or (meta is not None and meta.cas_required)
    if required and not sent:
        raise user_error("check-and-set parameter required for this call")
    current = meta.current_version if meta is not None else 0
    if sent and cas != current:
        raise user_error("check-and-set parameter did not match the current version")


def add_version(backend: KvBackend, key: str, meta: KeyMetadata, data: dict[str, Any]) -> int:
    """Store ``data`` as the next version of ``key`` and drop the versions beyond the limit."""
    now = backend.now()
    meta.current_version += 1
    version = meta.current_version
    after = delete_after(backend, meta)
    deletion = now + datetime.timedelta(seconds=after) if after else None
    meta.versions[version] = Version(created=now, deletion=deletion)
    meta.updated = now
    backend.state.data[(key, version)] = data
    backend.state.metadata[key] = meta
    limit = max_versions(backend, meta)
    if meta.current_version - limit >= meta.oldest_version:
        last = meta.current_version - limit
        for old in range(meta.oldest_version, last + 1):
            meta.versions.pop(old, None)
            backend.state.data.pop((key, old), None)
        meta.oldest_version = last + 1
    backend.journal_event("write", key, version)
    return version


def version_block(meta: KeyMetadata, version: int) -> dict[str, Any]:
    """The ``metadata`` block of a data read, a write's ``data``, subkeys' ``metadata``."""
    return meta.versions[version].describe(version, dict(meta.custom_metadata) if meta.custom_metadata else None)


def no_body_404() -> LogicalError:
    """404 with an empty body: what a PATCH of an unknown key or metadata gets."""
    return LogicalError(404, [], body=b"", headers={"Content-Type": "application/json", **JSON_HEADERS})


def _options(req: LogicalRequest) -> dict[str, Any]:
    return map_input("options", req.data.get("options")) if req.data.sent("options") else {}


def _read_version(req: LogicalRequest, key: str, requested: int) -> tuple[KeyMetadata, int, LogicalResponse | None]:
    """The key's metadata and the version to serve; a third item (the 404 answer) when it is gone."""
    backend = _backend(req)
    meta = backend.state.metadata.get(key)
    if meta is None:
        raise not_found()
    version = requested or meta.current_version
    record = meta.versions.get(version)
    if record is None:
        raise not_found()
    if record.destroyed or record.deleted(backend.now()):
        gone = LogicalResponse(data={"data": None, "metadata": version_block(meta, version)}, status=404)
        return meta, version, gone
    return meta, version, None


def storage_key(req: LogicalRequest) -> str:
    """The key a request names, as the plugin's ``path.Join(metadataPrefix, key)`` stores it: a
    trailing ``/`` dropped (``data/a/`` reads and deletes ``a``'s metadata)."""
    return req.data.get("path").rstrip("/")


def _version_data_check(req: LogicalRequest, key: str) -> None:
    """A version's data is stored under a hash of the key as sent: for ``a/`` none is found once the
    metadata of ``a`` says the version is live (500 ``could not find version data``, as OpenBao)."""
    if req.data.get("path") != key:
        raise internal_error("could not find version data")


def read_data(req: LogicalRequest) -> LogicalResponse:
    key = storage_key(req)
    meta, version, gone = _read_version(req, key, req.data.get("version"))
    if gone is not None:
        return gone
    _version_data_check(req, key)
    backend = _backend(req)
    backend.journal_event("read", key, version)
    data = backend.state.data[(key, version)]
    return LogicalResponse(data={"data": plain(dict(data)), "metadata": version_block(meta, version)})


def write_data(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    if not req.data.sent("data"):
        raise user_error("no data provided")
    data = map_input("data", req.data.get("data"))
    options = _options(req)
    meta = backend.state.editable(key)
    check_cas(backend, meta, options)
    if meta is None:
        now = backend.now()
        meta = KeyMetadata(created=now, updated=now)
    version = add_version(backend, key, meta, data)
    return LogicalResponse(data=version_block(meta, version))


def patch_data(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    if not req.data.sent("data"):
        raise user_error("no data provided")
    patch = map_input("data", req.data.get("data"))
    options = _options(req)
    meta = backend.state.editable(key)
    if meta is None or meta.current_version not in meta.versions:
        raise no_body_404()
    check_cas(backend, meta, options)
    current = meta.versions[meta.current_version]
    if current.destroyed or current.deleted(backend.now()):
        return LogicalResponse(data=version_block(meta, meta.current_version), status=404)
    merged = merge_patch(backend.state.data[(key, meta.current_version)], patch)
    version = add_version(backend, key, meta, merged)
    return LogicalResponse(data=version_block(meta, version))


def delete_data(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = storage_key(req)
    meta = backend.state.editable(key)
    if meta is not None:
        record = meta.versions.get(meta.current_version)
        now = backend.now()
        if record is not None and not record.destroyed and not record.deleted(now):
            record.deletion = now
            backend.journal_event("delete", key, meta.current_version)
    return LogicalResponse(status=204)


def _subkeys(value: dict[str, Any], depth: int, level: int = 1) -> dict[str, Any]:
    """Keys of ``value`` down to ``depth`` levels (0: all); leaves and empty objects are ``None``."""
    return {k: _subkeys(v, depth, level + 1) if isinstance(v, dict) and v and (not depth or level < depth) else None
            for k, v in value.items()}


def read_subkeys(req: LogicalRequest) -> LogicalResponse:
    depth = req.data.get("depth")
    if depth < 0:  # the live server answers a negative depth like depth=1
        depth = 1
    key = storage_key(req)
    meta, version, gone = _read_version(req, key, req.data.get("version"))
    if gone is not None:
        assert gone.data is not None
        gone.data = {"metadata": gone.data["metadata"], "subkeys": None}
        return gone
    _version_data_check(req, key)
    data = _backend(req).state.data[(key, version)]
    return LogicalResponse(data={"subkeys": _subkeys(plain(dict(data)), depth), "metadata": version_block(meta, version)})


def key_exists(backend: KvBackend, captures: dict[str, str]) -> bool:
    """The existence check of ``data/:path`` and ``metadata/:path`` (``create`` vs ``update``)."""
    return captures.get("path", "") in backend.state.metadata


def paths(backend: KvBackend) -> list[Path]:
    """The ``data/`` and ``subkeys/`` routes of a version-2 mount."""
    return [
        Path("data/(?P<path>.*)", {"path": Field(STRING), "version": Field(INT), "data": Field(ANY),
                                  "options": Field(ANY)},
             {"read": read_data, "update": write_data, "patch": patch_data, "delete": delete_data},
             existence=key_exists),
        Path("subkeys/(?P<path>.*)", {"path": Field(STRING), "version": Field(INT), "depth": Field(INT)},
             {"read": read_subkeys}),
    ]


__all__ = ["paths", "no_body_404", "add_version", "check_cas", "version_block", "key_exists"]
