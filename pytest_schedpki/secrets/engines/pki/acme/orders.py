"""``new-order``, ``orders``, ``order/:id``, ``order/:id/finalize``, ``order/:id/cert``
(``path_acme_order.go``).

new-order: ``identifiers`` (``dns``: wildcard rules, not an IP, IDNA round trip; ``ip``: parses),
no ``notBefore``/``notAfter``; each identifier must pass the directory's role (``rejectedIdentifier``
``role (<r>) will not issue certificate for name <n>`` / ``... does not allow IP sans ...``); one
authorization per identifier (http-01, dns-01, tls-alpn-01; IPs http-01 only; wildcards dns-01 only);
201 with ``Location``; the order expires after 24 hours of the double's clock.

finalize: the CSR (unpadded base64url DER; not a CA; a key) must name exactly the order's identifiers
(badCSR texts of ``validateCsrMatchesOrder``) with a key other than the account's; the order must be
``ready``. The certificate is signed through the PKI engine's leaf builder with the directory's role
(NotAfter at most 90 days), stored like every certificate (``schedpki.certs`` sees it) and the order
becomes ``valid``. cert: the leaf, the issuer and its chain, ``application/pem-certificate-chain``.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from pytest_schedpki.golang.time import GoTimeError
from pytest_schedpki.golang.time import parse_rfc3339 as parse_go_time
from pytest_schedpki.secrets.framework.logical import LogicalError
from pytest_schedpki.secrets.framework.router import LogicalRequest

from ..codecs import x509 as pkix
from ..codecs.gokey import public_key_or_none
from ..codecs.pem import go_asn1_error
from ..issuance.csr_signing import check_csr_signature
from ..issuance.issue import signing_issuer
from ..issuance.leaf import LeafRequest, build_leaf
from ..issuance.policy import PolicyError, check_csr_key, first_disallowed_name
from ..issuance.validity import ValidityError
from ..model import CertRecord, serial_to_hex
from .accounts import go_type
from .authorizations import authorization_url, new_authorization
from .context import AcmeContext
from .jws import JwsContext, raw_url_decode
from .pipeline import Answer
from .problems import AcmeProblem
from .state import Account, Identifier, Order, owned, rfc3339, store, writable

if TYPE_CHECKING:  # pragma: no cover
    from ..backend import PkiBackend

MAX_ACME_TTL = 90 * 24 * 3600
ORDER_LIFETIME = datetime.timedelta(hours=24)


def order_url(ctx: AcmeContext, order_id: str) -> str:
    return ctx.url("order", order_id)


def order_answer(ctx: AcmeContext, order: Order, status: int = 200) -> Answer:
    """``formatOrderResponse``."""
    base = order_url(ctx, order.id)
    data: dict[str, Any] = {"status": order.status, "expires": rfc3339(order.expires),
                            "identifiers": [i.network(True) for i in order.identifiers] or None,
                            "authorizations": [authorization_url(ctx, a) for a in order.authorizations] or None,
                            "finalize": base + "/finalize"}
    if order.status == "valid":
        data["certificate"] = base + "/cert"
    return Answer(data=data, status=status, headers={"Location": base})


def _identifier(raw: Any) -> Identifier:
    if not isinstance(raw, dict):
        raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(raw)}) for value in 'identifiers'")
    if "type" not in raw:
        raise AcmeProblem.wrap("malformed", "missing type argument for value in 'identifiers'")
    kind = raw["type"]
    if not isinstance(kind, str):
        raise AcmeProblem.wrap("malformed", "invalid type for type argument (string) for value in 'identifiers'")
    if "value" not in raw:
        raise AcmeProblem.wrap("malformed", "missing value argument for value in 'identifiers'")
    value = raw["value"]
    if not isinstance(value, str):
        raise AcmeProblem.wrap("malformed", "invalid type for value argument (string) for value in 'identifiers'")
    if not value:
        raise AcmeProblem.wrap("malformed", "value argument for value in 'identifiers' can not be blank")
    found = Identifier(type=kind, value=value, original=value)
    if kind == "ip":
        try:
            found.ipv6 = ipaddress.ip_address(value).version == 6
        except ValueError:
            raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed validation: failed parsing as "
                                                "IP") from None
    elif kind == "dns":
        if value.startswith("*"):
            found.wildcard = True
            label, _, rest = value.partition(".")
            if label != "*":
                raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed validation: invalid wildcard: "
                                                    "wildcard must be entire left-most label")
            if not rest:
                raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed validation: invalid wildcard: "
                                                    "wildcard must not be entire domain name; need at least two "
                                                    "domain labels")
            found.value = rest
        if _may_be_ip(found.value):
            try:
                ipaddress.ip_address(found.value)
                raise AcmeProblem.wrap("malformed", f"refusing to accept argument ({value}) as DNS type "
                                                    "identifier: parsed OK as IP address")
            except ValueError:
                pass
        why = _go_idna_error(found.value)
        if why:
            raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed validation: {why}")
        try:
            converted = found.value.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed validation: idna: {exc}") from None
        if converted != found.value:
            raise AcmeProblem.wrap("malformed", f"value argument ({value}) failed IDNA round-tripping to ASCII")
    else:
        raise AcmeProblem.wrap("unsupportedIdentifier", f"unsupported identifier type {kind}")
    return found


def _may_be_ip(value: str) -> bool:
    """Whether ``ipaddress.ip_address`` could parse ``value``: an IPv4 address is digits and dots
    only, an IPv6 one has a ``:`` (``_ip_int_from_string`` wants three parts at least); any other
    name fails both, which costs ~5 us of raised and caught errors per DNS identifier."""
    return ":" in value or not value.strip("0123456789.")


def _check_against_role(ctx: AcmeContext, identifiers: list[Identifier]) -> None:
    """``validateIdentifiersAgainstRole``."""
    for item in identifiers:
        if item.type == "dns":
            if first_disallowed_name(ctx.role, [item.original]):
                raise AcmeProblem.lead("rejectedIdentifier", f"role ({ctx.role.name}) will not issue certificate for "
                                                             f"name {item.original}")
        elif not ctx.role.allow_ip_sans:
            raise AcmeProblem.lead("rejectedIdentifier", f"role ({ctx.role.name}) does not allow IP sans, so cannot "
                                                         f"issue certificate for {item.original}")


def _order_date(data: dict, name: str) -> bool:
    """``parseOptRFC3339Field``: whether the order names a date (``time.Parse(time.RFC3339, ...)``,
    Go's whole range). Raises the ``malformed`` problems ``invalid type (<T>) for field '<name>'``,
    ``failed parsing field '<name>' (<v>): <Go's parse error>`` and ``provided time value is invalid
    '<name>' (<v>)`` (Go's zero time, 0001-01-01T00:00:00Z, whatever the offset it is written with)."""
    if name not in data:
        return False
    value = data[name]
    if not isinstance(value, str):
        raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(value)}) for field '{name}'")
    try:
        moment = parse_go_time(value.encode("utf-8", "surrogatepass"))
    except GoTimeError as exc:
        raise AcmeProblem.wrap("malformed", f"failed parsing field '{name}' ({value}): {exc}") from None
    if moment.is_zero():
        raise AcmeProblem.wrap("malformed", f"provided time value is invalid '{name}' ({value})")
    return True


