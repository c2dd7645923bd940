"""ACME problem documents (RFC 8555 section 6.7) as OpenBao writes them (``acme_errors.go``).

A handler raises :class:`AcmeProblem` with one of the names below and the text OpenBao wraps around
it; the answer is ``{"type": "urn:ietf:params:acme:error:<name>", "detail": <text>}`` (keys in that
order, Go's struct order) with ``Content-Type: application/problem+json`` and the name's status.
Upstream writes the text as ``fmt.Errorf("...: %w", ErrX)``, so ``detail`` holds the wrapped
sentinel's own sentence where upstream put the ``%w``; :func:`detail` builds that text.
An error upstream does not map (a Go error of its own) is ``serverInternal`` (500).
"""

from __future__ import annotations

from pytest_schedpki.secrets.framework.logical import LogicalResponse, dumps

PREFIX = "urn:ietf:params:acme:error:"
PROBLEM_JSON = "application/problem+json"

#: name -> (sentinel sentence, status) of ``acme_errors.go``
SENTINELS: dict[str, tuple[str, int]] = {
    "accountDoesNotExist": ("the request specified an account that does not exist", 400),
    "alreadyRevoked": ("the request specified a certificate to be revoked that has already been revoked", 400),
    "badCSR": ("the CSR is unacceptable", 400),
    "badNonce": ("the client sent an unacceptable anti-replay nonce", 400),
    "badPublicKey": ("the JWS was signed by a public key the server does not support", 400),
    "badRevocationReason": ("the revocation reason provided is not allowed by the server", 400),
    "badSignatureAlgorithm": ("the JWS was signed with an algorithm the server does not support", 400),
    "connection": ("the server could not connect to validation target", 500),
    "dns": ("there was a problem with a DNS query during identifier validation", 500),
    "externalAccountRequired": ("the request must include a value for the 'externalAccountBinding' field", 401),
    "incorrectResponse": ("response received didn't match the challenge's requirements", 400),
    "malformed": ("the request message was malformed", 400),
    "orderNotReady": ("the request attempted to finalize an order that is not ready to be finalized", 403),
    "rejectedIdentifier": ("the server will not issue certificates for the identifier", 400),
    "serverInternal": ("the server experienced an internal error", 500),
    "unauthorized": ("the client lacks sufficient authorization", 401),
    "unsupportedIdentifier": ("an identifier is of an unsupported type", 400),
}


def sentence(name: str) -> str:
    """The sentinel sentence of problem ``name``."""
    return SENTINELS[name][0]


class AcmeProblem(Exception):
    """An ACME error answer: ``name`` (a key of :data:`SENTINELS`) and the whole ``detail`` text."""

    def __init__(self, name: str, detail: str | None = None):
        super().__init__(detail or sentence(name))
        self.name = name
        self.detail = detail if detail is not None else sentence(name)

    @classmethod
    def wrap(cls, name: str, text: str) -> AcmeProblem:
        """``fmt.Errorf("<text>: %w", ErrName)``: the text, then the sentinel's sentence."""
        return cls(name, f"{text}: {sentence(name)}")

    @classmethod
    def lead(cls, name: str, text: str) -> AcmeProblem:
        """``fmt.Errorf("%w: <text>", ErrName)``: the sentinel's sentence, then the text."""
        return cls(name, f"{sentence(name)}: {text}")

    @property
    def status(self) -> int:
        return SENTINELS[self.name][1]

    def document(self) -> dict[str, str]:
        """The problem as stored in a challenge's ``error`` (``MarshalForStorage``)."""
        return {"detail": self.detail, "status": self.status, "subproblems": [], "type": PREFIX + self.name}

    def response(self) -> LogicalResponse:
        """The problem answer (``ErrorResponse.Marshal``); response headers are added by the caller."""
        body = dumps({"type": PREFIX + self.name, "detail": self.detail})
        return LogicalResponse(raw=(body.encode(), PROBLEM_JSON), status=self.status)


class AcmeDisabled(Exception):
    """``ErrAcmeDisabled``: the answer is an empty 404 (``TranslateError``)."""


def disabled_response() -> LogicalResponse:
    """What a disabled ACME directory answers: 404, no body, ``Content-Type: application/json``."""
    return LogicalResponse(raw=(b"", "application/json"), status=404)
