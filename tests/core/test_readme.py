"""README.md stays true: its two set-up commands match CI, the files it shows are the user guide's example
files and the fixtures/ seed files verbatim, every Python snippet runs as written when copied into a
new project (a fresh pytester directory, its own pytest process) next to the ``conftest.py``,
seed files and ``pytest.ini`` the README shows, and it stays an overview that links every page of
the guide (docs/guide, checked by tests/core/test_guide.py)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
GUIDE = ROOT / "docs" / "guide"
EXAMPLES = GUIDE / "examples"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NAMED = re.compile(r"# ([\w.-]+\.(?:py|yaml|ini))\b")


def blocks(text):
    """``(language, file name or None, body)`` of every fenced block; the file name is the block's
    first line when it is a comment naming one (``# conftest.py``, ``# pki.yaml``, ``# pytest.ini``)."""
    found = []
    for language, body in BLOCK.findall(text):
        named = NAMED.match(body.splitlines()[0]) if body.strip() else None
        found.append((language, named.group(1) if named else None, body))
    return found


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_command():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert README.index("```bash") < README.index("\n## ")
    serve, tests = (line.split("#")[0].strip() for line in first_block)
    assert serve == "pip install . && schedpki serve"
    assert tests == 'pip install -e ".[test,parity]" && python -m pytest -n auto'
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests.replace("pip install", "python3 -m pip install").replace("python -m pytest", "python3 -m pytest") in ci


def source_of(name):
    """The repository file a README block named ``name`` shows: a seed file of fixtures/, the guide's
    shared ``conftest.py``, or a file of the tutorial's examples."""
    if name.endswith(".yaml"):
        return ROOT / "fixtures" / name
    if (EXAMPLES / name).is_file():
        return EXAMPLES / name
    return EXAMPLES / "tutorial" / name


def test_the_files_the_readme_shows_are_the_guide_and_fixture_files_verbatim():
    named = [(name, body) for _, name, body in blocks(README) if name]
    assert sorted(name for name, _ in named) == ["conftest.py", "pytest.ini", "test_first.py"]
    for name, body in named:
        assert body == source_of(name).read_text(), f"README's {name} differs from {source_of(name).relative_to(ROOT)}"


def test_snippets_run_as_written_in_a_new_project(pytester):
    expected = 0
    for index, (language, name, body) in enumerate(blocks(README)):
        if name:
            (pytester.path / name).write_text(body)
        elif language == "python":
            (pytester.path / f"test_snippet_{index}.py").write_text(body)
        if language == "python" and (name is None or name.startswith("test_")):
            expected += len(re.findall(r"^def test_", body, re.M))
    assert expected >= 1
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider",
                                           "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=expected)


def test_the_readme_is_an_overview_that_links_every_guide_page():
    assert len(README.splitlines()) <= 350, "README.md is the overview: put reference text in docs/guide"
    linked = set(re.findall(r"\]\((docs/guide/[\w/.-]+\.md)\)", README))
    pages = {str(p.relative_to(ROOT)) for p in GUIDE.glob("*.md")} | {
        str(p.relative_to(ROOT)) for p in (GUIDE / "howto").glob("*.md") if p.name != "index.md"}
    assert pages - linked == set()
    for target in re.findall(r"\]\(((?:docs|fixtures|examples)/[^)#]*)\)", README):
        assert (ROOT / target).exists(), f"README links {target}, which does not exist"