def new_order(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
              account: Account) -> Answer:
    """``acmeNewOrderHandler``."""
    data = data or {}
    if "identifiers" not in data:
        raise AcmeProblem.wrap("malformed", "missing required identifiers argument")
    if not isinstance(data["identifiers"], list):
        raise AcmeProblem.wrap("malformed", f"invalid type ({go_type(data['identifiers'])}) for field 'identifiers'")
    identifiers = [_identifier(raw) for raw in data["identifiers"]]
    if any([_order_date(data, "notBefore"), _order_date(data, "notAfter")]):  # both parsed first, as upstream
        raise AcmeProblem.lead("malformed", "NotBefore and NotAfter are not supported")
    _check_against_role(ctx, identifiers)
    acme = writable(backend)
    authz_ids = []
    for item in identifiers:
        authz = new_authorization(account.kid, item)
        acme.authorizations[authz.id] = authz
        authz_ids.append(authz.id)
    from .state import new_uuid
    order = Order(id=new_uuid(), account=account.kid, expires=backend.now() + ORDER_LIFETIME,
                  identifiers=identifiers, authorizations=authz_ids)
    acme.orders[order.id] = order
    return order_answer(ctx, order, status=201)


def load_order(backend: PkiBackend, user: JwsContext, order_id: str) -> Order:
    order = store(backend).orders.get(order_id)
    if order is None or order.account != user.kid:
        raise AcmeProblem.wrap("malformed", "order does not exist")
    return order


def order_status(backend: PkiBackend, order: Order) -> str:
    """``computeOrderStatus`` on the double's clock."""
    if order.status in ("invalid", "valid"):
        return order.status
    if backend.now() > order.expires:
        return "invalid"
    if order.status in ("ready", "processing") or not order.authorizations:
        return order.status
    states = [store(backend).authorizations[a].status for a in order.authorizations]
    for state in states:
        if state not in ("pending", "valid"):
            return "invalid"
    return "ready" if all(s == "valid" for s in states) else "pending"


def get_order(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
              account: Account) -> Answer:
    """``acmeGetOrderHandler``: a valid or invalid order lists only its valid authorizations."""
    order = replace(load_order(backend, user, req.data.get("order_id")))
    order.status = order_status(backend, order)
    if order.status in ("valid", "invalid"):
        authzs = store(backend).authorizations
        order.authorizations = [a for a in order.authorizations if authzs[a].status == "valid"]
    return order_answer(ctx, order)


