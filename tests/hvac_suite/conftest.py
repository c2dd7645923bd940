"""Fixtures of the hvac suite: hvac's sdist (downloaded once into build/, skipped when the package
index is unreachable) and a scratch folder for the runs' reports."""

from __future__ import annotations

import os
import sys

import pytest

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # `import hvac_sdist` in any import mode
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hvac_sdist  # noqa: E402


@pytest.fixture(scope="session")
def hvac_sdist_root():
    """The unpacked ``hvac-<version>/`` directory of hvac's pinned sdist."""
    try:
        return hvac_sdist.sdist_root()
    except hvac_sdist.SdistUnavailable as exc:
        pytest.skip(f"hvac's sdist (its integration tests) is unavailable: {exc}")
