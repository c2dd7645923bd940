"""Wildcard names in Nomad's ACL (``github.com/ryanuber/go-glob`` ``Glob``, and ``acl/acl.go``
``findClosestMatchingGlob``).

:func:`glob` matches ``*`` as any run of characters, each literal part found at its first place
left to right. :func:`closest` picks, among the wildcard names that match, the one with the
smallest ``len(name) - len(pattern) + count("*")`` (lengths in UTF-8 bytes, as Go counts them);
ties go as Go's ``sort.SliceStable`` with the ``<=`` comparison Nomad writes leaves them (of the
first 20 matches in byte order, the last one).
"""

from __future__ import annotations

from typing import TypeVar

from ...golang.glob import go_glob
from ...golang.sort import slice_stable

T = TypeVar("T")


glob = go_glob  # ``glob.Glob``


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def matching_wildcards(patterns: dict[str, T], name: str) -> list[tuple[str, int, T]]:
    """``findAllMatchingWildcards``: ``(pattern, difference, value)`` for every pattern that
    matches ``name``, in the radix tree's (byte) order; ``difference`` is
    ``len(name) - len(pattern) + count("*")`` in bytes."""
    return [(pattern, _size(name) - _size(pattern) + pattern.count("*"), value)
            for pattern, value in sorted(patterns.items(), key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
            if glob(pattern, name)]


def closest(patterns: dict[str, T], name: str) -> T | None:
    """``findClosestMatchingGlob`` over ``{wildcard pattern: value}``: the value of the closest
    matching pattern, or ``None`` when none matches."""
    matches = matching_wildcards(patterns, name)
    if not matches:
        return None
    if len(matches) > 1:
        slice_stable(matches, lambda x, y: x[1] <= y[1])
    return matches[0][2]
