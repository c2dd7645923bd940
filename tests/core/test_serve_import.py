"""What ``schedpki serve`` imports before its first healthy answer (issue 27: start-up no slower than
``bao server -dev``). Each service imports a route's code when the route is first asked for: the
scheduler's agent, ACL-object and SSO routes (with Nomad's policy parser, HCL, the bexpr grammar, the
OIDC client), the state page's Jinja2, the PKI engine and its ACME server, cryptography's X.509 and
serialization layers. Structural checks over ``sys.modules`` in a fresh interpreter, not timings; and
the routes imported late still answer when their first requests arrive together from several threads."""

import json
import os
import subprocess
import sys

# what the first health answer must not wait for (each loads on the first request that needs it)
NOT_AT_START = (
    "jinja2", "yaml", "jwt", "freezegun", "cryptography.x509", "cryptography.hazmat.primitives.serialization",
    "pytest_schedpki.ui.app", "pytest_schedpki.ui.cert_views", "pytest_schedpki.secrets.engines.pki.backend",
    "pytest_schedpki.secrets.engines.pki.acme", "pytest_schedpki.secrets.engines.pki.codecs.detkeys",
    "pytest_schedpki.secrets.engines.kv", "pytest_schedpki.hcl.hcl1_json", "pytest_schedpki.scheduler.acl.policy",
    "pytest_schedpki.scheduler.aclhttp", "pytest_schedpki.scheduler.agent", "pytest_schedpki.scheduler.sso.bexpr",
    "pytest_schedpki.scheduler.sso.oidc", "pytest_schedpki.scheduler.sso.http",
    "importlib.metadata",  # werkzeug's server looks its version up with it; the listener reads its dist-info
)

# serve() as the console script runs it, up to the addresses it prints (after its listeners answer):
# there the child asks /v1/sys/health once and reports the answer and its modules. The engine preload
# thread serve() starts after listening is left out (it imports the PKI engine on purpose).
SERVE_UNTIL_HEALTHY = """
import http.client, json, os, sys, threading
from urllib.parse import urlsplit
from pytest_schedpki import cli

def report(double, ca_path=None):
    address = urlsplit(double.secrets_url)
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    conn.request("GET", "/v1/sys/health")
    status = conn.getresponse().status
    print("REPORT " + json.dumps({"status": status, "modules": sorted(sys.modules)}), flush=True)
    os._exit(0)

cli.preload_engines = lambda *a: threading.Thread()
cli.env_lines = report
sys.exit(cli.main(["serve", "--scheduler-port", "0", "--secrets-port", "0", "--rsa-key-pool", "0", *sys.argv[1:]]))
"""


def _child_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _serve_until_healthy(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SERVE_UNTIL_HEALTHY, *args], capture_output=True, text=True,
                         timeout=120, env=_child_env())
    lines = [line for line in out.stdout.splitlines() if line.startswith("REPORT ")]
    assert lines, out.stdout + out.stderr
    return json.loads(lines[-1][len("REPORT "):])


def _loaded(modules: list[str], names) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_serve_answers_its_first_health_check_without_the_routes_it_has_not_been_asked_for():
    report = _serve_until_healthy("--no-seed")
    assert report["status"] == 200
    assert _loaded(report["modules"], NOT_AT_START) == []
    # what it needs is there: both services' state and HTTP layers, the listeners
    assert _loaded(report["modules"], ("pytest_schedpki.scheduler.http", "pytest_schedpki.secrets.http",
                                       "werkzeug.serving")) == \
        ["pytest_schedpki.scheduler.http", "pytest_schedpki.secrets.http", "werkzeug.serving"]


CONCURRENT_FIRST_REQUESTS = """
import json, sys, threading, urllib.request
from pytest_schedpki.double import Double

double = Double(rsa_key_pool=0).start()
paths = ["/v1/status/leader", "/v1/acl/policies", "/v1/acl/binding-rules", "/v1/acl/tokens", "/v1/agent/self",
         "/v1/acl/roles", "/v1/acl/auth-methods", "/.well-known/jwks.json"] * 2
results = [None] * len(paths)
barrier = threading.Barrier(len(paths))

def ask(i):
    barrier.wait()
    request = urllib.request.Request(double.scheduler_url + paths[i], headers={"X-Nomad-Token": "root"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            results[i] = response.status
    except urllib.error.HTTPError as exc:
        results[i] = exc.code

threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(paths))]
for t in threads:
    t.start()
for t in threads:
    t.join()
errors = [str(e.exc) for e in double.pop_handler_errors()]
double.stop()
print("REPORT " + json.dumps({"statuses": dict(zip(paths, results)), "errors": errors}))
"""


def test_routes_imported_on_first_use_answer_many_first_requests_at_once():
    out = subprocess.run([sys.executable, "-c", CONCURRENT_FIRST_REQUESTS], capture_output=True, text=True,
                         timeout=120, env=_child_env())
    lines = [line for line in out.stdout.splitlines() if line.startswith("REPORT ")]
    assert lines, out.stdout + out.stderr
    report = json.loads(lines[-1][len("REPORT "):])
    assert report["errors"] == []
    assert report["statuses"] == {path: 200 for path in report["statuses"]}
