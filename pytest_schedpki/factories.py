"""Factories with valid defaults for what tests seed most, going straight to the backends (no HTTP).

Each returns what the API would return for the same request: the scheduler's auth method JSON (as
``GET /v1/acl/auth-method/:name`` shows it, secret redacted), a token record, or the secrets
service's response ``data`` (``auth`` for tokens). Errors are the API's: ``SchedulerError`` (with
``.status``/``.text``) or ``LogicalError`` (``.status``/``.errors``). Secrets factories run the
same pipeline as HTTP requests, with the root token.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from .scheduler.aclstore.objects import Policy, Role, policy_to_dict, role_to_dict
from .scheduler.encode import method_to_dict
from .scheduler.model import sanitize
from .scheduler.sso.rules import BindingRule, rule_to_dict
from .secrets.framework.logical import LogicalError
from .secrets.http import dispatch
from .sso_testing import idp_public_key_pem

if TYPE_CHECKING:  # pragma: no cover
    from .scheduler.state import SchedulerState
    from .secrets.service import SecretsService

_counter = itertools.count(1)


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class SchedulerFactories:
    """``schedpki.factories.scheduler``: auth methods, binding rules, policies, roles and ACL tokens.

    ``url`` is the scheduler's base URL (for methods that use the built-in identity provider);
    ``ca_pem`` the listeners' CA certificate when they serve HTTPS (an OIDC method using the built-in
    provider then trusts it: ``DiscoveryCaPem``)."""

    def __init__(self, state: SchedulerState, url: str = "", ca_pem: str | None = None):
        self.state = state
        self.url = url
        self.ca_pem = ca_pem

    def _method(self, body: dict[str, Any]) -> dict[str, Any]:
        return method_to_dict(sanitize(self.state.upsert_auth_method(body)))

    def oidc_auth_method(self, name: str | None = None, builtin_idp: bool = False, **overrides: Any) -> dict[str, Any]:
        """Create an OIDC auth method (defaults: TokenLocality ``local``, MaxTokenTTL ``1h``, discovery
        URL ``https://idp.example.com``, client ID/secret, one audience and redirect URI); keyword
        arguments use Nomad's field names and override or extend the defaults (``Config`` merges).
        With ``builtin_idp`` the method logs in against the double's own identity provider
        (discovery URL ``<scheduler url>/idp``, client ID and audience ``nomad``; over TLS,
        ``DiscoveryCaPem`` holds the double's CA).
        Returns the API JSON of the stored method (secret ``redacted``). Raises SchedulerError 400."""
        body = {
            "Name": name or f"oidc-{next(_counter)}", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h",
            "Config": {"OIDCDiscoveryURL": "https://idp.example.com", "OIDCClientID": "client-id",
                       "OIDCClientSecret": "client-secret", "BoundAudiences": ["client-id"],
                       "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]},
        }
        if builtin_idp:
            body["Config"].update({"OIDCDiscoveryURL": self.url + "/idp", "OIDCClientID": "nomad",
                                   "BoundAudiences": ["nomad"]})
            if self.ca_pem:
                body["Config"]["DiscoveryCaPem"] = [self.ca_pem]
        return self._method(_merge(body, overrides))

    def jwt_auth_method(self, name: str | None = None, builtin_idp: bool = False, **overrides: Any) -> dict[str, Any]:
        """Create a JWT auth method (defaults: TokenLocality ``global``, MaxTokenTTL ``1h``, a JWKS URL,
        one bound audience ``nomad``); overrides as for :meth:`oidc_auth_method`. With ``builtin_idp``
        the method trusts the double's IdP key (JWTValidationPubKeys), so ``schedpki.scheduler.jwt()``
        mints tokens it accepts."""
        body = {
            "Name": name or f"jwt-{next(_counter)}", "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
            "Config": {"JWKSURL": "https://idp.example.com/.well-known/jwks.json", "BoundAudiences": ["nomad"],
                       "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]},
        }
        if builtin_idp:
            body["Config"] = {**body["Config"], "JWKSURL": "", "JWTValidationPubKeys": [idp_public_key_pem(self.state)]}
        return self._method(_merge(body, overrides))

    def binding_rule(self, auth_method: str, bind_type: str = "policy", bind_name: str = "", selector: str = "",
                     description: str = "") -> dict[str, Any]:
        """Create a binding rule (``ACL.UpsertBindingRules``); returns its API JSON (``ID``, ``Hash``...).
        Raises SchedulerError 400 with Nomad's text (validation, unknown auth method)."""
        rule = BindingRule(Description=description, AuthMethod=auth_method, Selector=selector, BindType=bind_type,
                           BindName=bind_name)
        return rule_to_dict(self.state.binding_rules.upsert(rule).method)

    def policy(self, name: str, rules: str = "", description: str = "") -> dict[str, Any]:
        """Create or overwrite ACL policy ``name``; returns its API JSON. ``rules`` are validated as
        Nomad does (``acl.Parse``): bad rules raise ``SchedulerError`` 400 with Nomad's text."""
        self.state.acl.upsert_policy(Policy(name, description, rules))
        return policy_to_dict(self.state.acl.policies[name])

    def role(self, name: str, policies: list[str], description: str = "") -> dict[str, Any]:
        """Create ACL role ``name`` linking existing ``policies`` (names); returns its API JSON."""
        return role_to_dict(self.state.acl.upsert_role(Role("", name, description, tuple(policies)))[1])

    def token(self, type: str = "client", name: str = "", secret_id: str | None = None, **kwargs: Any):  # noqa: A002
        """Create an ACL token (``type`` ``management`` or ``client``); returns the token record
        (``SecretID``, ``AccessorID``, ``Type``, ``Global``, times, indexes). Extra keyword arguments
        go to ``SchedulerState.add_token`` (``expiration_time``, ``global_``, ``accessor_id``)."""
        return self.state.add_token(secret_id=secret_id, type=type, name=name, **kwargs)


class SecretsFactories:
    """``schedpki.factories.secrets``: PKI mounts, issuers, roles, KV mounts and secrets, AppRole
    credentials, tokens with policies."""

    def __init__(self, service: SecretsService):
        self.service = service

    def _call(self, operation: str, path: str, data: dict[str, Any]):
        return dispatch(self.service, operation, path, data, self.service.root_token)

    def mount(self, path: str = "pki", max_lease_ttl: str = "87600h", **config: Any) -> dict[str, Any]:
        """Enable a PKI mount at ``path`` and tune it (``max_lease_ttl`` default 87600h; more tune
        fields as keywords). Returns the mount as ``GET /v1/sys/mounts/:path`` shows it."""
        path = path.strip("/")
        self._call("update", f"sys/mounts/{path}", {"type": "pki"})
        tune = {"max_lease_ttl": max_lease_ttl, **config}
        self._call("update", f"sys/mounts/{path}/tune", tune)
        return self._call("read", f"sys/mounts/{path}", {}).data

    def root_issuer(self, mount: str = "pki", common_name: str = "schedpki Test Root CA", **params: Any) -> dict[str, Any]:
        """Generate a root on ``mount`` (created with :meth:`mount` if missing): EC P-256, ttl 87600h
        unless overridden; any ``root/generate/internal`` parameter as keywords (``issuer_name``,
        ``key_type``, ``ttl``...). Returns that endpoint's ``data`` (certificate, issuer_id, key_id...)."""
        mount = mount.strip("/")
        if mount + "/" not in self.service.mounts:
            self.mount(mount)
        body = {"common_name": common_name, "key_type": "ec", "key_bits": 256, "ttl": "87600h", **params}
        return self._call("update", f"{mount}/root/generate/internal", body).data

    def intermediate_issuer(self, mount: str = "pki_int", parent_mount: str = "pki",
                            common_name: str = "schedpki Test Intermediate CA", parent_issuer_ref: str = "default",
                            ttl: str = "43800h", **params: Any) -> dict[str, Any]:
        """Create an intermediate on ``mount`` signed by ``parent_mount``'s issuer (a root is made there
        first when it has none): ``intermediate/generate/internal`` -> ``issuer/:ref/sign-intermediate``
        -> ``intermediate/set-signed``. Returns the sign-intermediate ``data`` plus ``issuer_id`` of
        the imported intermediate."""
        mount, parent_mount = mount.strip("/"), parent_mount.strip("/")
        if parent_mount + "/" not in self.service.mounts or not self.service.mount(parent_mount).backend.state.issuers:
            self.root_issuer(parent_mount)
        if mount + "/" not in self.service.mounts:
            self.mount(mount)
        generate = {"common_name": common_name, "key_type": "ec", "key_bits": 256, **params}
        csr = self._call("update", f"{mount}/intermediate/generate/internal", generate).data["csr"]
        signed = self._call("update", f"{parent_mount}/issuer/{parent_issuer_ref}/sign-intermediate",
                            {"csr": csr, "common_name": common_name, "ttl": ttl, "format": "pem_bundle"}).data
        imported = self._call("update", f"{mount}/intermediate/set-signed", {"certificate": signed["certificate"]}).data
        return {**signed, "issuer_id": imported["imported_issuers"][0]}

    def role(self, name: str = "test", mount: str = "pki", **params: Any) -> dict[str, Any]:
        """Create role ``name`` on ``mount`` (defaults: allowed_domains ``example.com`` with subdomains
        and bare domains, EC P-256 keys, ttl 1h, max_ttl 24h). Returns the role as the API echoes it.
        Without a PKI mount at ``mount``: LogicalError 404 whose text names the missing mount and the
        factories that create it (:meth:`mount`, :meth:`root_issuer`)."""
        mount = mount.strip("/")
        if mount + "/" not in self.service.mounts:
            raise LogicalError(404, [
                f"no handler for route \"{mount}/roles/{name}\": there is no mount at {mount}/ - create it first with "
                f"schedpki.factories.secrets.mount({mount!r}) (or .root_issuer(mount={mount!r}), which also makes "
                f"a root CA), or a seed's secrets.mounts entry"])
        body = {"allowed_domains": ["example.com"], "allow_subdomains": True, "allow_bare_domains": True,
                "key_type": "ec", "key_bits": 256, "ttl": "1h", "max_ttl": "24h", **params}
        return self._call("update", f"{mount}/roles/{name}", body).data

    def policy(self, name: str, text: str) -> dict[str, Any]:
        """Write ACL policy ``name`` (HCL or JSON text); returns it as ``GET sys/policies/acl/:name``."""
        self._call("update", f"sys/policies/acl/{name}", {"policy": text})
        return self._call("read", f"sys/policies/acl/{name}", {}).data

    def token(self, policies: dict[str, str] | list[str] | None = None, ttl: str = "1h", **params: Any) -> dict[str, Any]:
        """Create a token. ``policies`` is a list of existing policy names, or ``{name: policy text}``
        (written first). Returns the ``auth`` block (``client_token``, ``policies``, ...)."""
        names: list[str] = []
        if isinstance(policies, dict):
            for name, text in policies.items():
                self.policy(name, text)
                names.append(name)
        elif policies:
            names = list(policies)
        body = {"policies": names, "ttl": ttl, **params}
        return self._call("update", "auth/token/create", body).auth


    def kv_mount(self, path: str = "secret", version: int = 2, description: str = "") -> dict[str, Any]:
        """Enable a KV mount (``type: kv``, ``options.version`` 1 or 2) at ``path`` unless one is
        there already. Returns the mount as ``GET /v1/sys/mounts/:path`` shows it."""
        path = path.strip("/")
        if path + "/" not in self.service.mounts:
            self._call("update", f"sys/mounts/{path}", {"type": "kv", "options": {"version": str(version)},
                                                       "description": description})
        return self._call("read", f"sys/mounts/{path}", {}).data

    def kv_secret(self, path: str, data: dict[str, Any], mount: str = "secret", cas: int | None = None) -> dict[str, Any] | None:
        """Write ``data`` at ``path`` on KV mount ``mount`` (a version-2 ``secret/`` mount is created
        when missing). Version 2: a new version, returns the write's ``data`` (``version``,
        ``created_time``, ...); ``cas`` as ``options.cas``. Version 1: replaces the value, returns
        ``None``. Errors are the API's LogicalError (e.g. 400 ``check-and-set parameter did not match
        the current version``)."""
        mount = mount.strip("/")
        if mount + "/" not in self.service.mounts:
            self.kv_mount(mount)
        if self.service.mount(mount).backend.version == 2:
            body: dict[str, Any] = {"data": dict(data)}
            if cas is not None:
                body["options"] = {"cas": cas}
            return self._call("update", f"{mount}/data/{path.strip('/')}", body).data
        self._call("update", f"{mount}/{path.strip('/')}", dict(data))
        return None


    def approle(self, role: str = "app", mount: str = "approle", role_id: str | None = None,
                secret_id: str | None = None, **fields: Any) -> dict[str, str]:
        """Make AppRole credentials: enable the method at ``auth/<mount>`` when missing, write role
        ``role`` (any ``role/:name`` field as keywords: ``token_policies``, ``token_ttl``,
        ``secret_id_num_uses``, ...), set its ``role_id`` when given, and create a secret ID (the
        given ``secret_id``, else a random one). Returns ``{"role_id", "secret_id",
        "secret_id_accessor"}`` - what a service needs for ``auth/<mount>/login``."""
        mount = mount.strip("/")
        if mount + "/" not in self.service.auth_mounts:
            self._call("update", f"sys/auth/{mount}", {"type": "approle"})
        base = f"auth/{mount}/role/{role}"
        self._call("update", base, dict(fields))
        if role_id:
            self._call("update", f"{base}/role-id", {"role_id": role_id})
        created = (self._call("update", f"{base}/custom-secret-id", {"secret_id": secret_id}) if secret_id
                   else self._call("update", f"{base}/secret-id", {})).data
        return {"role_id": self._call("read", f"{base}/role-id", {}).data["role_id"],
                "secret_id": created["secret_id"], "secret_id_accessor": created["secret_id_accessor"]}


class Factories:
    """Both services' factories: ``.scheduler`` and ``.secrets``."""

    def __init__(self, scheduler: SchedulerState, secrets: SecretsService, scheduler_url: str = "",
                 ca_pem: str | None = None):
        self.scheduler = SchedulerFactories(scheduler, scheduler_url, ca_pem)
        self.secrets = SecretsFactories(secrets)
