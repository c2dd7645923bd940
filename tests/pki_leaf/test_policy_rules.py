"""Pure role-policy and validity functions (names, globs, other SANs, CSR keys, TTL/not_after rules)."""

import datetime
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from pytest_schedpki.secrets.engines.pki.issuance.policy import (
    PolicyError,
    check_csr_key,
    check_other_sans,
    common_name_refused,
    first_disallowed_name,
    go_glob,
    parse_other_sans,
    resolve_names,
    to_ascii,
    user_id_allowed,
)
from pytest_schedpki.secrets.engines.pki.issuance.roles import Role
from pytest_schedpki.secrets.engines.pki.issuance.validity import (
    ValidityError,
    ValidityRequest,
    go_rfc3339nano,
    leaf_not_after,
    leaf_not_before,
    parse_rfc3339,
)

UTC = datetime.timezone.utc
NOW = datetime.datetime(2030, 6, 1, 12, 0, 0, tzinfo=UTC)
WEB = Role(name="web", allowed_domains=["example.com"], allow_subdomains=True)


@pytest.mark.parametrize("pattern, subject, expected", [
    ("*", "anything", True), ("", "", True), ("", "x", False), ("a*", "abc", True), ("*c", "abc", True),
    ("a*c", "abbbc", True), ("a*c", "abd", False), ("spiffe://example.com/*", "spiffe://example.com/a/b", True),
    ("spiffe://example.com/*", "spiffe://other/a", False), ("*@example.com", "alice@example.com", True),
    ("*@example.com", "alice@evil.org", False), ("ftp*.example.com", "ftp1.example.com", True), ("abc", "abc", True),
])
def test_go_glob(pattern, subject, expected):
    assert go_glob(pattern, subject) is expected


@pytest.mark.parametrize("role_kw, name, allowed", [
    ({}, "a.example.com", True), ({}, "a.b.example.com", True), ({}, "example.com", False),
    ({"allow_bare_domains": True}, "example.com", True), ({}, "a.other.com", False),
    ({}, "*.example.com", True), ({"allow_wildcard_certificates": False}, "*.example.com", False),
    ({}, "f*o.example.com", True), ({}, "*.*.example.com", False), ({}, "a.*.example.com", False),
    ({}, "A.EXAMPLE.COM", False), ({}, "user@a.example.com", True), ({}, "foo@bar@example.com", False),
    ({}, "*@a.example.com", True), ({}, "localhost", True), ({}, "localdomain", True), ({}, "x.localhost", True),
    ({"allow_localhost": False}, "localhost", False), ({}, "under_score.example.com", False),
    ({"enforce_hostnames": False}, "under_score.example.com", True), ({"allow_any_name": True}, "anything.at.all", True),
    ({"allow_any_name": True}, "bad_host", False), ({"allow_any_name": True, "enforce_hostnames": False}, "bad_host", True),
    ({"allow_glob_domains": True, "allowed_domains": ["ftp*.example.com"]}, "ftp1.example.com", True),
    ({"allow_glob_domains": False, "allowed_domains": ["ftp*.example.com"]}, "ftp1.example.com", False),
])
def test_name_rules(role_kw, name, allowed):
    assert (first_disallowed_name(replace(WEB, **role_kw), [name]) == "") is allowed


def test_cn_validations():
    assert common_name_refused(replace(WEB, cn_validations=["email"]), "a.example.com")
    assert not common_name_refused(replace(WEB, cn_validations=["email"]), "u@a.example.com")
    assert common_name_refused(replace(WEB, cn_validations=["hostname"]), "u@a.example.com")
    assert common_name_refused(WEB, "u@example.com")  # the e-mail's domain must pass the name rules too
    assert not common_name_refused(replace(WEB, cn_validations=["disabled"]), "not a host!")


def test_to_ascii():
    assert to_ascii("ä.example.com") == "xn--4ca.example.com"
    assert to_ascii("Ä.example.com") == "xn--7ba.example.com"  # observed upstream: no case mapping
    assert to_ascii("") == ""
    with pytest.raises(PolicyError, match=r'^idna: invalid label "a\.\.example\.com"$'):
        to_ascii("a..example.com")
    with pytest.raises(PolicyError, match=r'^idna: invalid label "a\.example\.com\."$'):
        to_ascii("a.example.com.")
    with pytest.raises(PolicyError, match=r'^idna: invalid label "a{64}"$'):
        to_ascii("a" * 64 + ".com")


def test_other_sans_parsing_and_checks():
    assert parse_other_sans(["1.2.3;UTF8:a", "1.2.3;utf-8:b", "1.2.4;UTF8:c:d"]) == {"1.2.3": ["a", "b"], "1.2.4": ["c:d"]}
    role = replace(WEB, allowed_other_sans=["1.3.6.1.4.1.311.20.2.3;UTF8:*@example.com"])
    check_other_sans(role, {"1.3.6.1.4.1.311.20.2.3": ["alice@example.com"]})
    with pytest.raises(PolicyError, match="^other SAN alice@evil.org not allowed for OID 1.3.6.1.4.1.311.20.2.3 by this role$"):
        check_other_sans(role, {"1.3.6.1.4.1.311.20.2.3": ["alice@evil.org"]})
    with pytest.raises(PolicyError, match=r"^other SAN OID 1\.2\.3\.4 not allowed by this role$"):
        check_other_sans(role, {"1.2.3.4": ["x"]})
    check_other_sans(replace(WEB, allowed_other_sans=["*"]), {"9.9": ["anything"]})


