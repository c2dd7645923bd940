"""README.md stays true: its two set-up commands match CI, and every Python snippet is a test."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_command():
    first_block = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert README.index("```bash") < README.index("\n## ")
    serve, tests = (line.split("#")[0].strip() for line in first_block)
    assert serve == "pip install . && schedpki serve"
    assert tests == 'pip install -e ".[test,parity]" && python -m pytest'
    ci = (ROOT / ".ci" / "run").read_text()
    assert tests.replace("pip install", "python3 -m pip install").replace("python -m pytest", "python3 -m pytest") in ci


def test_every_python_snippet_is_code_of_a_test():
    sources = "\n".join(p.read_text() for folder in ("examples", "tests") for p in (ROOT / folder).rglob("*.py"))
    snippets = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(snippets) >= 15
    missing = [s.splitlines()[0] for s in snippets if s.strip() not in sources]
    assert not missing, f"README snippets not found in examples/ or tests/: {missing}"
