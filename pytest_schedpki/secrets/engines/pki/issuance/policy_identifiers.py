"""The certificate policies extension of a leaf, as OpenBao 2.7.2 writes it from a role's
``policy_identifiers`` (``sdk/helper/certutil/helpers.go`` ``AddPolicyIdentifiers``).

Two routes, chosen by the whole list (checked against the real server):

* every entry is a plain OID that Go's ``x509.ParseOID`` reads (digits and dots only, at least two
  arcs, the usual first/second arc limits): the extension holds those OIDs, no qualifiers
  (``Certificate.Policies``, arcs of any size);
* otherwise (a negative or ``+``-signed arc, a JSON entry with ``cps``/``notice``, an empty entry):
  certutil's ``CreatePolicyInformationExtensionFromStorageStrings`` marshals every entry with
  ``encoding/asn1`` (negative arcs are written as no bytes: :func:`~..codecs.goder.asn1_marshaled_oid`).
  When that fails (an entry that is neither an OID nor a JSON object, an OID ``encoding/asn1``
  refuses, a CPS URL that is not IA5), the extension is left out and the certificate keeps only the
  entries ``ParseOID`` read, without qualifiers (none at all: no extension). An OID written empty
  makes Go's read-back of the created certificate fail: 500 ``unable to parse created certificate:
  x509: invalid certificate policies``.
"""

from __future__ import annotations

import re

from cryptography import x509

from pytest_schedpki.golang.duration import go_quote
from pytest_schedpki.golang.json import GoJSONError, JArr, JObj, JStr, kind_name, unmarshal_nodes
from pytest_schedpki.secrets.framework.logical import dumps, internal_error

from ..codecs.goder import asn1_marshalable, asn1_marshaled_oid, go_oid_arcs

_PLAIN_OID = re.compile(r"[0-9]+(?:\.[0-9]+)+")


def parse_oid(text: str) -> str | None:
    """Go's ``x509.ParseOID``: the dotted OID (leading zeros dropped) or None when Go refuses it (any
    character but digits and dots, fewer than two arcs, an empty arc, a first arc above 2, a second
    arc of 40 or more under 0 and 1)."""
    if not _PLAIN_OID.fullmatch(text):
        return None
    arcs = [int(part) for part in text.split(".")]
    if arcs[0] > 2 or (arcs[0] < 2 and arcs[1] >= 40):
        return None
    return ".".join(map(str, arcs))


_ENTRY_TYPE = "certutil.PolicyIdentifierWithQualifierEntry"
_FIELDS = ("oid", "cps", "notice")


class PolicyIdentifierError(ValueError):
    """certutil refused a policy identifier; ``str()`` is Go's error text."""


def _entry_fields(node: object) -> dict[str, str]:
    """``json.Unmarshal`` of an object node into ``PolicyIdentifierWithQualifierEntry``: keys matched
    to ``oid``/``cps``/``notice`` regardless of case (a later match overwrites), ``null`` leaves a
    field empty, other keys are ignored. Raises :class:`PolicyIdentifierError` with Go's text for
    the first value that is not a string (``json: cannot unmarshal number into Go struct field
    .oid of type string``, the key as written) or a node that is not an object."""
    if not isinstance(node, JObj):
        raise PolicyIdentifierError(f"json: cannot unmarshal {kind_name(node)} into Go value of type {_ENTRY_TYPE}")
    fields = dict.fromkeys(_FIELDS, "")
    error = None
    for key, value in node.pairs:
        name = key.casefold()
        if name not in fields or value is None:
            continue
        if isinstance(value, JStr):
            fields[name] = value.value
        elif error is None:
            error = f"json: cannot unmarshal {kind_name(value)} into Go struct field .{key} of type string"
    if error is not None:
        raise PolicyIdentifierError(error)
    return fields


