"""KV version 2: ``config``, ``metadata/:path`` and the version verbs ``delete/``, ``undelete/``,
``destroy/`` (upstream ``path_config.go``, ``path_metadata.go``, ``path_delete.go``,
``path_undelete.go``, ``path_destroy.go``).

* ``config``: ``max_versions`` (0 = 10), ``cas_required``, ``delete_version_after`` (read back as a
  Go duration string, ``"0s"`` when unset; a negative value is kept and, like 0, means never);
* ``metadata/:path``: read (404 for an unknown key), write (only the sent fields change; creates the
  key without versions; ``max_versions`` is stored as Go's ``uint32``, so ``-1`` reads back as
  4294967295), merge-PATCH, delete (every version and the metadata; 204 even for an unknown key),
  LIST of the children of a folder (404 ``{"errors":[]}`` when there are none);
* ``delete/``, ``undelete/``, ``destroy/``: ``versions`` (a list or comma-separated string of
  numbers) is required: 400 ``No version number provided`` (``no version number provided`` for
  destroy); versions that do not exist are skipped, an unknown key answers 204.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_schedpki.secrets.framework.fields import (
    ANY,
    BOOL,
    INT,
    STRING,
    ConversionError,
    Field,
    to_int,
)
from pytest_schedpki.secrets.framework.logical import LogicalResponse, not_found, user_error
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from .inputs import custom_metadata_input, duration_input, go_duration, merge_patch, typed_input, uint32
from .model import KeyMetadata, list_children, timestamp
from .v2_data import key_exists, no_body_404, storage_key

if TYPE_CHECKING:  # pragma: no cover
    from .backend import KvBackend


def _backend(req: LogicalRequest) -> KvBackend:
    return req.mount.backend  # type: ignore[union-attr,return-value]


# -- config --------------------------------------------------------------------------------------------
def read_config(req: LogicalRequest) -> LogicalResponse:
    config = _backend(req).state.config
    return LogicalResponse(data={"max_versions": config.max_versions, "cas_required": config.cas_required,
                                 "delete_version_after": go_duration(config.delete_version_after),
                                 "metadata_cas_required": config.metadata_cas_required})


def write_config(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    config = backend.state.config = replace(backend.state.config)
    if req.data.sent("max_versions"):
        config.max_versions = uint32(req.data.get("max_versions"))
    if req.data.sent("cas_required"):
        config.cas_required = req.data.get("cas_required")
    if req.data.sent("metadata_cas_required"):
        config.metadata_cas_required = req.data.get("metadata_cas_required")
    if req.data.sent("delete_version_after"):
        config.delete_version_after = duration_input("delete_version_after", req.raw.get("delete_version_after"))
    return LogicalResponse(status=204)


# -- metadata ------------------------------------------------------------------------------------------
def describe_metadata(meta: KeyMetadata) -> dict[str, Any]:
    """``data`` of ``GET metadata/:path``."""
    return {
        "cas_required": meta.cas_required,
        "created_time": timestamp(meta.created),
        "current_metadata_version": meta.metadata_version,
        "current_version": meta.current_version,
        "custom_metadata": dict(meta.custom_metadata) if meta.custom_metadata else None,
        "delete_version_after": go_duration(meta.delete_version_after),
        "max_versions": meta.max_versions,
        "metadata_cas_required": False,
        "oldest_version": meta.oldest_version,
        "updated_time": timestamp(meta.updated),
        "versions": {str(n): v.describe() for n, v in sorted(meta.versions.items())},
    }


def read_metadata(req: LogicalRequest) -> LogicalResponse:
    meta = _backend(req).state.metadata.get(storage_key(req))
    if meta is None:
        raise not_found()
    return LogicalResponse(data=describe_metadata(meta))


def list_metadata(req: LogicalRequest) -> LogicalResponse:
    keys = list_children(_backend(req).state.metadata, req.data.get("path"))
    if not keys:
        raise not_found()
    return LogicalResponse(data={"keys": keys})


def _apply(meta: KeyMetadata, values: dict[str, Any]) -> None:
    """Set the metadata fields present in ``values`` (raw request values, converted here with the
    plugin's own texts)."""
    if values.get("max_versions") is not None:
        meta.max_versions = uint32(typed_input("max_versions", INT, values["max_versions"]))
    if values.get("cas_required") is not None:
        meta.cas_required = typed_input("cas_required", BOOL, values["cas_required"])
    if values.get("delete_version_after") is not None:
        meta.delete_version_after = duration_input("delete_version_after", values["delete_version_after"])
    if "custom_metadata" in values:
        meta.custom_metadata = custom_metadata_input(values["custom_metadata"]) or None


def _check_metadata_cas(backend: KvBackend, meta: KeyMetadata, req: LogicalRequest) -> None:
    """``metadata_cas_required`` (config): OpenBao 2.7.2 then refuses every metadata write and patch
    with 400 ``metadata check-and-set parameter required for this call`` - a ``cas`` value in the
    body does not satisfy it (checked against the live server)."""
    if backend.state.config.metadata_cas_required:
        raise user_error("metadata check-and-set parameter required for this call")


def write_metadata(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    now = backend.now()
    meta = backend.state.editable(key) or KeyMetadata(created=now, updated=now)
    _check_metadata_cas(backend, meta, req)
    raw = {name: req.raw.get(name) for name in ("max_versions", "cas_required", "delete_version_after")}
    if req.raw.get("custom_metadata") is not None:
        raw["custom_metadata"] = req.raw["custom_metadata"]
    _apply(meta, raw)
    meta.updated = now
    meta.metadata_version += 1
    backend.state.metadata[key] = meta
    return LogicalResponse(status=204)


def patch_metadata(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = req.data.get("path")
    meta = backend.state.editable(key)
    if meta is None:
        raise no_body_404()
    _check_metadata_cas(backend, meta, req)
    values: dict[str, Any] = {}
    for name in ("max_versions", "cas_required", "delete_version_after"):
        if req.raw.get(name) is not None:
            values[name] = req.raw[name]
    if "custom_metadata" in req.raw:
        patch = req.raw["custom_metadata"]
        current = dict(meta.custom_metadata or {})
        values["custom_metadata"] = merge_patch(current, patch) if isinstance(patch, dict) else patch
    _apply(meta, values)
    meta.updated = backend.now()
    meta.metadata_version += 1
    return LogicalResponse(status=204)


def delete_metadata(req: LogicalRequest) -> LogicalResponse:
    backend = _backend(req)
    key = storage_key(req)
    meta = backend.state.metadata.pop(key, None)
    if meta is not None:
        for version in list(meta.versions):
            backend.state.data.pop((key, version), None)
        backend.journal_event("delete-metadata", key, None)
    return LogicalResponse(status=204)


# -- delete / undelete / destroy --------------------------------------------------------------------------
def _versions(req: LogicalRequest, missing: str) -> list[int]:
    raw = req.raw.get("versions")
    items = raw if isinstance(raw, list) else [p for p in str(raw).split(",")] if raw not in (None, "") else []
    numbers: list[int] = []
    for index, item in enumerate(items):
        try:
            numbers.append(to_int(item.strip() if isinstance(item, str) else item))
        except ConversionError as exc:
            why = "value out of range" if str(exc).endswith("value out of range") else "invalid syntax"
            reason = ("decoding failed due to the following error(s):\n\n"
                      f"'[{index}]' cannot parse value as 'int': strconv.ParseInt: {why}")
            raise user_error(f'Field validation failed: error converting input for field "versions": {reason}') from None
    if not numbers:
        raise user_error(missing)
    return numbers


def _verb(req: LogicalRequest, missing: str, change) -> LogicalResponse:
    versions = _versions(req, missing)
    backend = _backend(req)
    meta = backend.state.editable(req.data.get("path"))
    if meta is not None:
        now = backend.now()
        for number in versions:
            record = meta.versions.get(number)
            if record is not None:
                change(backend, req.data.get("path"), number, record, now)
    return LogicalResponse(status=204)


def _soft_delete(backend, key, number, record, now) -> None:
    if not record.destroyed and not record.deleted(now):
        record.deletion = now
        backend.journal_event("delete", key, number)


def _undelete(backend, key, number, record, now) -> None:
    if not record.destroyed:
        record.deletion = None
        backend.journal_event("undelete", key, number)


def _destroy(backend, key, number, record, now) -> None:
    record.destroyed = True
    backend.state.data.pop((key, number), None)
    backend.journal_event("destroy", key, number)


def delete_versions(req: LogicalRequest) -> LogicalResponse:
    return _verb(req, "No version number provided", _soft_delete)


def undelete_versions(req: LogicalRequest) -> LogicalResponse:
    return _verb(req, "No version number provided", _undelete)


def destroy_versions(req: LogicalRequest) -> LogicalResponse:
    return _verb(req, "no version number provided", _destroy)


# read by the handlers themselves (their conversion errors carry no "Field validation failed:")
_METADATA_FIELDS = {"path": Field(STRING), "max_versions": Field(ANY), "cas_required": Field(ANY),
                    "delete_version_after": Field(ANY), "custom_metadata": Field(ANY), "cas": Field(ANY)}
_VERSIONS_FIELDS = {"path": Field(STRING), "versions": Field(ANY)}


def paths(backend: KvBackend) -> list[Path]:
    """The ``config``, ``metadata/`` and version-verb routes of a version-2 mount."""
    return [
        Path("config", {"max_versions": Field(INT), "cas_required": Field(BOOL), "delete_version_after": Field(ANY),
                       "metadata_cas_required": Field(BOOL)},
             {"read": read_config, "update": write_config}),
        Path("metadata/(?P<path>.*)", _METADATA_FIELDS,
             {"read": read_metadata, "update": write_metadata, "patch": patch_metadata, "delete": delete_metadata,
              "list": list_metadata},
             existence=key_exists),
        Path("delete/(?P<path>.*)", _VERSIONS_FIELDS, {"update": delete_versions}),
        Path("undelete/(?P<path>.*)", _VERSIONS_FIELDS, {"update": undelete_versions}),
        Path("destroy/(?P<path>.*)", _VERSIONS_FIELDS, {"update": destroy_versions}),
    ]

