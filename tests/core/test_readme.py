"""README.md stays true: its two set-up commands match CI, its seed files are the ones in fixtures/, and
every Python snippet runs as written when copied into a new project (a fresh pytester directory, its
own pytest process) next to the ``conftest.py``, seed files and ``pytest.ini`` the README shows."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
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


SECTIONS = {section.splitlines()[0][3:].strip(): section for section in re.split(r"\n(?=## )", README)[1:]}
SHARED_FILES = {name: body for _, name, body in blocks(README) if name and not name.endswith(".ini")}
SECTIONS_WITH_TESTS = [title for title, text in SECTIONS.items()
                       if any(lang == "python" and name is None for lang, name, _ in blocks(text))]


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_command():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert README.index("```bash") < README.index("\n## ")
    serve, tests = (line.split("#")[0].strip() for line in first_block)
    assert serve == "pip install . && schedpki serve"
    assert tests == 'pip install -e ".[test,parity]" && python -m pytest -n auto'
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests.replace("pip install", "python3 -m pip install").replace("python -m pytest", "python3 -m pytest") in ci


def test_the_readme_seed_files_are_the_fixture_files_verbatim():
    yaml_files = {name: body for language, name, body in blocks(README) if language == "yaml"}
    assert sorted(yaml_files) == ["pki.yaml", "scheduler.yaml", "service.yaml"]
    for name, body in yaml_files.items():
        assert body == (ROOT / "fixtures" / name).read_text(), f"README's {name} differs from fixtures/{name}"


def test_every_snippet_section_is_run():
    assert "conftest.py" in SHARED_FILES
    assert len(SECTIONS_WITH_TESTS) >= 9
    tests = sum(len(re.findall(r"^def test_", body, re.M)) for _, name, body in blocks(README) if name is None)
    assert tests >= 17


def section_ini(title):
    """The ``pytest.ini`` a section shows (its snippets run with it), or None."""
    return next((body for _, name, body in blocks(SECTIONS[title]) if name == "pytest.ini"), None)


# sections that show the same pytest.ini (most show none) run together: one pytest process per group
GROUPS: dict = {}
for _title in SECTIONS_WITH_TESTS:
    GROUPS.setdefault(section_ini(_title), []).append(_title)


@pytest.mark.parametrize("titles", list(GROUPS.values()), ids=lambda titles: "+".join(t.split()[0] for t in titles))
def test_snippets_run_as_written_in_a_new_project(pytester, titles):
    for name, body in SHARED_FILES.items():
        (pytester.path / name).write_text(body)
    ini = section_ini(titles[0])
    if ini is not None:
        (pytester.path / "pytest.ini").write_text(ini)
    expected = 0
    for number, title in enumerate(titles):
        for index, (language, name, body) in enumerate(blocks(SECTIONS[title])):
            if language == "python" and name is None:
                (pytester.path / f"test_snippet_{number}_{index}.py").write_text(body)
                expected += len(re.findall(r"^def test_", body, re.M))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider",
                                           "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=expected)
