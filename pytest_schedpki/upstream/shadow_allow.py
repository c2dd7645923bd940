"""The intentional divergences shadow mode does not report: one place, each entry pointing at its
row of ``docs/divergences.md`` (section and "where" column).

An entry names the request (method and a regular expression over the path without ``/v1/`` and
query) and what of the answers is set aside before comparing: JSON paths (``data.cluster_id``;
``*`` matches any one key) whose values are ignored, and ``only_double_keys`` - paths of objects
whose keys are compared only for the keys the double has (the real server lists more).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Allowed:
    method: str
    path: str  # regular expression, full match, over the path without /v1/
    ignore: tuple[str, ...] = ()
    only_double_keys: tuple[str, ...] = ()
    divergence: str = ""  # "<section> / <where>" in docs/divergences.md
    _pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", re.compile(self.path))

    def applies(self, method: str, path: str) -> bool:
        return self.method in (method, "*") and self._pattern.fullmatch(path) is not None


ALLOWED: tuple[Allowed, ...] = (
    Allowed("GET", r"sys/mounts", only_double_keys=("data", ""),
            divergence="Secrets service / default mounts"),
)


def allowed_for(method: str, path: str) -> list[Allowed]:
    """The entries that apply to ``method path`` (path without ``/v1/`` and query)."""
    return [entry for entry in ALLOWED if entry.applies(method, path)]
