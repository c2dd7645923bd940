"""Managed keys of a PKI mount: resolution, import (with issuer linking), and the paths ``LIST keys``,
``key/:ref`` (GET, POST rename, DELETE), ``config/keys``, ``keys/generate/:type`` and ``keys/import``.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from cryptography import x509 as cx509

from pytest_schedpki.secrets.framework.fields import INT, STRING, Field, FieldData
from pytest_schedpki.secrets.framework.logical import (
    LogicalError,
    LogicalResponse,
    internal_error,
    not_found,
    user_error,
)
from pytest_schedpki.secrets.framework.router import LogicalRequest, Path

from ..codecs.x509 import (
    generate_key,
    key_type_of,
    load_private_key,
    pem_sequence,
    private_key_pem,
    public_keys_equal,
)
from ..model import Key, PkiState
from .issuers import NAME_RE, normalize_ref

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

KEY_REF = r"(?P<key_ref>[0-9A-Za-z_](([0-9A-Za-z_.-]+)?[0-9A-Za-z_])?)"


class KeyNotFound(LogicalError):
    """A key reference that does not resolve: 500 multierror ``<message>``; ``message`` is ``unable to
    find PKI key for reference: <ref>`` or ``no default key currently configured``."""

    def __init__(self, message: str):
        super().__init__(500, internal_error(message).errors)
        self.message = message


def resolve_key(state: PkiState, ref: str) -> Key:
    """``resolveKeyReference``: ``default`` -> the configured default key, else a key id, else a key
    name. Raises :class:`KeyNotFound` (500)."""
    ref = normalize_ref(ref)
    if ref == "default":
        key = state.keys.get(state.default_key_id)
        if key is None:
            raise KeyNotFound("no default key currently configured")
        return key
    if ref in state.keys:
        return state.keys[ref]
    for key_id in sorted(state.keys):
        if ref and state.keys[key_id].key_name == ref:
            return state.keys[key_id]
    raise KeyNotFound(f"unable to find PKI key for reference: {ref}")


def check_key_name(state: PkiState, data: FieldData, name_field: str = "key_name") -> str:
    """``getKeyName``: ``""`` when not sent; 400 ``reserved keyword 'default' can not be used as key
    name``, ``key name contained invalid characters``, ``key name already in use``."""
    if not data.sent(name_field):
        return ""
    name = data.get(name_field).strip()
    if name.lower() == "default":
        raise user_error("reserved keyword 'default' can not be used as key name")
    if not NAME_RE.match(name):
        raise user_error("key name contained invalid characters")
    try:
        resolve_key(state, name)
    except KeyNotFound:
        return name
    raise user_error("key name already in use")


def import_key(state: PkiState, private_key: Any, key_name: str = "") -> tuple[Key, bool]:
    """``importKey``: ``(key, existed)``. A key with the same public key is returned as it is; a new one
    is stored, linked to every issuer without a key whose certificate carries its public key (the first
    such issuer becomes default when none is), and becomes the default key when none is. 400 ``an
    existing key is using the requested key name value: <name>`` when another key has that name."""
    public = private_key.public_key()
    for key in state.keys.values():
        if public_keys_equal(key.private_key.public_key(), public):
            return key, True
    if key_name and any(k.key_name == key_name for k in state.keys.values()):
        raise user_error(f"an existing key is using the requested key name value: {key_name}")
    key_type, key_bits = key_type_of(private_key)
    key = Key(key_id=str(uuid.uuid4()), key_name=key_name, key_type=key_type, key_bits=key_bits,
              private_key=private_key)
    state.keys[key.key_id] = key
    for issuer_id in sorted(state.issuers):
        issuer = state.issuers[issuer_id]
        if not issuer.key_id and public_keys_equal(issuer.certificate.public_key(), public):
            issuer.key_id = key.key_id
            if state.default_issuer_id not in state.issuers:
                state.default_issuer_id = issuer.issuer_id
    if state.default_key_id not in state.keys:
        state.default_key_id = key.key_id
    return key, False


def skid_hex(key: Key) -> str:
    """The key's Subject Key Identifier (SHA-1 of the public key bits) as colon hex."""
    digest = cx509.SubjectKeyIdentifier.from_public_key(key.private_key.public_key()).digest
    return ":".join(f"{b:02x}" for b in digest)


# ------------------------------------------------------------------------------------------- paths

