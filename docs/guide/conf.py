"""Sphinx configuration of the user guide (docs/guide): MyST Markdown pages, the API page from the
public docstrings (autodoc), every example pulled in from examples/ with ``literalinclude``.

Build: ``sphinx-build -W -b html docs/guide build/guide`` (tests/core/test_guide.py runs it)."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # document this checkout's package, not an installed copy

import pytest_schedpki  # noqa: E402

project = "pytest-schedpki"
release = version = pytest_schedpki.__version__
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["examples"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
html_theme = "alabaster"
html_static_path: list[str] = []
