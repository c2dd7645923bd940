"""Intentional divergences the differential fuzzer accepts, each pointing at its row of
``docs/divergences.md`` (the row's first cell, checked by ``test_differential.py``).

An entry matches only when EVERY difference found for a request is explained by it: a narrow
predicate over the request and both answers. Anything not listed fails the fuzzer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import parity_harness as h
import requests as http

from .requests_gen import Req


@dataclass(frozen=True)
class Allowed:
    """``row``: the first cell of the divergences.md row; ``applies(req, bao, double, problems)``."""

    row: str
    applies: Callable[[Req, http.Response, http.Response, list[str]], bool]


def _errors(resp: http.Response) -> list[str]:
    j = h.body_json(resp)
    return j.get("errors") or [] if isinstance(j, dict) else []


def _both_error_texts(bao_has: str, double_has: str) -> Callable:
    """Same status, one error each: bao's contains ``bao_has``, the double's ``double_has``."""

    def applies(req, bao, double, problems) -> bool:
        be, de = _errors(bao), _errors(double)
        return (bao.status_code == double.status_code and len(be) == len(de) == 1 and bao_has in be[0]
                and double_has in de[0] and all(p.startswith(("errors:", "value differs at $.errors")) for p in problems))

    return applies


ENTRIES: list[Allowed] = [
    Allowed("CSR/certificate parse errors",
            _both_error_texts("could not be parsed", "could not be parsed")),
]


def match(req: Req, bao: http.Response, double: http.Response, problems: list[str]) -> str | None:
    """The divergences.md row explaining every problem of this exchange, or ``None``."""
    for entry in ENTRIES:
        if entry.applies(req, bao, double, problems):
            return entry.row
    return None
