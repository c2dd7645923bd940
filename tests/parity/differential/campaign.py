"""Long differential runs by seed: ``N`` requests in sequences drawn by Hypothesis from a fixed seed,
every request compared (nothing stops at the first difference), for ``scripts/differential.py``."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, Phase, given, seed, settings

from . import acme_gen, ocsp_gen, requests_gen, token_gen
from .runner import Outcome, Runner

#: the request families: name -> module with ``sequences(min_size, max_size)``
FAMILIES = {"pki": requests_gen, "token": token_gen, "ocsp": ocsp_gen, "acme": acme_gen}


class _Done(Exception):
    pass


def draw_sequences(seed_value: int, n_requests: int, max_len: int = 10, family: str = "pki") -> list:
    """Sequences (lists of ``Req``) of ``family`` totalling at least ``n_requests`` requests, the same
    for the same seed and code."""
    drawn: list = []
    total = [0]

    @seed(seed_value)
    @settings(max_examples=10 * n_requests, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(FAMILIES[family].sequences(1, max_len))
    def collect(seq):
        if total[0] >= n_requests:
            raise _Done
        drawn.append(seq)
        total[0] += len(seq)

    try:
        collect()
    except _Done:
        pass
    return drawn


def run_seed(runner: Runner, seed_value: int, n_requests: int, family: str = "pki") -> list[Outcome]:
    """Every outcome of one seed's sequences of ``family`` (each on a fresh set-up; ``runner`` must be
    the family's: :class:`Runner` for ``pki`` and ``ocsp``, :class:`~.token_runner.TokenRunner` for ``token``,
    :class:`~.acme_runner.AcmeRunner` for ``acme``)."""
    outcomes: list[Outcome] = []
    for seq in draw_sequences(seed_value, n_requests, family=family):
        outcomes += runner.run(seq)
    return outcomes


def causes(outcomes: list[Outcome]) -> Counter:
    """Disagreements grouped by :meth:`Outcome.cause`, most frequent first via ``most_common``."""
    return Counter(o.cause() for o in outcomes if not o.agree)
