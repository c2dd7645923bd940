"""Errors the double raises to its Python callers (not HTTP errors, which go on the wire)."""

from __future__ import annotations


class SeedError(ValueError):
    """A seed file or seed mapping is invalid.

    The message always names the source (file path or ``<dict>``), the entry (a dotted path such as
    ``scheduler.auth_methods[1].Type``) and the problem, as ``"<source>: <entry>: <problem>"``; a
    problem of the whole file (unreadable, not YAML, not a mapping) has no entry (``entry=""``) and
    reads ``"<source>: <problem>"``.
    """

    def __init__(self, source: str, entry: str, problem: str):
        self.source = source
        self.entry = entry
        self.problem = problem
        super().__init__(f"{source}: {entry}: {problem}" if entry else f"{source}: {problem}")
