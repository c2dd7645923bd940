"""``GET /v1/acl/tokens``: ``ACL.ListTokens`` with Nomad's query options (``nomad/acl_endpoint.go``
``ListTokens``; ``nomad/state/paginator``; ``command/agent/http.go`` ``parse``).

* management only (ACLs off ``400 ACL support disabled``; others ``403 Permission denied``);
* order: by ``(CreateIndex, AccessorID)`` (the table's ``create`` index), or with ``prefix`` by
  AccessorID among the accessors starting with it; ``reverse=true`` reverses either;
* ``filter``: a go-bexpr expression over the token's fields (``Name``, ``Type``, ``Policies``,
  ``Global``, ``AccessorID``, ...); one that does not parse is ``400 failed to create result
  paginator: failed to read filter expression: <parser text>``; one that fails on a token is
  ``400 failed to read result page: <text>``;
* ``per_page`` and ``next_token``: a page of that many stubs; ``X-Nomad-NextToken`` names the
  first token of the next page (``<CreateIndex>.<AccessorID>``, or the AccessorID with ``prefix``);
* index: the token table's, the answer a list of stubs (never null).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...golang.strconv import NumError, parse_uint
from ..model import SchedulerError
from ..sso.bexpr import BexprError, Match, _compiled, evaluate, parse
from ..views import QueryResult
from .token_table import token_view
from .tokens import require_management

_MISSING = object()


class FilterError(ValueError):
    """A filter that fails while evaluating a token (go-bexpr's evaluation error)."""


@dataclass(frozen=True)
class TokenPage:
    """One page: ``stubs`` (tokens, in order) and ``next_token`` (``""`` on the last page)."""

    stubs: list
    next_token: str


def _datum(token, role_names: dict) -> dict:
    return {"AccessorID": token.AccessorID, "SecretID": token.SecretID, "Name": token.Name, "Type": token.Type,
            "Policies": list(token.Policies or ()), "Global": token.Global,
            "Roles": [{"ID": r, "Name": ""} for r in token.Roles or ()],
            "CreateIndex": token.CreateIndex, "ModifyIndex": token.ModifyIndex,
            "ExpirationTTL": token.ExpirationTTL}


def _value(datum: dict, path: tuple[str, ...]):
    node: object = datum
    for key in path:
        if isinstance(node, dict):
            if key not in node:
                raise FilterError(f'error finding value in datum: /{"/".join(path)}: at /{key}: '
                                  f'couldn\'t find key: struct field with name "{key}"')
            node = node[key]
        else:
            raise FilterError(f"error finding value in datum: /{'/'.join(path)}: at /{key}: "
                              "invalid type for selector")
    return node


def _coerce(value: str, like: object):
    if isinstance(like, bool):
        if value not in ("true", "false"):
            raise FilterError(f'error coercing value "{value}": strconv.ParseBool: parsing "{value}": invalid syntax')
        return value == "true"
    if isinstance(like, int):  # the stub's numbers are uint64s: go-bexpr's CoerceUint64, ParseUint(value, 0, 64)
        try:
            return parse_uint(value, 0, 64)
        except NumError as exc:
            raise FilterError(f'error coercing value "{value}": {exc}') from None
    return value


def _match(node: Match, datum: dict) -> bool:
    v = _value(datum, node.path)
    base = node.op.removeprefix("not ").replace("is not", "is").replace("!=", "==")
    negate = node.op != base
    if base == "==":
        if isinstance(v, (list, dict)):
            raise FilterError("Invalid match operator \"Equal\" for collection")
        result = v == _coerce(node.value, v)
    elif base == "contains":
        if isinstance(v, list):
            result = node.value in [x if isinstance(x, str) else x.get("ID") for x in v]
        elif isinstance(v, str):
            result = node.value in v
        else:
            raise FilterError("Invalid match operator \"In\" for a non-collection")
    elif base == "matches":
        if not isinstance(v, str):
            raise FilterError("Invalid match operator \"Matches\" for a non-string")
        compiled = _compiled(node.value)  # RE2 (Go's syntax), linear time
        if compiled is None:
            raise FilterError(f"failed to compile regular expression {json.dumps(node.value)}")
        result = compiled.search(v) is not None
    elif base == "is empty":
        result = len(v) == 0 if isinstance(v, (list, str, dict)) else False
    else:  # is nil
        result = v is None
    return not result if negate else result


def _page(tokens: list, tree, per_page: int, next_token: str, reverse: bool, keyed_by_id: bool) -> TokenPage:
    out = []
    found = next_token == ""
    for token in tokens:
        key = token.AccessorID if keyed_by_id else f"{token.CreateIndex}.{token.AccessorID}"
        if not found:
            passed = key > next_token if reverse else key < next_token
            if passed:
                continue
        if tree is not None:
            try:
                if not evaluate(tree, _datum(token, {}), _match):
                    continue
            except FilterError as exc:
                raise SchedulerError(400, f"failed to read result page: {exc}") from None
        found = True
        if per_page and len(out) == per_page:
            return TokenPage(out, key)
        out.append(token)
    return TokenPage(out, "")


def query_tokens(state, secret: str | None, prefix: str = "", filter_text: str = "", per_page: int = 0,
                 next_token: str = "", reverse: bool = False, min_index: int = 0, wait_ns: int = 0) -> QueryResult:
    """``ACL.ListTokens``: value a :class:`TokenPage`, index the token table's (at least 1)."""
    with state._lock:
        require_management(state, secret)
    tree = None
    if filter_text:
        try:
            tree = parse(filter_text)
        except BexprError as exc:
            raise SchedulerError(
                400, f"failed to create result paginator: failed to read filter expression: {exc}") from None

    def run() -> QueryResult:
        view, table = token_view(state)  # the local region's view (replication knobs)
        tokens = list(view.values())
        if prefix:
            tokens = sorted((t for t in tokens if t.AccessorID.startswith(prefix)), key=lambda t: t.AccessorID)
        else:
            tokens.sort(key=lambda t: (t.CreateIndex, t.AccessorID))
        if reverse:
            tokens.reverse()
        page = _page(tokens, tree, per_page, next_token, reverse, bool(prefix))
        return QueryResult(max(1, table), page)
    return state._blocking(run, None, min_index, wait_ns)