def list_orders(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
                account: Account) -> Answer:
    """``acmeListOrdersHandler``: the URLs of the account's orders not stored as invalid."""
    orders = store(backend).orders
    urls = [order_url(ctx, o.id) for o in sorted(orders.values(), key=lambda o: o.id)
            if o.account == account.kid and o.status != "invalid"]
    return Answer(data={"orders": urls})


def certificate(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
                account: Account) -> Answer:
    """``acmeFetchCertOrderHandler``."""
    order = load_order(backend, user, req.data.get("order_id"))
    if order.status != "valid":
        raise AcmeProblem.lead("orderNotReady", f"order is status {order.status}, needs to be in valid state")
    record = backend.state.certs.get(order.serial)
    issuer = backend.state.issuers.get(order.issuer_id)
    if record is None or issuer is None:
        raise AcmeProblem("serverInternal", f"missing certificate {order.serial} from storage")
    from ..authority.issuers import chain_for
    own = pkix.pem_of(issuer.certificate)
    chain = "".join(p if p.endswith("\n") else p + "\n" for p in [own, *[c for c in chain_for(backend.state, issuer)
                                                                        if c.strip() != own.strip()]])
    body = record.certificate.public_bytes(serialization.Encoding.PEM) + chain.encode()
    return Answer(raw=(body, "application/pem-certificate-chain"))


_LDH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


def _go_idna_error(name: str) -> str | None:
    """x/net/idna ``ValidateForRegistration().ToASCII`` refusals of an ASCII name, in ``process``'s order:
    a rune outside lower-case letters, digits, ``-`` and ``.`` (``idna: disallowed rune U+0045``), then
    per label an empty one (naming the whole string), the hyphen rules (``--`` at 3-4, a leading or
    trailing ``-``) and over 63 bytes (naming the label), then a name over 253 bytes. Non-ASCII names
    are left to Python's codec (``None``)."""
    if not name.isascii():
        return None
    for char in name:
        if char not in _LDH:
            return f"idna: disallowed rune U+{ord(char):04X}"
    labels = name.split(".")
    if len(labels) > 1 and labels[-1] == "":  # the label iterator skips a last empty label
        labels.pop()
    for label in labels:
        if not label:
            return f"idna: invalid label {json.dumps(name)}"
        hyphens = not label.startswith("xn--") and (
            (len(label) > 4 and label[2:4] == "--") or label[0] == "-" or label[-1] == "-")
        if hyphens or len(label) > 63:
            return f"idna: invalid label {json.dumps(label)}"
    if len(name[:-1] if name.endswith(".") else name) > 253:
        return f"idna: invalid label {json.dumps(name)}"
    return None


def _parse_csr(data: Any) -> x509.CertificateSigningRequest:
    """``parseCsrFromFinalize``."""
    if "csr" not in data:
        raise AcmeProblem.lead("malformed", "missing csr in payload")
    if not isinstance(data["csr"], str):
        raise AcmeProblem.lead("malformed", f"csr in payload not the expected type: {go_type(data['csr'])}")
    try:
        der = raw_url_decode(data["csr"])
    except ValueError as exc:
        raise AcmeProblem.lead("malformed", f"failed base64 decoding csr: {exc}") from None
    try:
        csr = x509.load_der_x509_csr(der)
    except (ValueError, TypeError):
        raise AcmeProblem.lead("malformed", f"failed to parse csr: {go_asn1_error(der)}") from None
    try:
        csr.public_key()
    except (ValueError, TypeError):
        raise AcmeProblem.lead("badCSR", "failed to parse csr no public key info or unknown key algorithm "
                                         "used") from None
    try:
        constraints = csr.extensions.get_extension_for_class(x509.BasicConstraints).value
        if constraints.ca:
            raise AcmeProblem.lead("badCSR", "refusing to accept CSR with Basic Constraints extension with CA set "
                                             "to true")
    except x509.ExtensionNotFound:
        pass
    return csr


def _csr_identifiers(csr: x509.CertificateSigningRequest) -> tuple[list[str], list[str]]:
    """``getIdentifiersFromCSR``: DNS names (with the CN unless it is an IP) and IPs, deduplicated."""
    try:
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = list(san.get_values_for_type(x509.DNSName))
        ips = [ipaddress.ip_address(i) for i in san.get_values_for_type(x509.IPAddress)]
    except x509.ExtensionNotFound:
        dns, ips = [], []
    cns = csr.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)
    if cns and cns[0].value:
        try:
            ips.append(ipaddress.ip_address(cns[0].value))
        except ValueError:
            dns.append(str(cns[0].value))
    return dns, sorted({str(i) for i in ips})


