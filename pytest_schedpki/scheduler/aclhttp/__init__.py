"""HTTP routes of Nomad's ACL objects (``command/agent/acl_endpoint.go``) over the scheduler state.

* ``policies`` - ``/v1/acl/policies``, ``/v1/acl/policy/...``, ``/v1/acl/roles``, ``/v1/acl/role/...``;
* ``tokens`` - ``/v1/acl/bootstrap``, ``/v1/acl/tokens``, ``/v1/acl/token/...`` (CRUD, self,
  one-time tokens); ``token_body`` - the token body as ``ACLToken.UnmarshalJSON`` reads it.

Auth methods are served by ``scheduler/http.py``; binding rules, login and OIDC by ``sso/http.py``.

May import: ``aclstore/``, ``sso/`` (body decoding, JSON), the scheduler's ``request`` and ``views``
(``Remembered``: a stored record's JSON text kept per record), ``golang/``; the
scheduler's ``http`` and ``sso/http`` import it, never ``secrets/`` or the double.
"""

from __future__ import annotations

from werkzeug.wrappers import Request, Response

from . import policies, tokens


def dispatch(state, request: Request, path: str, verb: str) -> Response | None:
    """Answer a policy, role, token or bootstrap route, else None."""
    answer = policies.dispatch(state, request, path, verb)
    return answer if answer is not None else tokens.dispatch(state, request, path, verb)
