"""The user guide (docs/guide) stays true: it builds with Sphinx with warnings as errors, every example it
shows is a file under docs/guide/examples/ that a page includes, and every example runs as written
when copied into a new project (a fresh pytester directory, its own pytest process) next to the
guide's ``conftest.py`` and the seed files of fixtures/."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
EXAMPLES = GUIDE / "examples"
PAGES = sorted(p for p in GUIDE.rglob("*.md") if EXAMPLES not in p.parents)
INCLUDE = re.compile(r"^```\{literalinclude\} (\S+)", re.M)
# each folder of examples/ is one project: its files, the shared conftest.py and the seed files
GROUPS = sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "__pycache__")


def included_files():
    """``{resolved path: [pages]}`` of every ``literalinclude`` in the guide's pages."""
    found: dict = {}
    for page in PAGES:
        for target in INCLUDE.findall(page.read_text()):
            found.setdefault((page.parent / target).resolve(), []).append(page.relative_to(GUIDE))
    return found


def test_the_guide_builds_with_warnings_as_errors(tmp_path):
    """The build a reader runs (sphinx-build -W), in a few seconds: a broken cross-reference, a missing
    included file or a docstring autodoc cannot parse fails here."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                             "-d", str(tmp_path / "doctrees"), str(GUIDE), str(tmp_path / "html")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    api = (tmp_path / "html" / "api.html").read_text()
    assert "SchedpkiHandle" in api and "assert_issued" in api  # autodoc found the package


def test_every_example_is_shown_and_every_shown_file_exists():
    included = included_files()
    for path in included:
        assert path.is_file(), f"{included[path]} include {path}, which does not exist"
    examples = {p.resolve() for p in EXAMPLES.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert examples - set(included) == set(), "examples no page shows"


def test_pages_show_code_only_from_files():
    """Code a reader could copy comes from a file that runs: no page holds a Python, ini or YAML block
    of its own (console sessions are fine)."""
    for page in PAGES:
        inline = re.findall(r"^```(python|ini|yaml|toml)\b", page.read_text(), re.M)
        assert inline == [], f"{page.relative_to(GUIDE)} shows {inline} inline: make it a file in examples/"


def test_the_seed_files_shown_are_the_fixture_files():
    yaml_files = sorted(p for p in included_files() if p.suffix == ".yaml")
    assert yaml_files == sorted((ROOT / "fixtures").glob("*.yaml"))


def test_every_how_to_page_is_in_the_table_of_contents():
    listed = set(re.findall(r"^([\w-]+)$", (GUIDE / "howto" / "index.md").read_text(), re.M))
    assert listed == {p.stem for p in (GUIDE / "howto").glob("*.md")} - {"index"}


@pytest.mark.parametrize("group", GROUPS, ids=lambda p: p.name)
def test_examples_run_as_written_in_a_new_project(pytester, group):
    (pytester.path / "conftest.py").write_text((EXAMPLES / "conftest.py").read_text())
    for seed in (ROOT / "fixtures").glob("*.yaml"):
        (pytester.path / seed.name).write_text(seed.read_text())
    expected = 0
    for path in group.iterdir():
        if path.is_file():
            (pytester.path / path.name).write_text(path.read_text())
            if path.name.startswith("test_"):
                expected += len(re.findall(r"^def test_", path.read_text(), re.M))
    assert expected > 0
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider",
                                           "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=expected)
