"""The scheduler's ACL reads as the pytest plugin runs them: python-nomad from the test's own thread
against the in-process double, each beside its ceiling (run by hand, not collected by pytest).

    python benchmarks/sched_inprocess.py            # 5 interleaved rounds
    python benchmarks/sched_inprocess.py --quick    # 2 rounds, a quarter of the calls

No Nomad runs here, so each row is the ratio to a ceiling, as the secrets side's in-process rows
(:mod:`inprocess`, issue 27): the same python-nomad call answered by a null WSGI application that
holds the double's real answer to it (status, the application's headers in order, ``X-Nomad-*``
included, and body), reached through the same in-process transport
(:mod:`pytest_schedpki.wire.clients`). The client does the same work on both; what differs is the
double's own share: its middleware (control endpoints, faults, journal) and the scheduler's request
pipeline. The calls: read the caller's own token (``/v1/acl/token/self``), read an auth method, list
the tokens (4 of them), read a policy, all with the management token. CPU time of this thread per call
(``time.thread_time``), double and ceiling interleaved round by round (the order alternates); target
0.8 (the ceiling's CPU over the double's, median of the rounds' own ratios). The log also shows each
call's exchange-level CPU (``wire.inprocess.exchange`` alone, no client) for both applications.
:func:`rows` is what :mod:`inprocess` (``benchmarks/run.py --sections inprocess``) calls.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import nomad  # noqa: E402
import procs  # noqa: E402
from report import Row, measured  # noqa: E402

TARGET = 0.8  # issue 27: reads, as the secrets side's read role

METHOD = {"Name": "m1", "Type": "OIDC", "TokenLocality": "local", "MaxTokenTTL": "1h", "Default": False,
          "Config": {"OIDCDiscoveryURL": "https://idp.example.com/", "OIDCClientID": "client",
                     "OIDCClientSecret": "s3cret", "BoundAudiences": ["client"],
                     "AllowedRedirectURIs": ["http://localhost:4649/oidc/callback"]}}
POLICY = {"Name": "p1", "Description": "read the default namespace",
          "Rules": 'namespace "default" {\n  policy = "read"\n}\n'}

CALLS = {  # key -> (label, path the call sends, calls per round (full run))
    "self": ("python-nomad read own ACL token (token/self)", "/v1/acl/token/self", 1000),
    "method": ("python-nomad read ACL auth method", "/v1/acl/auth-method/m1", 1000),
    "tokens": ("python-nomad list ACL tokens (4)", "/v1/acl/tokens", 1000),
    "policy": ("python-nomad read ACL policy", "/v1/acl/policy/p1", 1000),
}

#: what the listener adds around the application's headers (``wire.inprocess._head``)
_LISTENER_HEADERS = ("date", "connection", "transfer-encoding")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _calls(client: nomad.Nomad):
    acl = client.acl
    return {
        "self": lambda: acl.get_self_token(),
        "method": lambda: acl.request("auth-method", "m1", method="get").json(),
        "tokens": lambda: acl.get_tokens(),
        "policy": lambda: acl.get_policy("p1"),
    }


class _NullServer:
    """A routed listener whose application answers every request with one fixed answer: ``status``
    (the WSGI status line), ``headers`` (the application's, in order) and ``body`` (no double)."""

    name = "null"
    ssl_context = None
    app = None
    server_software = "Werkzeug"

    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes, port: int) -> None:
        self.host, self.port, self.url = "127.0.0.1", port, f"http://127.0.0.1:{port}"
        self._status, self._headers, self._body = status, headers, body

    def _guarded(self, environ, start_response):
        start_response(self._status, list(self._headers))
        return [self._body]


def _cpu_per_call(call, count: int) -> float:
    """CPU microseconds of this thread per call of ``call`` (``count`` calls)."""
    cpu = time.thread_time()
    for _ in range(count):
        call()
    return (time.thread_time() - cpu) / count * 1e6