def _check_csr(order: Order, csr: x509.CertificateSigningRequest, user: JwsContext) -> None:
    dns, ips = _csr_identifiers(csr)
    dns = sorted({name.lower() for name in dns})  # strutil.RemoveDuplicates(lowercase): sorted, lower case
    order_dns = sorted({i.original.lower() for i in order.identifiers if i.type == "dns"})
    order_ips = sorted({str(ipaddress.ip_address(i.value)) for i in order.identifiers if i.type == "ip"})
    if not order_dns and not order_ips:
        raise AcmeProblem.lead("serverInternal", "order did not include any identifiers")
    if len(order_dns) != len(dns):
        raise AcmeProblem.lead("badCSR", f"Order ({len(order_dns)}) and CSR ({len(dns)}) mismatch on number of DNS "
                                         "identifiers")
    if len(order_ips) != len(ips):
        raise AcmeProblem.lead("badCSR", f"Order ({len(order_ips)}) and CSR ({len(ips)}) mismatch on number of IP "
                                         "identifiers")
    for mine, theirs in zip(order_dns, dns, strict=True):
        if mine != theirs:
            raise AcmeProblem.lead("badCSR", f"CSR is missing order DNS identifier {mine}")
    for mine, theirs in zip(order_ips, ips, strict=True):
        if mine != theirs:
            raise AcmeProblem.lead("badCSR", f"CSR is missing order IP identifier {mine}")
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if csr.public_key().public_bytes(*spki) == user.public_key().public_bytes(*spki):
        raise AcmeProblem.lead("badCSR", "certificate public key must not match account key")


def _common_name(ctx: AcmeContext, csr: x509.CertificateSigningRequest) -> str:
    """``maybeAugmentReqDataWithSuitableCN``."""
    if not ctx.role.require_cn or csr.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME):
        return ""
    dns, ips = _csr_identifiers(csr)
    for name in dns:
        if "*" in name:
            return name
    return dns[0] if dns else (ips[0] if ips else "")


def finalize(backend: PkiBackend, req: LogicalRequest, ctx: AcmeContext, user: JwsContext, data: Any,
             account: Account) -> Answer:
    """``acmeFinalizeOrderHandler``."""
    csr = _parse_csr(data or {})
    order = load_order(backend, user, req.data.get("order_id"))
    status = order_status(backend, order)
    if status != "ready":
        raise AcmeProblem.lead("orderNotReady", f"order is status {status}, needs to be in ready state")
    _check_csr(order, csr, user)
    try:
        issuer = signing_issuer(backend, ctx.issuer.issuer_id)
    except LogicalError as exc:
        raise AcmeProblem("serverInternal", f"failed loading CA {ctx.issuer.issuer_id}: {exc}") from None
    if issuer.leaf_not_after_behavior == "err":
        issuer = replace(issuer, leaf_not_after_behavior="truncate")
    now = backend.now()
    request = LeafRequest(common_name=_common_name(ctx, csr))
    try:
        check_csr_key(ctx.role, public_key_or_none(csr))
        leaf = build_leaf(role=ctx.role, request=request, issuer=issuer, now=now,
                          mount_default_ttl=backend.mount.effective_default_ttl(),
                          mount_max_ttl=backend.mount.effective_max_ttl(), csr=csr)
        if leaf.certificate.not_valid_after_utc > now + datetime.timedelta(seconds=MAX_ACME_TTL):
            leaf = build_leaf(role=ctx.role, request=replace(request, ttl=MAX_ACME_TTL), issuer=issuer, now=now,
                              mount_default_ttl=backend.mount.effective_default_ttl(),
                              mount_max_ttl=backend.mount.effective_max_ttl(), csr=csr)
    except (PolicyError, ValidityError) as exc:
        raise AcmeProblem.lead("badCSR", f"refusing to sign CSR: {exc}") from None
    except LogicalError as exc:
        raise AcmeProblem.lead("badCSR", f"refusing to sign CSR: {exc.errors[0] if exc.errors else exc}") from None
    try:
        check_csr_signature(csr)
    except LogicalError as exc:
        raise AcmeProblem.lead("badCSR", f"refusing to sign CSR: {exc.errors[0]}") from None
    cert = leaf.certificate
    serial = serial_to_hex(cert.serial_number)
    backend.state.certs[serial] = CertRecord(serial_number=serial, certificate=cert, pem=pkix.pem_of(cert),
                                             issuer_id=issuer.issuer_id, role=ctx.role.name, issued_at=now, stored=True)
    acme = writable(backend)
    acme.certs[f"{account.kid}/{serial}"] = order.id
    stored = owned(acme, "orders", order.id)
    stored.status, stored.serial, stored.issuer_id = "valid", serial, issuer.issuer_id
    stored.cert_expiry = cert.not_valid_after_utc
    return order_answer(ctx, stored)