def test_user_ids_are_case_insensitive_or_globs():
    role = replace(WEB, allowed_user_ids=["Alice", "svc-*"])
    assert user_id_allowed(role, "alice") and user_id_allowed(role, "svc-42") and not user_id_allowed(role, "bob")
    assert not user_id_allowed(WEB, "alice")  # empty list allows nothing


def test_resolve_names_order_and_dedup():
    names = resolve_names(replace(WEB, allow_ip_sans=True), {
        "common_name": "a.example.com", "alt_names": " b.example.com,b.example.com,x@a.example.com,bad_name.example.com,"
        "c.example.com ,y@a.example.com,x@a.example.com", "ip_sans": ["10.0.0.1", "::1"]})
    assert names.dns_names == ["a.example.com", "b.example.com"]  # no per-item trimming: "c.example.com " is dropped
    assert names.email_addresses == ["x@a.example.com", "y@a.example.com"]
    assert [str(i) for i in names.ip_addresses] == ["10.0.0.1", "::1"]


@pytest.mark.parametrize("request_values, message", [
    ({}, 'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, '
         'unless "require_cn" is set to false'),
    ({"common_name": "a.example.com", "alt_names": "x@evil.com"}, "email address x@evil.com not allowed by this role"),
    ({"common_name": "a.example.com", "serial_number": "1"}, "serial_number 1 not allowed by this role"),
    ({"common_name": "a.example.com", "ip_sans": ["10.0.0.1", ""]}, 'the value "" is not a valid IP address'),
    ({"common_name": "a.example.com.", }, 'idna: invalid label "a.example.com."'),
])
def test_resolve_names_errors(request_values, message):
    with pytest.raises(PolicyError) as info:
        resolve_names(WEB, request_values)
    assert str(info.value) == message


def test_ip_cidr_restriction():
    role = replace(WEB, allowed_ip_sans_cidr=["10.0.0.0/8"])
    resolve_names(role, {"common_name": "a.example.com", "ip_sans": ["10.2.3.4"]})
    with pytest.raises(PolicyError, match='^the IP address "192.168.0.1" is not allowed in this role$'):
        resolve_names(role, {"common_name": "a.example.com", "ip_sans": ["192.168.0.1"]})


@pytest.mark.parametrize("role_kw, key, message", [
    ({"key_type": "rsa"}, ec.generate_private_key(ec.SECP256R1()), "role requires keys of type rsa"),
    ({"key_type": "ec", "key_bits": 256}, rsa.generate_private_key(65537, 1024), "role requires keys of type ec"),
    ({"key_type": "rsa", "key_bits": 2048}, rsa.generate_private_key(65537, 1024),
     "role requires a minimum of a 2048-bit key, but CSR's key is 1024 bits"),
    ({"key_type": "ec", "key_bits": 384}, ec.generate_private_key(ec.SECP256R1()),
     "role requires a minimum of a 384-bit key, but CSR's key is 256 bits"),
    ({"key_type": "any"}, rsa.generate_private_key(65537, 1024), "RSA keys < 2048 bits are unsafe and not supported"),
    ({"key_type": "ed25519"}, ec.generate_private_key(ec.SECP256R1()), "role requires keys of type ed25519"),
])
def test_csr_key_rules(role_kw, key, message):
    with pytest.raises(PolicyError) as info:
        check_csr_key(replace(WEB, **role_kw), key.public_key())
    assert str(info.value) == message


def test_csr_key_accepted():
    assert check_csr_key(replace(WEB, key_type="any"), ed25519.Ed25519PrivateKey.generate().public_key()) == ("ed25519", 0)
    assert check_csr_key(replace(WEB, key_type="ec", key_bits=256), ec.generate_private_key(ec.SECP384R1()).public_key()) \
        == ("ec", 384)


def _req(**kw):
    base = {"now": NOW, "issuer_not_after": NOW + datetime.timedelta(days=3650), "mount_default_ttl": 768 * 3600,
            "mount_max_ttl": 768 * 3600}
    base.update(kw)
    return ValidityRequest(**base)


def test_ttl_resolution_and_clamping():
    assert leaf_not_after(_req(ttl=3600)) == (NOW + datetime.timedelta(hours=1), [])
    assert leaf_not_after(_req(role_ttl=7200)) == (NOW + datetime.timedelta(hours=2), [])
    assert leaf_not_after(_req()) == (NOW + datetime.timedelta(hours=768), [])
    not_after, warnings = leaf_not_after(_req(ttl=100 * 3600, role_max_ttl=72 * 3600))
    assert not_after == NOW + datetime.timedelta(hours=72)
    assert warnings == ['TTL "100h0m0s" is longer than permitted maxTTL "72h0m0s", so maxTTL is being used']
    assert leaf_not_after(_req(role_max_ttl=720 * 3600))[1] == [
        'TTL "768h0m0s" is longer than permitted maxTTL "720h0m0s", so maxTTL is being used']
    assert leaf_not_after(_req(ttl=90, role_max_ttl=60))[1] == [
        'TTL "1m30s" is longer than permitted maxTTL "1m0s", so maxTTL is being used']


