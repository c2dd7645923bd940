"""Helpers of the client contract suite (importable from test modules; fixtures live in conftest.py)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest

_PARITY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parity")
if _PARITY_DIR not in sys.path:  # the real-server launcher and certificate helpers live there
    sys.path.insert(0, _PARITY_DIR)

import parity_harness as h  # noqa: E402

_COUNTER = itertools.count(1)
CLI_TIMEOUT = 30  # seconds per bao CLI command


def unique_mount(prefix: str, request) -> str:
    """A mount path unique in the session (the real server is shared by every test)."""
    return h.mount_name_for(prefix + request.node.name, next(_COUNTER))


def not_in_double(request, target, reason: str) -> None:
    """Mark the ``double`` half of a pair as a strict expected failure: the test pins what the real
    server does for a feature the double does not implement (listed in docs/divergences.md). When
    the double gains the feature the XPASS fails, and the mark must go."""
    if target[0] == "double":
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


class Cli:
    """Runs ``bao <args>`` against one server with only ``BAO_ADDR``, ``BAO_TOKEN``, ``PATH`` and a
    private ``HOME``; returns ``CompletedProcess`` (text, both streams)."""

    def __init__(self, url: str, home: str, token: str = "root"):
        self.url = url
        self.env = {"BAO_ADDR": url, "BAO_TOKEN": token, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
        self.binary = h.bao_binary()

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT, input=stdin)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        """Run and require exit 0; returns stdout."""
        done = self(*args, stdin=stdin)
        assert done.returncode == 0, f"bao {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout
