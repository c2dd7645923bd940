"""Problems of a whole seed file name the file and the problem, with no placeholder entry."""

import pytest

from pytest_schedpki import Double
from pytest_schedpki.errors import SeedError


@pytest.mark.parametrize("text, problem", [
    ("- just\n- a list\n", "the top level must be a mapping, got list"),
    ("secrets: [unclosed\n", "invalid YAML: "),
])
def test_whole_file_problems(tmp_path, text, problem):
    seed = tmp_path / "seed.yaml"
    seed.write_text(text)
    with pytest.raises(SeedError) as exc:
        Double().seed(seed)
    assert str(exc.value).startswith(f"{seed}: {problem}")
    assert "<" not in str(exc.value).split(":", 2)[1]


def test_missing_file():
    with pytest.raises(SeedError) as exc:
        Double().seed("nope.yaml")
    assert str(exc.value) == "nope.yaml: cannot read file: No such file or directory"
    assert (exc.value.source, exc.value.entry) == ("nope.yaml", "")

