"""The double as the pytest plugin runs it: in the test's process, hvac from the test's thread, unpinned
(run by hand, not collected by pytest).

    python benchmarks/inprocess.py            # 5 interleaved rounds
    python benchmarks/inprocess.py --quick    # 2 rounds, fewer requests

Three targets get the same hvac calls from this thread, round by round in alternating order: the
double in this process with the ``inprocess`` transport, the same double over TCP (``tcp``: its
listener threads share this process's GIL), and a real ``bao server -dev`` process over TCP. Each
has the workload of :mod:`pki` (a ``pki`` mount with an RSA-2048 root, roles ``ec`` and ``rsa``).
Rows: issue EC P-256, sign an RSA-2048 CSR, read a role (req/s, "double over bao"), hvac's own cost
against a null application (the in-process path answering a canned body: what bounds any double), and
"import + start + set-up + first issuance" (a fresh interpreter with requests and hvac loaded
vs bao's process from ``Popen``; ms). The scheduler's ACL reads (python-nomad, against their ceilings) come
from :mod:`sched_inprocess`. :func:`rows` is what ``benchmarks/run.py`` calls.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import hvac  # noqa: E402
import pki  # noqa: E402
import procs  # noqa: E402
import requests  # noqa: E402
from report import Row, measured  # noqa: E402

CALLS = {  # name -> (label, calls per round (full run))
    "issue": ("hvac issue EC P-256 (RSA-2048 root)", 300),
    "sign": ("hvac sign an RSA-2048 CSR (RSA-2048 root)", 300),
    "read": ("hvac read role", 1000),
}

CEILING_TARGET = {"read": 0.8, "issue": 0.5, "sign": 0.5}  # issue 27: the double's share of each call

_FIRST_ISSUE = r"""
import time
started = time.perf_counter()
import requests, hvac
imported = time.perf_counter()
from pytest_schedpki import Double
double = Double().start()
double.route_in_process()
client = hvac.Client(url=double.secrets_url, token="root")
client.sys.enable_secrets_engine("pki", path="pki", config={"max_lease_ttl": "87600h"})
client.secrets.pki.generate_root("internal", "schedpki Example Root CA", mount_point="pki",
                                 extra_params={"key_type": "ec", "key_bits": 256, "ttl": "87600h", "issuer_name": "root"})
client.secrets.pki.create_or_update_role("example-dot-com", {"allowed_domains": ["example.com"], "allow_subdomains": True,
                                         "ttl": "24h", "max_ttl": "72h", "key_type": "ec", "key_bits": 256}, mount_point="pki")
client.secrets.pki.generate_certificate("example-dot-com", "a.example.com", mount_point="pki")
print(time.perf_counter() - imported)
double.stop()
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _calls(client: hvac.Client, csr: str):
    pki_ = client.secrets.pki
    return {
        "issue": lambda n: pki_.generate_certificate("ec", f"i{n}.example.com", mount_point="pki"),
        "sign": lambda n: pki_.sign_certificate("rsa", csr, f"s{n}.example.com", mount_point="pki"),
        "read": lambda n: pki_.read_role("ec", mount_point="pki"),
    }


_CPU: list[float] = []  # CPU microseconds per call of the last _rate, this thread only


def _rate(call, count: int) -> float:
    """Calls per second of ``call`` (wall clock); the thread's CPU time per call goes to ``_CPU``."""
    started, cpu = time.perf_counter(), time.thread_time()
    for n in range(count):
        call(n)
    _CPU[:] = [(time.thread_time() - cpu) / count * 1e6]
    return count / (time.perf_counter() - started)


class _CannedAdapter:
    """A ``requests`` adapter answering every request with a fixed body itself: hvac's and requests'
    own cost per call, with no transport at all."""

    def __new__(cls, body: bytes):
        import io

        from requests.adapters import HTTPAdapter
        from urllib3._collections import HTTPHeaderDict
        from urllib3.response import HTTPResponse

        class Canned(HTTPAdapter):
            def send(self, request, **kwargs):
                raw = HTTPResponse(body=io.BytesIO(body), status=200, reason="OK", preload_content=False,
                                   headers=HTTPHeaderDict([("Content-Type", "application/json"),
                                                           ("Content-Length", str(len(body)))]))
                return self.build_response(request, raw)

        return Canned()


