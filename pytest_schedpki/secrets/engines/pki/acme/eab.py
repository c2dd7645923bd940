"""External account bindings (``path_acme_eab.go``, ``acme_eab_policy.go``, ``verifyEabPayload``).

Management paths (a token needed): ``acme/new-eab`` and its role/issuer variants (update: ``id``,
``key_type`` ``hs``, ``key`` - unpadded base64url of 32 random bytes after the ``vault-eab-0-`` prefix
bytes -, ``acme_directory`` ``<prefix>directory``, ``created_on`` RFC 3339), ``eab/`` (list: ``keys``
and ``key_info``), ``eab/:key_id`` (delete; 500 ``badly formatted key_id field`` for a non-UUID, a
warning ``No key id found with id: <id>`` for an unknown one, else 204).

``eab_policy``: ``new-account-required`` and ``always-required`` need an EAB to create an account
(externalAccountRequired), ``always-required`` also refuses existing accounts made without one.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import re
import secrets
from typing import TYPE_CHECKING, Any

from pytest_schedpki.golang.json import GoJSONError, unmarshal_value
from pytest_schedpki.secrets.framework.logical import LogicalResponse, internal_error, not_found
from pytest_schedpki.secrets.framework.router import LogicalRequest

from .context import AcmeContext, directory_prefix, join_url
from .jws import EAB_ALGORITHMS, JwsContext, go_json_text, raw_url_decode
from .problems import AcmeProblem
from .state import Eab, new_uuid, rfc3339, store, writable

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

TOKEN_PREFIX = base64.urlsafe_b64decode("vault-eab-0-")  # decodedTokenPrefix: 9 bytes
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def enforce_for_existing(ctx: AcmeContext, account: Any) -> None:
    """``EnforceForExistingAccount``."""
    if ctx.eab_policy == "always-required" and not account.eab:
        raise AcmeProblem("externalAccountRequired")


def _hmac(alg: str, key: bytes, text: bytes) -> bytes:
    digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[alg]
    return hmac.new(key, text, digest).digest()


def verify_eab(backend: PkiBackend, ctx: AcmeContext, outer: JwsContext, path: str, data: dict[str, Any]) -> Eab:
    """``verifyEabPayload``: the inner JWS of ``externalAccountBinding``; the EAB key it names."""
    if "protected" not in data:
        raise AcmeProblem.wrap("malformed", "missing required field 'protected'")
    protected = data["protected"]
    try:
        header_raw = raw_url_decode(protected if isinstance(protected, str) else "")
    except ValueError as exc:
        raise AcmeProblem.wrap("malformed", f"failed to base64 parse eab 'protected': {exc}") from None
    try:
        header = unmarshal_value(header_raw)
    except GoJSONError as exc:
        raise AcmeProblem("serverInternal", f"failed to json unmarshal eab 'protected': {go_json_text(exc)}") from None
    header = header if isinstance(header, dict) else {}
    if not header.get("kid"):
        raise AcmeProblem.wrap("malformed", "failed to json unmarshal eab 'protected': invalid header: got missing "
                                            "required field 'kid'")
    if header.get("alg") not in EAB_ALGORITHMS:
        raise AcmeProblem.wrap("malformed", "failed to json unmarshal eab 'protected': invalid header: unexpected "
                                            "value for 'algo'")
    if not header.get("url"):
        raise AcmeProblem.wrap("malformed", "missing required parameter 'url' in eab 'protected'")
    expected = join_url(ctx.cluster_url, path)
    if header["url"] != expected:
        raise AcmeProblem.wrap("unauthorized", f"invalid value for 'url' in eab 'protected': got '{header['url']}' "
                                               f"expected '{expected}'")
    if header.get("nonce"):
        raise AcmeProblem.wrap("malformed", "nonce should not be provided in eab 'protected'")
    if "payload" not in data:
        raise AcmeProblem.wrap("malformed", "missing required field eab 'payload'")
    if not isinstance(data["payload"], str):
        raise AcmeProblem.wrap("malformed", "failed to parse 'payload' field")
    if "signature" not in data:
        raise AcmeProblem.wrap("malformed", "missing required field 'signature'")
    if not isinstance(data["signature"], str):
        raise AcmeProblem.wrap("malformed", "failed to parse 'signature' field")
    try:
        payload = raw_url_decode(data["payload"])
        signature = raw_url_decode(data["signature"])
    except ValueError as exc:
        raise AcmeProblem.wrap("malformed", f"error parsing eab signature: {exc}") from None
    eab = store(backend).eabs.get(header["kid"])
    if eab is None:
        raise AcmeProblem.lead("unauthorized", "failed to verify eab")
    signed = f"{protected}.{data['payload']}".encode()
    if not hmac.compare_digest(_hmac(header["alg"], eab.key, signed), signature):
        raise AcmeProblem("serverInternal", "go-jose/go-jose: error in cryptographic primitive")
    if payload != outer.jwk_raw.encode():
        raise AcmeProblem.wrap("malformed", "eab payload does not match outer JWK key")
    if eab.directory != ctx.directory:
        raise AcmeProblem.lead("unauthorized", "failed to verify eab")
    return eab


def _describe(eab: Eab) -> dict[str, Any]:
    return {"key_type": eab.key_type, "acme_directory": eab.directory + "directory",
            "created_on": rfc3339(eab.created)}


def new_eab(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``pathAcmeCreateEab``."""
    created = backend.now().astimezone(datetime.timezone.utc).replace(microsecond=0)
    eab = Eab(kid=new_uuid(), key=TOKEN_PREFIX + secrets.token_bytes(32), directory=directory_prefix(req.path),
              created=created)
    writable(backend).eabs[eab.kid] = eab
    key = base64.urlsafe_b64encode(eab.key).rstrip(b"=").decode()
    return LogicalResponse(data={"id": eab.kid, "key": key, **_describe(eab)})


def list_eab(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``pathAcmeListEab``: ids sorted (storage order), after ``after`` (need not exist), at most
    ``limit`` (<= 0: all)."""
    eabs = store(backend).eabs
    after, limit = req.data.get("after"), req.data.get("limit")
    ids = [kid for kid in sorted(eabs) if not after or kid > after]
    ids = ids[:limit] if limit > 0 else ids
    if not ids:
        raise not_found()
    return LogicalResponse(data={"keys": ids, "key_info": {kid: _describe(eabs[kid]) for kid in ids}})


def delete_eab(backend: PkiBackend, req: LogicalRequest) -> LogicalResponse:
    """``pathAcmeDeleteEab``."""
    kid = req.data.get("key_id")
    if not UUID_RE.match(kid):
        raise internal_error("badly formatted key_id field")
    if kid not in store(backend).eabs:
        return LogicalResponse(warnings=[f"No key id found with id: {kid}"], data=None)
    del writable(backend).eabs[kid]
    return LogicalResponse(status=204)