def entries_from_json(text: str) -> list[str] | None:
    """``path_roles.go`` ``parsePolicyIdentifiersFromJson``: a JSON array of entry objects becomes one
    ``json.Marshal`` text per entry (``{"oid":..}`` plus ``cps``/``notice`` when not empty; a
    ``null`` element is the empty entry, a ``null`` document no entries); None when Go's decoding
    fails (the caller then reads the field as a comma list of OIDs)."""
    try:
        node = unmarshal_nodes(text.encode("utf-8", "surrogateescape"))
    except GoJSONError:
        return None
    if node is None:
        return []
    if not isinstance(node, JArr):
        return None
    out = []
    for item in node.items:
        try:
            fields = dict.fromkeys(_FIELDS, "") if item is None else _entry_fields(item)
        except PolicyIdentifierError:
            return None
        entry = {"oid": fields["oid"]}
        entry.update({name: fields[name] for name in ("cps", "notice") if fields[name]})
        out.append(dumps(entry))
    return out


def storage_policies(identifiers: list[str]) -> list[tuple[str | None, list]]:
    """certutil ``CreatePolicyInformationExtensionFromStorageStrings``: every non-empty entry as
    ``(the dotted OID encoding/asn1 writes, or None when it writes it empty; qualifiers)``. Raises
    :class:`PolicyIdentifierError` with Go's text, checking every entry first, then marshaling in
    order: ``policy identifier "<t>" is neither a valid OID: strconv.Atoi: parsing "<arc>": invalid
    syntax, Nor JSON Policy Identifier: <json error>``; the entry's ``oid`` refused by ``StringToOid``
    (``strconv.Atoi: parsing "": invalid syntax``); ``asn1: structure error: invalid object
    identifier``; ``asn1: structure error: IA5String contains invalid character`` (a CPS URL). A
    ``null`` entry is skipped like an empty one. OpenBao runs this at role write (a 500) and at
    issuance."""
    entries: list[tuple[list[int], str, str]] = []
    for text in identifiers:
        if not text:
            continue
        try:
            entries.append((go_oid_arcs(text), "", ""))
            continue
        except ValueError as exc:
            atoi_error = exc
        try:
            node = unmarshal_nodes(text.encode("utf-8", "surrogateescape"))
            if node is None:
                continue
            fields = _entry_fields(node)
        except (GoJSONError, PolicyIdentifierError) as json_exc:
            raise PolicyIdentifierError(f"policy identifier {go_quote(text)} is neither a valid OID: {atoi_error}, "
                                        f"Nor JSON Policy Identifier: {json_exc}") from None
        try:
            arcs = go_oid_arcs(fields["oid"])
        except ValueError as exc:
            raise PolicyIdentifierError(str(exc)) from None
        entries.append((arcs, fields["cps"], fields["notice"]))
    out: list[tuple[str | None, list]] = []
    for arcs, cps, notice in entries:
        if not asn1_marshalable(arcs):
            raise PolicyIdentifierError("asn1: structure error: invalid object identifier")
        qualifiers: list = []
        if cps:
            if not cps.isascii():
                raise PolicyIdentifierError("asn1: structure error: IA5String contains invalid character")
            qualifiers.append(cps)
        if notice:
            qualifiers.append(x509.UserNotice(None, notice))
        out.append((asn1_marshaled_oid(arcs), qualifiers))
    return out


def certificate_policies(identifiers: list[str]) -> list[x509.Extension]:
    """The certificate policies extension for a role's stored ``policy_identifiers`` (empty list: no
    extension), following the two routes of the module docstring. Raises the 500 ``unable to parse
    created certificate: x509: invalid certificate policies`` for an OID ``encoding/asn1`` writes
    empty."""
    if not identifiers:
        return []
    plain = [parse_oid(text) for text in identifiers]
    if None not in plain:
        infos = [x509.PolicyInformation(x509.ObjectIdentifier(dotted), None) for dotted in plain]
    else:
        try:
            stored = storage_policies(identifiers)
        except PolicyIdentifierError:  # AddPolicyIdentifiers drops the extension, keeps Policies
            infos = [x509.PolicyInformation(x509.ObjectIdentifier(dotted), None) for dotted in plain if dotted]
            if not infos:
                return []
        else:
            if any(dotted is None for dotted, _ in stored):
                raise internal_error("unable to parse created certificate: x509: invalid certificate policies")
            infos = [x509.PolicyInformation(x509.ObjectIdentifier(dotted), qualifiers or None)
                     for dotted, qualifiers in stored]
    return [x509.Extension(x509.oid.ExtensionOID.CERTIFICATE_POLICIES, False, x509.CertificatePolicies(infos))]