class _NullServer:
    """A routed listener whose application answers every request with a fixed role read (no double)."""

    name = "null"
    ssl_context = None
    app = None
    server_software = "Werkzeug"

    def __init__(self, body: bytes, port: int) -> None:
        self.host, self.port, self.url = "127.0.0.1", port, f"http://127.0.0.1:{port}"
        self._body = body

    def _guarded(self, environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(self._body)))])
        return [self._body]


def signature_rate(count: int, keygen: bool = False) -> float:
    """Certificates per second that cryptography signs with an RSA-2048 key and nothing else (the
    private-key operation every issuance and sign under an RSA root pays, in bao as in the double);
    ``keygen``: each also generates the EC P-256 key it certifies (what an issuance adds). The CPU
    time per certificate goes to ``_CPU``."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    leaf = ec.generate_private_key(ec.SECP256R1()).public_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bound.example.com")])
    now = datetime.datetime.now(datetime.timezone.utc)
    base = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(hours=1)))
    builder = base.public_key(leaf)
    started, cpu = time.perf_counter(), time.thread_time()
    for n in range(count):
        if keygen:
            builder = base.public_key(ec.generate_private_key(ec.SECP256R1()).public_key())
        builder.serial_number(n + 1).sign(key, hashes.SHA256())
    _CPU[:] = [(time.thread_time() - cpu) / count * 1e6]
    return count / (time.perf_counter() - started)


def first_issue_rows(trials: int) -> list[Row]:
    """Import + start + set-up + first issuance: this package in a fresh interpreter (requests and hvac
    already imported, as in a test session) vs bao from ``Popen`` to the first certificate."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=procs.PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    double, real = [], []
    for trial in range(trials + 1):  # the first pair warms the page and byte-code caches
        for kind in (("double", "real") if trial % 2 == 0 else ("real", "double")):
            if kind == "double":
                out = subprocess.run([sys.executable, "-c", _FIRST_ISSUE], capture_output=True, text=True, env=env,
                                     check=True, timeout=120)
                seconds = float(out.stdout.strip())
            else:
                started = time.perf_counter()
                proc = procs.start_real()
                try:
                    pki.setup_like_default_seed(proc.url, procs.ROOT)
                    client = hvac.Client(url=proc.url, token=procs.ROOT)
                    client.secrets.pki.generate_certificate("example-dot-com", "a.example.com", mount_point="pki")
                    seconds = time.perf_counter() - started
                finally:
                    proc.stop()
            if trial:
                (double if kind == "double" else real).append(seconds * 1000)
    log(f"first issuance ms: double {[round(x) for x in double]} bao {[round(x) for x in real]}")
    return [Row("import + start + set-up + first issuance", "in-process (plugin) vs bao process", "ms", double, real,
                higher_is_better=False, target=1.0)]