def _list_keys(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    state = backend.state
    if not state.keys:
        raise not_found()
    keys = sorted(state.keys)
    info = {k: {"is_default": k == state.default_key_id, "key_name": state.keys[k].key_name} for k in keys}
    return LogicalResponse(data={"keys": keys, "key_info": info})


def _read_key(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    key = resolve_key(backend.state, req.data.get("key_ref"))
    return LogicalResponse(data={"key_id": key.key_id, "key_name": key.key_name, "key_type": key.key_type,
                                 "subject_key_id": skid_hex(key)})


def _rename_key(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """POST key/:ref: only ``key_name`` changes (any name matching the name rules, even ``default``)."""
    state = backend.state
    key = resolve_key(state, req.data.get("key_ref"))
    new_name = req.data.get("key_name")
    if new_name and not NAME_RE.match(new_name):
        raise user_error("new key name outside of valid character limits")
    key = replace(key, key_name=new_name)
    state.keys[key.key_id] = key
    response = LogicalResponse(data={"key_id": key.key_id, "key_name": key.key_name, "key_type": key.key_type})
    if not new_name:
        response.add_warning("Name successfully deleted, you will now need to reference this key by it's Id: "
                             + key.key_id)
    return response


def _delete_key(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """DELETE key/:ref: 204 (also for unknown refs); 400 ``Failed to Delete Key.  Key in Use by Issuer:
    <id>``; 200 with a warning when it was the default key."""
    state = backend.state
    ref = normalize_ref(req.data.get("key_ref"))
    try:
        key = resolve_key(state, ref)
    except KeyNotFound:
        return LogicalResponse(status=204)
    for issuer_id in sorted(state.issuers):
        if state.issuers[issuer_id].key_id == key.key_id:
            raise user_error(f"Failed to Delete Key.  Key in Use by Issuer: {issuer_id}")
    del state.keys[key.key_id]
    if state.default_key_id == key.key_id:
        state.default_key_id = ""
        response = LogicalResponse(data=None)
        response.add_warning(f"Deleted key {key.key_id} (via key_ref {ref}); this was configured as the default key. "
                             "Operations without an explicit key will not work until a new default is configured.")
        return response
    return LogicalResponse(status=204)


def _read_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    return LogicalResponse(data={"default": backend.state.default_key_id})


def _write_config(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    state = backend.state
    ref = normalize_ref(req.data.get("default"))
    if not ref or ref == "default":
        raise user_error("Invalid key specification; must be non-empty and can't be 'default'.")
    try:
        state.default_key_id = resolve_key(state, ref).key_id
    except KeyNotFound as exc:
        raise user_error(f"Error resolving issuer reference: {exc.message}") from None
    return LogicalResponse(data={"default": state.default_key_id})


def _generate_key(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    state, data = backend.state, req.data
    kind = data.get("type")
    key_name = check_key_name(state, data)
    if kind == "kms":
        raise user_error('"managed_key_name" or "managed_key_id" are required for kms typed key generation')
    try:
        private_key, key_type, _ = generate_key(data.get("key_type"), data.get("key_bits"))
    except LogicalError as exc:
        raise user_error(f"Validation for key_type, key_bits failed: {exc.errors[0]}") from None
    key, _ = import_key(state, private_key, key_name)
    out = {"key_id": key.key_id, "key_name": key.key_name, "key_type": key_type}
    if kind == "exported":
        out["private_key"] = private_key_pem(private_key)
    return LogicalResponse(data=out)


def _import_key(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    state, data = backend.state, req.data
    key_name = check_key_name(state, data)
    bundle = data.get("pem_bundle")
    if len(bundle) < 64:
        raise user_error("provided data for import was too short; perhaps a path was passed to the API rather than "
                         "the contents of a PEM file")
    try:
        blocks = pem_sequence(bundle)
    except ValueError as exc:
        raise user_error(str(exc)) from None
    if len(blocks) != 1:
        raise user_error("only a single key can be present within the pem_bundle for importing")
    try:
        private_key = load_private_key(blocks[0][1])
    except (ValueError, TypeError) as exc:
        raise user_error(f"failed parsing key bytes: {exc}") from None
    if key_type_of(private_key)[0] == "":
        raise user_error("unsupported private key type within pem bundle")
    key, existed = import_key(state, private_key, key_name)
    response = LogicalResponse(data={"key_id": key.key_id, "key_name": key.key_name, "key_type": key.key_type})
    if existed:
        response.add_warning("Key already imported, use key/ endpoint to update name.")
    return response


def paths(backend: PkiBackend) -> list[Path]:
    """``keys/``, ``key/:ref``, ``config/keys``, ``keys/generate/:type``, ``keys/import``."""
    return [
        Path(r"keys/?", {}, {"list": partial(_list_keys, backend)}),
        Path(r"keys/generate/(?P<type>internal|exported|kms)",
             {"type": Field(STRING), "key_name": Field(STRING), "key_type": Field(STRING, "rsa"),
              "key_bits": Field(INT, 0), "managed_key_name": Field(STRING), "managed_key_id": Field(STRING)},
             {"update": partial(_generate_key, backend)}),
        Path(r"keys/import", {"pem_bundle": Field(STRING), "key_name": Field(STRING)},
             {"update": partial(_import_key, backend)}),
        Path(rf"key/{KEY_REF}", {"key_ref": Field(STRING, "default"), "key_name": Field(STRING)}, {
            "read": partial(_read_key, backend), "update": partial(_rename_key, backend),
            "delete": partial(_delete_key, backend)}),
        Path(r"config/keys", {"default": Field(STRING)}, {"read": partial(_read_config, backend),
                                                          "update": partial(_write_config, backend)}),
    ]