def _set_up(double) -> None:
    """The workload: auth method ``m1``, policy ``p1``, three client tokens holding it (with the
    bootstrap token, four in the list)."""
    state = double.scheduler
    state.upsert_auth_method(METHOD)
    admin = nomad.Nomad(address=double.scheduler_url, token=double.management_token)
    admin.acl.create_policy("p1", POLICY)
    for i in range(3):
        admin.acl.create_token({"Name": f"t{i}", "Type": "client", "Policies": ["p1"]})


def _null_server(double, path: str, headers: list[tuple[str, str]]) -> _NullServer:
    """A null listener holding the double's answer to ``GET path`` (its application's status line,
    headers and body, as the in-process exchange returned them)."""
    from pytest_schedpki.wire.bytes_response import BytesResponse
    from pytest_schedpki.wire.inprocess import exchange

    answer = exchange(double.scheduler_server, "GET", path, headers)
    assert answer.status == 200, (path, answer.status, answer.body)
    status = BytesResponse(b"", answer.status, []).status  # werkzeug's WSGI status line for the code
    app_headers = [(k, v) for k, v in answer.headers if k.lower() not in _LISTENER_HEADERS]
    return _NullServer(status, app_headers, answer.body, procs.free_port())


def request_rows(rounds: int, scale: float) -> list[Row]:
    from pytest_schedpki import Double
    from pytest_schedpki.wire import clients as hooks
    from pytest_schedpki.wire.inprocess import exchange

    double = Double(rsa_key_pool=0).start()
    try:
        double.route_in_process()
        _set_up(double)
        token = double.management_token
        client = nomad.Nomad(address=double.scheduler_url, token=token)
        calls = _calls(client)
        wire_headers = [("Host", f"127.0.0.1:{double.scheduler_server.port}"), ("User-Agent", "python-requests"),
                        ("Accept-Encoding", "gzip, deflate"), ("Accept", "*/*"), ("Connection", "keep-alive"),
                        ("X-Nomad-Token", token)]
        nulls = {key: _null_server(double, path, wire_headers) for key, (_, path, _) in CALLS.items()}
        null_calls = {key: _calls(nomad.Nomad(address=server.url, token=token))[key] for key, server in nulls.items()}
        cpu: dict[str, dict[str, list[float]]] = {key: {"double": [], "ceiling": [], "app": [], "null app": []}
                                                  for key in CALLS}
        for r in range(rounds):
            for key, (_, path, per_round) in CALLS.items():
                count = max(10, int(per_round * scale))
                for target in (("double", "ceiling") if r % 2 == 0 else ("ceiling", "double")):
                    if target == "double":
                        calls[key]()  # warm
                        cpu[key]["double"].append(_cpu_per_call(calls[key], count))
                    else:
                        hooks.route(nulls[key])
                        try:
                            null_calls[key]()
                            cpu[key]["ceiling"].append(_cpu_per_call(null_calls[key], count))
                        finally:
                            hooks.unroute(nulls[key])
                for name, server in (("app", double.scheduler_server), ("null app", nulls[key])):
                    cpu[key][name].append(_cpu_per_call(lambda s=server, p=path: exchange(s, "GET", p, wire_headers),
                                                        count))
            log(f"sched round {r + 1} (us CPU per call): " + "; ".join(
                f"{k} " + " ".join(f"{t} {v[-1]:.0f}" for t, v in s.items()) for k, s in cpu.items()))
    finally:
        double.route_in_process(False)
        double.stop()
    return [Row(f"{label}: CPU per call against its ceiling", "real column: the ceiling (python-nomad on the null "
                "application holding the double's answer)", "us", cpu[key]["double"], cpu[key]["ceiling"],
                higher_is_better=False, target=TARGET, paired=True)
            for key, (label, _, _) in CALLS.items()]


def rows(rounds: int = 5, scale: float = 1.0) -> list[Row]:
    """The scheduler's in-process rows (see the module doc): ``rounds`` interleaved rounds of ``scale``
    times the full call counts."""
    return request_rows(rounds, scale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, a quarter of the calls")
    args = parser.parse_args(argv)
    rounds, scale = (2, 0.25) if args.quick else (args.rounds, 1.0)
    measured(lambda: rows(rounds, scale), f"unpinned; {rounds} rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