def request_rows(rounds: int, scale: float) -> list[Row]:
    from pytest_schedpki import Double

    csr = pki.make_csr()
    real = procs.start_real()
    double = Double(rsa_key_pool=0).start()
    try:
        pki.setup(real.url, procs.ROOT)
        pki.setup(double.secrets_url, procs.ROOT)
        clients = {"bao": hvac.Client(url=real.url, token=procs.ROOT),
                   "double": hvac.Client(url=double.secrets_url, token=procs.ROOT)}
        calls = {kind: _calls(client, csr) for kind, client in clients.items()}
        auth = {"X-Vault-Token": procs.ROOT}
        role = requests.get(f"{double.secrets_url}/v1/pki/roles/ec", headers=auth).content
        answers = {"read": role,  # the double's real answers, canned: hvac's own cost for each call
                   "issue": requests.post(f"{double.secrets_url}/v1/pki/issue/ec", headers=auth,
                                          json={"common_name": "c.example.com"}).content,
                   "sign": requests.post(f"{double.secrets_url}/v1/pki/sign/rsa", headers=auth,
                                         json={"csr": csr, "common_name": "c.example.com"}).content}
        nulls = {key: _NullServer(body, procs.free_port()) for key, body in answers.items()}
        null_calls = {key: _calls(hvac.Client(url=server.url, token=procs.ROOT), csr)[key] for key, server in nulls.items()}
        canned_session = requests.Session()
        canned_session.mount("http://", _CannedAdapter(role))
        canned_client = hvac.Client(url="http://127.0.0.1:1", token=procs.ROOT, session=canned_session)
        samples: dict[str, dict[str, list[float]]] = {key: {"inprocess": [], "tcp": [], "bao": [], "null": [],
                                                            "canned": []} for key in CALLS}
        cpu: dict[str, dict[str, list[float]]] = {key: {"inprocess": [], "hvac": [], "crypto": []} for key in CALLS}
        from pytest_schedpki.wire import clients as hooks

        for r in range(rounds):
            for key, (_, per_round) in CALLS.items():
                count = max(10, int(per_round * scale))
                order = ["inprocess", "tcp", "bao"] if r % 2 == 0 else ["bao", "tcp", "inprocess"]
                for target in order:
                    double.route_in_process(target == "inprocess")
                    call = calls["bao" if target == "bao" else "double"][key]
                    call(-1)  # warm: connection, caches
                    samples[key][target].append(_rate(call, count))
                    if target == "inprocess":
                        cpu[key]["inprocess"].append(_CPU[0])
                hooks.route(nulls[key])  # the ceiling: hvac against the null application holding the real answer
                try:
                    null_rate = _rate(null_calls[key], count)
                finally:
                    hooks.unroute(nulls[key])
                cpu[key]["hvac"].append(_CPU[0])
                if key == "read":
                    samples[key]["null"].append(null_rate)
                else:
                    sig_rate = signature_rate(count, keygen=key == "issue")
                    cpu[key]["crypto"].append(_CPU[0])
                    if key == "sign":
                        samples[key]["null"].append(sig_rate)
                if key == "read":
                    read = lambda n: canned_client.secrets.pki.read_role("ec", mount_point="pki")  # noqa: E731
                    samples[key]["canned"].append(_rate(read, count))
            log(f"round {r + 1}: " + "; ".join(f"{k} " + " ".join(f"{t} {v[-1]:.0f}" for t, v in s.items() if v)
                                                   for k, s in samples.items()))
    finally:
        double.stop()
        real.stop()
    rows = []
    for key, (label, _) in CALLS.items():
        s = samples[key]
        rows.append(Row(label, "in-process double, inprocess transport", "req/s", s["inprocess"], s["bao"], target=None))
        rows.append(Row(label, "in-process double, tcp transport", "req/s", s["tcp"], s["bao"], target=None))
    for key, (label, _) in CALLS.items():  # issue 27: the ratio to the ceiling, CPU per call of this thread
        c = cpu[key]
        ceiling = [h + (c["crypto"][i] if c["crypto"] else 0.0) for i, h in enumerate(c["hvac"])]
        what = "hvac on the null application" + {"read": "", "issue": " + RSA-2048 signature + EC P-256 key",
                                                  "sign": " + RSA-2048 signature"}[key]
        rows.append(Row(f"{label}: CPU per call against its ceiling", f"real column: the ceiling ({what})", "us",
                        c["inprocess"], ceiling, higher_is_better=False, target=CEILING_TARGET[key], paired=True))
    rows.append(Row("RSA-2048 certificate signature alone (cryptography, no HTTP)", "this process, the bound of "
                    "issue and sign", "req/s", samples["sign"]["null"], samples["sign"]["bao"], target=None))
    rows.append(Row("hvac read role, null application (the client's own cost)", "inprocess transport, canned answer",
                    "req/s", samples["read"]["null"], samples["read"]["bao"], target=None))
    rows.append(Row("hvac read role, canned requests adapter (no transport)", "hvac and requests alone", "req/s",
                    samples["read"]["canned"], samples["read"]["bao"], target=None))
    return rows


def rows(rounds: int = 5, scale: float = 1.0, trials: int = 5) -> list[Row]:
    """The in-process rows (see the module doc): ``rounds`` interleaved rounds of ``scale`` times the
    full request counts, ``trials`` fresh first-issuance starts per side; then the scheduler's ACL reads
    against their ceilings (:mod:`sched_inprocess`)."""
    import sched_inprocess

    return request_rows(rounds, scale) + first_issue_rows(trials) + sched_inprocess.rows(rounds, scale)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--trials", type=int, default=5, help="fresh starts per side for the first issuance (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, a quarter of the requests, 2 starts")
    args = parser.parse_args(argv)
    rounds, scale, trials = (2, 0.25, 2) if args.quick else (args.rounds, 1.0, args.trials)
    measured(lambda: rows(rounds, scale, trials), f"unpinned; {rounds} rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