def test_not_after_ignores_max_ttl_and_excludes_ttl():
    assert leaf_not_after(_req(not_after="2030-07-01T00:00:00Z", role_ttl=60, role_max_ttl=3600)) == (
        datetime.datetime(2030, 7, 1, tzinfo=UTC), [])
    # upstream still clamps (and warns about) the unused default TTL when the role has only a max_ttl
    assert leaf_not_after(_req(not_after="2030-07-01T00:00:00Z", role_max_ttl=3600)) == (
        datetime.datetime(2030, 7, 1, tzinfo=UTC),
        ['TTL "768h0m0s" is longer than permitted maxTTL "1h0m0s", so maxTTL is being used'])
    with pytest.raises(ValidityError, match="^Either ttl or not_after should be provided. Both should not be provided "
                                            "in the same request.$"):
        leaf_not_after(_req(ttl=60, not_after="2030-07-01T00:00:00Z"))
    with pytest.raises(ValidityError, match="^not_after_bound is set to forbid. not_after cannot be provided.$"):
        leaf_not_after(_req(not_after="2030-07-01T00:00:00Z", not_after_bound="forbid"))


def test_issuer_not_after_behaviours():
    ca_end = NOW + datetime.timedelta(days=1)
    frac_now = NOW + datetime.timedelta(microseconds=377434)
    with pytest.raises(ValidityError) as info:
        leaf_not_after(_req(now=frac_now, ttl=2 * 86400, issuer_not_after=ca_end))
    assert str(info.value) == ("cannot satisfy request, as TTL would result in notAfter of 2030-06-03T12:00:00.377434Z "
                               "that is beyond the expiration of the CA certificate at 2030-06-02T12:00:00Z")
    assert leaf_not_after(_req(ttl=2 * 86400, issuer_not_after=ca_end, leaf_not_after_behavior="truncate"))[0] == ca_end
    assert leaf_not_after(_req(ttl=2 * 86400, issuer_not_after=ca_end, leaf_not_after_behavior="permit"))[0] == \
        NOW + datetime.timedelta(days=2)


def test_not_before_bounds():
    assert leaf_not_before(_req(not_before="2030-05-01T00:00:00Z")) == datetime.datetime(2030, 5, 1, tzinfo=UTC)
    assert leaf_not_before(_req()) is None
    with pytest.raises(ValidityError, match="^not_before_bound is set to forbid. not_before cannot be provided.$"):
        leaf_not_before(_req(not_before="2030-05-01T00:00:00Z", not_before_bound="forbid"))
    with pytest.raises(ValidityError) as info:
        leaf_not_before(_req(not_before="2030-06-01T11:00:00Z", not_before_bound="duration"))
    assert str(info.value) == ("not_before_bound is set to duration. Cannot satisfy request as it would result in "
                               "notBefore of 2030-06-01T11:00:00Z that is older than the allowed not_before_duration of 30s")
    assert leaf_not_before(_req(not_before="2030-06-01T11:59:45Z", not_before_bound="duration")) == \
        datetime.datetime(2030, 6, 1, 11, 59, 45, tzinfo=UTC)


@pytest.mark.parametrize("value, message", [
    ("tomorrow", 'parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"'),
    ("2030-13-01T00:00:00Z", 'parsing time "2030-13-01T00:00:00Z": month out of range'),
    ("2030-02-30T00:00:00Z", 'parsing time "2030-02-30T00:00:00Z": day out of range'),
    ("2030-01-01T00:00:00", 'parsing time "2030-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'),
    ("2030-01-01 00:00:00Z", 'parsing time "2030-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse '
                             '" 00:00:00Z" as "T"'),
    ("2030-01-01T00:00:00Zjunk", 'parsing time "2030-01-01T00:00:00Zjunk": extra text: "junk"'),
    ("2030-01-01T25:00:00Z", 'parsing time "2030-01-01T25:00:00Z": hour out of range'),
])
def test_rfc3339_errors(value, message):
    with pytest.raises(ValidityError) as info:
        parse_rfc3339(value)
    assert str(info.value) == message


def test_rfc3339_values():
    assert parse_rfc3339("2030-01-01T00:00:00.5+01:00") == datetime.datetime(2029, 12, 31, 23, 0, 0, 500000, tzinfo=UTC)
    assert parse_rfc3339("9999-12-31T23:59:59Z").year == 9999
    assert go_rfc3339nano(datetime.datetime(2030, 1, 1, 0, 0, 0, 120000, tzinfo=UTC)) == "2030-01-01T00:00:00.12Z"
