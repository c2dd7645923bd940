#!/usr/bin/env python3
"""Write docs/coverage.md: every endpoint and every parameter of the two API documents, with its state.

    python scripts/coverage_table.py            # (re)write docs/coverage.md
    python scripts/coverage_table.py --check    # exit 1 when docs/coverage.md is stale

Inputs, all in this repository (CI needs nothing else):

* the API documents, **docs/api/scheduler-acl-auth-methods.md** and **docs/api/secrets-pki.md**:
  verbatim copies of the product's spec (``shared/seeds/000_*.txt`` and ``001_*.txt``;
  tests/test_coverage_table.py fails when a copy drifts from ``../shared/seeds`` where that exists).
  Endpoints come from their endpoint tables; parameters from the resource/parameter tables, the
  ``Parameters: a (...); b (...)`` sentences, the shared URL parameter table, the blocking-query and
  consistency columns (``index``/``wait``/``stale``) and the token headers of "Authentication";
* the double itself: a PKI mount's router (``pytest_schedpki/secrets/engines/pki/**/*.py`` ``Path`` patterns,
  with Enterprise emulation on) must route each PKI path with the right operation and declare each
  body parameter; the scheduler app (``pytest_schedpki/scheduler/http.py``) must route each path and
  its model (``scheduler/model.py``) must have each field;
* **scripts/coverage_evidence.yaml**: the reviewed mapping from each row to the tests that exercise
  it, known divergences (with the doc that gives the reason) and what is not implemented (with the
  reason). Every test named there must exist; a test counts as *verified against the real server*
  only when it really runs against ``bao server -dev`` (tests/parity, or a tests/contract test whose
  fixtures reach the ``target`` parametrisation); every named test's source must mention the
  parameter (or, for endpoints, a word of the path or the client method that calls it).

A row that the double does not route, or that has no test, makes the script fail instead of writing a
flattering table.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
API_DIR = ROOT / "docs" / "api"
SPEC_FILES = {"scheduler": "scheduler-acl-auth-methods.md", "pki": "secrets-pki.md"}
SHARED_SEEDS = {"scheduler": "000_f29ba5324657d369.txt", "pki": "001_3d4d415ae4530760.txt"}
EVIDENCE_FILE = ROOT / "scripts" / "coverage_evidence.yaml"
OUTPUT = ROOT / "docs" / "coverage.md"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# states, in the order of the legend
VERIFIED = "verified"
IMPLEMENTED = "implemented"
ENTERPRISE = "enterprise"
DIVERGENCE = "divergence"
NOT_IMPLEMENTED = "not implemented"
STATE_TEXT = {
    VERIFIED: "implemented, verified against OpenBao",
    IMPLEMENTED: "implemented, tested against the double",
    ENTERPRISE: "implemented (Enterprise emulation, not verifiable against OpenBao)",
    DIVERGENCE: "known divergence",
    NOT_IMPLEMENTED: "not implemented",
}


class CoverageError(Exception):
    """The inputs do not support a truthful table (the message says which row and why)."""


# ============================================================================ the documents


@dataclass
class Endpoint:
    service: str          # "scheduler" | "pki"
    operation: str        # the document's operation name
    method: str
    path: str             # as written, e.g. /pki/sign-verbatim(/:name)
    enterprise: bool = False

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class Param:
    service: str
    operation: str        # operation name, or "Authentication"
    name: str             # Config fields as Config.X
    where: str            # body | url | query | header
    source: str           # the section of the document it comes from


@dataclass
class Spec:
    endpoints: list[Endpoint] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    toc: list[str] = field(default_factory=list)  # PKI operations named only in the table of contents


def spec_text(service: str) -> str:
    return (API_DIR / SPEC_FILES[service]).read_text(encoding="utf-8")


def sections(text: str) -> dict[str, str]:
    """``{"### heading" text: body}`` for every ``##``/``###`` heading."""
    out: dict[str, str] = {}
    current, lines = "", []
    for line in text.splitlines():
        m = re.match(r"^#{2,3} (.+)$", line)
        if m:
            out[current] = "\n".join(lines)
            current, lines = m.group(1).strip(), []
        else:
            lines.append(line)
    out[current] = "\n".join(lines)
    return out


def tables(body: str) -> list[list[dict[str, str]]]:
    """Markdown tables of ``body`` as lists of ``{header: cell}``."""
    found: list[list[dict[str, str]]] = []
    block: list[str] = []
    for line in body.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            header = [c.strip() for c in block[0].strip("|").split("|")]
            rows = [[c.strip() for c in row.strip("|").split("|")] for row in block[2:]]
            found.append([dict(zip(header, row, strict=True)) for row in rows])
        block = []
    return found


def names_in_cell(cell: str) -> list[str]:
    """``"alt_names, ip_sans, uri_sans"`` -> three names (backticks stripped)."""
    return [n.strip().strip("`") for n in cell.split(",") if n.strip()]


def split_top_level(text: str, sep: str = ";") -> list[str]:
    """Split on ``sep`` outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def prose_parameters(sentence: str) -> list[str]:
    """Names from ``csr (string, required); alt_names, ttl as for generate (...); format (...)``: the
    identifiers before the first ``(`` or `` as `` of each top-level ``;`` part."""
    names: list[str] = []
    for part in split_top_level(sentence):
        head = re.split(r"\(| as for | passed ", part, maxsplit=1)[0]
        for name in names_in_cell(head):
            if re.fullmatch(r"[a-z][a-z0-9_]*", name):
                names.append(name)
    return names


# PKI section headings whose operation has another name in the endpoint table
PKI_SECTION_OPERATION = {"Revoke certificate with private key": "Revoke with private key"}


def _operation_of_heading(heading: str) -> str:
    heading = PKI_SECTION_OPERATION.get(heading, heading)
    return re.sub(r" \((privileged|extremely privileged|highly privileged)\)$", "", heading)


def parse_scheduler(text: str) -> Spec:
    spec = Spec()
    secs = sections(text)
    for row in tables(secs["Endpoints"])[0]:
        ep = Endpoint("scheduler", row["Operation"], row["Method"], row["Path"].strip("`"))
        spec.endpoints.append(ep)
        for capture in re.findall(r":(\w+)", ep.path):
            spec.params.append(Param("scheduler", ep.operation, capture, "url", "Endpoints"))
        if row["Blocking queries"] == "yes":
            for q in ("index", "wait"):
                spec.params.append(Param("scheduler", ep.operation, q, "query", "Endpoints: Blocking queries = yes"))
        if row["Consistency modes"] == "all":
            spec.params.append(Param("scheduler", ep.operation, "stale", "query", "Endpoints: Consistency modes = all"))
    fields = [r["Field"] for r in tables(secs["Auth method"])[0] if r["Required"] != "response only"]
    config = [r["Field"] for r in tables(secs["Auth method config (`Config`)"])[0]]
    for name in fields:
        spec.params.append(Param("scheduler", "Create auth method", name, "body", "Auth method"))
    for name in config:
        spec.params.append(Param("scheduler", "Create auth method", f"Config.{name}", "body", "Auth method config"))
    update = secs["Update auth method"]
    body_line = next(line for line in update.splitlines() if line.startswith("- Request body:"))
    top, _, config_part = body_line.partition(" with the fields ")
    for name in re.findall(r"\b([A-Z][A-Za-z]+) \(", top):
        spec.params.append(Param("scheduler", "Update auth method", name, "body", "Update auth method"))
    for name in names_in_cell(config_part.split(".")[0]):
        spec.params.append(Param("scheduler", "Update auth method", f"Config.{name}", "body", "Update auth method"))
    # Update also names its path parameter in prose; Delete spells it without the colon
    auth = secs["Authentication"]
    for header in re.findall(r"request header `([A-Za-z-]+)`", auth):
        spec.params.append(Param("scheduler", "Authentication", header, "header", "Authentication"))
    return spec


def parse_pki(text: str) -> Spec:
    spec = Spec()
    secs = sections(text)
    operation = ""
    for row in tables(secs["Endpoints"])[0]:
        operation = row["Operation"] or operation
        enterprise = "(Enterprise)" in operation
        name = operation.replace(" (Enterprise)", "")
        spec.endpoints.append(Endpoint("pki", name, row["Method"], row["Path"].strip("`"), enterprise))
    ops = {ep.operation for ep in spec.endpoints}
    shared = {r["Name"]: r for r in tables(secs["Shared URL parameters"])[0]}
    for op in sorted(ops, key=[e.operation for e in spec.endpoints].index):
        paths = [e.path for e in spec.endpoints if e.operation == op]
        for capture in shared:
            if any(f":{capture}" in p for p in paths):
                spec.params.append(Param("pki", op, capture, "url", "Shared URL parameters"))
    body_params: dict[str, list[tuple[str, str]]] = {}
    for heading, body in secs.items():
        op = _operation_of_heading(heading.replace(" (Enterprise)", ""))
        if op not in ops:
            continue
        found: list[str] = []
        for table in tables(body):
            if table and "Name" in table[0]:
                for row in table:
                    found += names_in_cell(row["Name"])
        m = re.search(r"(?:^|\. )Parameters: (.*)$", body, re.M)
        if m:
            found += prose_parameters(m.group(1))
        m = re.search(r"same serial_number and certificate rules as above, plus `(\w+)`", body)
        if m:  # revoke-with-key: the revoke table plus private_key
            found += [p for p, _ in body_params.get("Revoke certificate", [])] + [m.group(1)]
        body_params[op] = [(n, heading) for n in found]
    for op in sorted(body_params, key=[e.operation for e in spec.endpoints].index):
        for name, heading in body_params[op]:
            if any(p.operation == op and p.name == name for p in spec.params):
                continue  # sign-verbatim's `name` is both its URL and its table parameter
            spec.params.append(Param("pki", op, name, "body", heading))
    auth = secs["Authentication"]
    for header in re.findall(r"request header `([A-Za-z-]+)`", auth):
        spec.params.append(Param("pki", "Authentication", header, "header", "Authentication"))
    m = re.search(r"Operations: (.*?)\.\n", secs["Endpoints"] + "\n")
    if not m:
        raise CoverageError("PKI document: the table-of-contents operation list was not found")
    spec.toc = [op.strip() for op in m.group(1).split(",")]
    return spec


@functools.cache
def load_spec(service: str) -> Spec:
    text = spec_text(service)
    return parse_scheduler(text) if service == "scheduler" else parse_pki(text)


# ============================================================================ the double


PKI_OPERATION = {"GET": "read", "LIST": "list", "POST": "update", "PUT": "update", "DELETE": "delete", "PATCH": "patch"}
SAMPLE_VALUES = {"name": "web", "issuer_ref": "default", "policy": "p1", "method_name": "okta"}


def sample_paths(path: str) -> list[str]:
    """Concrete paths for a documented path: each ``(/:x)`` optional segment absent and present."""
    variants = [path]
    while any("(" in v for v in variants):
        nxt = []
        for v in variants:
            m = re.search(r"\(([^()]*)\)", v)
            if not m:
                nxt.append(v)
                continue
            nxt.append(v[:m.start()] + v[m.end():])
            nxt.append(v[:m.start()] + m.group(1) + v[m.end():])
        variants = nxt
    return [re.sub(r":(\w+)", lambda m: SAMPLE_VALUES[m.group(1)], v) for v in variants]


@functools.cache
def pki_router():
    from pytest_schedpki.clock import SwitchableClock
    from pytest_schedpki.secrets.service import SecretsService

    service = SecretsService(SwitchableClock(), root_token="root")
    service.enterprise = True  # the Enterprise rows are emulated; their routes exist only with the flag on
    mount = service.enable_mount("pki")
    return mount.backend.router


def pki_route(endpoint: Endpoint, sample: str):
    """The double's route for ``sample`` (mount-relative after ``/pki/``) if it serves the method."""
    rel = sample.split("/pki/", 1)[1]
    found = pki_router().match(rel)
    if found is None or PKI_OPERATION[endpoint.method] not in found[0].operations:
        return None
    return found[0]


def pki_routes(endpoint: Endpoint) -> list:
    routes = [pki_route(endpoint, s) for s in sample_paths(endpoint.path)]
    return routes if all(r is not None for r in routes) else []


def scheduler_routed(endpoint: Endpoint) -> bool:
    """Whether the scheduler app routes the path and method (an unrouted path is Nomad's empty 404,
    a wrong method ``405 Invalid method``)."""
    from werkzeug.test import Client

    from pytest_schedpki.clock import SwitchableClock
    from pytest_schedpki.scheduler.http import make_app
    from pytest_schedpki.scheduler.state import SchedulerState

    client = Client(make_app(SchedulerState(SwitchableClock(), management_token="root")))
    resp = client.open("/v1" + sample_paths(endpoint.path)[0], method=endpoint.method,
                       headers={"X-Nomad-Token": "root"})
    body = resp.get_data()
    return not ((resp.status_code == 404 and body == b"") or (resp.status_code == 405 and body == b"Invalid method"))


def scheduler_field_known(name: str) -> bool:
    from pytest_schedpki.scheduler.model import AuthMethod, AuthMethodConfig

    owner, _, leaf = name.rpartition(".")
    cls = AuthMethodConfig if owner == "Config" else AuthMethod
    return leaf in {f.name for f in dataclasses.fields(cls)}


# ============================================================================ evidence


@dataclass
class TestRef:
    ref: str                      # tests/x.py::test_name
    verified: bool                # runs against the real server too
    source: str = field(repr=False, default="")

    @property
    def file(self) -> str:
        return self.ref.split("::")[0]

    @property
    def name(self) -> str:
        return self.ref.split("::")[1]


@functools.cache
def _module(path: str) -> tuple[ast.Module, str]:
    full = ROOT / path
    if not full.is_file():
        raise CoverageError(f"evidence names a missing file: {path}")
    text = full.read_text(encoding="utf-8")
    return ast.parse(text, path), text


def _fixture_args(tree: ast.Module) -> dict[str, list[str]]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
            out[node.name] = [a.arg for a in node.args.args]
    return out


def _reaches_target(start: list[str], fixtures: dict[str, list[str]]) -> bool:
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name == "target":
            return True
        if name in seen:
            continue
        seen.add(name)
        todo += fixtures.get(name, [])
    return False


@functools.cache
def test_ref(ref: str) -> TestRef:
    if "::" not in ref:
        raise CoverageError(f"evidence entry {ref!r} is not 'tests/<file>.py::<test>'")
    path, name = ref.split("::", 1)
    tree, text = _module(path)
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if func is None or not name.startswith("test_"):
        raise CoverageError(f"evidence names a test that does not exist: {ref}")
    source = ast.get_source_segment(text, func) or ""
    source = "\n".join(ast.unparse(d) for d in func.decorator_list) + "\n" + source
    used = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)}
    for node in tree.body:  # module-level constants the test uses (request bodies, parameter tables)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in used for t in node.targets):
            source += "\n" + (ast.get_source_segment(text, node) or "")
    marks = [ast.unparse(d) for d in func.decorator_list]
    if "\npytestmark = pytest.mark.parity" in text or any("mark.parity" in m for m in marks):
        verified = True  # the module or the test is marked parity: it runs against bao server -dev
    elif path.startswith("tests/contract/"):
        fixtures = _fixture_args(_module("tests/contract/conftest.py")[0])
        fixtures.update(_fixture_args(tree))
        verified = _reaches_target([a.arg for a in func.args.args], fixtures)
    else:
        verified = False
    return TestRef(ref, verified, source)


def load_evidence() -> dict:
    with open(EVIDENCE_FILE, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


# ============================================================================ rows


@dataclass
class Row:
    kind: str                     # endpoint | param | toc
    service: str
    operation: str
    label: str                    # path or parameter name
    where: str = ""
    method: str = ""
    state: str = ""
    note: str = ""
    tests: list[TestRef] = field(default_factory=list)


def _check_mentions(tests: list[TestRef], words: list[str], row: str, required: str = "") -> None:
    for t in tests:
        if not any(w in t.source for w in words):
            raise CoverageError(f"{row}: evidence {t.ref} mentions none of {words}")
        if required and required not in t.source:
            raise CoverageError(f"{row}: evidence {t.ref} does not mention {required!r}")


def _endpoint_words(ep: Endpoint, aliases: list[str]) -> list[str]:
    literal = [seg for seg in re.split(r"[/()]", ep.path) if seg and not seg.startswith(":") and seg != "pki"]
    return [literal[-1]] + aliases if literal else aliases


def _resolve(entry: dict | list | None, row: Row, words: list[str], need_verified: bool, required: str = "") -> None:
    """Fill ``row.state``/``row.tests``/``row.note`` from its evidence entry."""
    if entry is None:
        raise CoverageError(f"{row.service} {row.kind} {row.operation} / {row.label}: no entry in {EVIDENCE_FILE.name}")
    if isinstance(entry, list):
        entry = {"tests": entry}
    if "not_implemented" in entry:
        row.state, row.note = NOT_IMPLEMENTED, entry["not_implemented"]
        row.tests = [test_ref(r) for r in entry.get("tests", [])]
        return
    row.tests = [test_ref(r) for r in entry.get("tests", [])]
    if not row.tests:
        raise CoverageError(f"{row.service} {row.operation} / {row.label}: no test named")
    _check_mentions(row.tests, words, f"{row.service} {row.operation} / {row.label}", required)
    if "divergence" in entry:
        doc, _, needle = entry["divergence"].partition("#")
        text = (ROOT / doc).read_text(encoding="utf-8")
        if needle and needle not in text:
            raise CoverageError(f"{row.label}: {doc} does not mention {needle!r}")
        row.state, row.note = DIVERGENCE, f"{entry.get('reason', '')} ([{doc}](../{doc}))".strip()
        return
    verified = any(t.verified for t in row.tests)
    if row.state == ENTERPRISE:
        row.note = "[docs/enterprise.md](enterprise.md)"
        return
    if need_verified and not verified:
        raise CoverageError(f"pki {row.operation} / {row.label}: no test that runs against the real server")
    row.state = VERIFIED if verified else IMPLEMENTED
    row.note = entry.get("note", "")


def build_rows() -> list[Row]:
    evidence = load_evidence()
    rows: list[Row] = []
    for service in ("scheduler", "pki"):
        spec = load_spec(service)
        ev = evidence[service]
        aliases = ev.get("aliases", {})
        for ep in spec.endpoints:
            row = Row("endpoint", service, ep.operation, ep.path, method=ep.method)
            routed = pki_routes(ep) if service == "pki" else scheduler_routed(ep)
            entry = ev["endpoints"].get(ep.key)
            if not routed and not (isinstance(entry, dict) and "not_implemented" in entry):
                raise CoverageError(f"{service} {ep.key}: the double does not route it")
            if routed and isinstance(entry, dict) and "not_implemented" in entry:
                raise CoverageError(f"{service} {ep.key}: routed by the double but listed as not implemented")
            if ep.enterprise:
                row.state = ENTERPRISE
            _resolve(entry, row, _endpoint_words(ep, aliases.get(ep.key, [])), service == "pki" and not ep.enterprise,
                     required="issuer/" if ":issuer_ref" in ep.path else "")
            rows.append(row)
        for p in spec.params:
            row = Row("param", service, p.operation, p.name, where=p.where)
            eps = [e for e in spec.endpoints if e.operation == p.operation]
            entry = ev["params"].get(p.operation, {}).get(p.name)
            follows_upstream = isinstance(entry, dict) and "divergence" in entry
            if service == "pki" and p.where == "body" and not follows_upstream:
                for ep in eps:
                    for route in pki_routes(ep):
                        if p.name not in route.fields:
                            raise CoverageError(f"pki {ep.key}: the double's route does not declare {p.name!r}")
            if service == "scheduler" and p.where == "body" and not scheduler_field_known(p.name):
                raise CoverageError(f"scheduler: the double's model has no field {p.name!r}")
            if eps and all(e.enterprise for e in eps) or (p.name == "cert_metadata"):
                row.state = ENTERPRISE
            leaf = p.name.rpartition(".")[2]
            _resolve(entry, row, [leaf] + ev.get("param_aliases", {}).get(p.name, []),
                     service == "pki" and row.state != ENTERPRISE)
            rows.append(row)
        for op in spec.toc:
            row = Row("toc", service, op, op)
            entry = ev.get("toc", {}).get(op)
            if entry is None:
                raise CoverageError(f"pki table-of-contents operation {op!r}: no entry")
            if "not_implemented" in entry:
                row.state, row.note = NOT_IMPLEMENTED, entry["not_implemented"]
                row.tests = [test_ref(r) for r in entry.get("tests", [])]
            else:
                row.tests = [test_ref(r) for r in entry["tests"]]
                row.note = entry.get("paths", "")
                row.state = ENTERPRISE if entry.get("enterprise") else (
                    VERIFIED if any(t.verified for t in row.tests) else IMPLEMENTED)
                if row.state == ENTERPRISE:
                    row.note += " ([docs/enterprise.md](enterprise.md))"
            rows.append(row)
    rows.extend(acme_rows(evidence))
    return rows


def acme_rows(evidence: dict) -> list[Row]:
    """The ACME paths (beyond the API document: OpenBao's RFC 8555 server) and the double's ACME test
    knobs, from the ``acme`` section of the evidence file; each test must exist and mention its path's
    last literal segment."""
    rows = []
    for label, entry in (evidence.get("acme") or {}).items():
        row = Row("acme", "acme", entry.get("operation", ""), label, method=entry.get("method", ""))
        literal = [seg for seg in re.split(r"[/ (),]", label) if seg and not seg.startswith(":") and seg != "acme"]
        _resolve(entry, row, literal[-1:] + entry.get("aliases", []), need_verified=False)
        rows.append(row)
    return rows


# ============================================================================ rendering


def _tests_cell(tests: list[TestRef], limit: int = 3) -> str:
    shown = []
    for t in sorted(tests, key=lambda t: (not t.verified, t.ref))[:limit]:
        short = t.file.removeprefix("tests/")
        shown.append(f"[`{short}::{t.name}`](../{t.file})")
    more = len(tests) - len(shown)
    return "<br>".join(shown) + (f"<br>+{more} more" if more > 0 else "")


def _count(rows: list[Row]) -> dict[str, int]:
    out = {s: 0 for s in STATE_TEXT}
    for r in rows:
        out[r.state] += 1
    return out


def render(rows: list[Row] | None = None) -> str:
    rows = build_rows() if rows is None else rows
    out: list[str] = []
    w = out.append
    w("# Coverage of the two API documents")
    w("")
    w("<!-- Generated by scripts/coverage_table.py from docs/api/*.md, the double's routes and "
      "scripts/coverage_evidence.yaml. Do not edit: run `python scripts/coverage_table.py`. -->")
    w("")
    w("Every endpoint and every parameter of [the scheduler document](api/scheduler-acl-auth-methods.md) and "
      "[the PKI document](api/secrets-pki.md), with what the double does about it and the tests that show it. "
      "The generator refuses to write a row that the double does not route, that names a test that does not "
      "exist or does not mention the row, or (PKI) that claims verification without a test that runs against "
      "a real `bao server -dev`.")
    w("")
    w("| state | meaning |")
    w("|---|---|")
    w(f"| {STATE_TEXT[VERIFIED]} | routed by the double and exercised by a test that runs the same requests against "
      "OpenBao 2.7.2 (`bao server -dev`, marker `parity`: tests/parity, or a tests/contract test parametrised over "
      "`double` and `bao`) |")
    w(f"| {STATE_TEXT[IMPLEMENTED]} | routed by the double and exercised by its tests; the scheduler half has no real "
      "server here (no Nomad binary), so its expectations come from Nomad's source and tests "
      "(reference/nomad-acl-auth-methods.md) |")
    w(f"| {STATE_TEXT[ENTERPRISE]} | Vault Enterprise features (`(Enterprise)` in the document), emulated from Vault's "
      "public documentation and switched off by default; OpenBao has none of them; see "
      "[docs/enterprise.md](enterprise.md) |")
    w(f"| {STATE_TEXT[DIVERGENCE]} | implemented, but knowingly answers differently from the upstream server; "
      "the linked document gives the reason |")
    w(f"| {STATE_TEXT[NOT_IMPLEMENTED]} | not served by the double (a path gets 404 `unsupported path`); the reason is given |")
    w("")
    w("## Summary")
    w("")
    w("| | " + " | ".join(STATE_TEXT[s] for s in STATE_TEXT) + " | total |")
    w("|---|" + "---|" * (len(STATE_TEXT) + 1))
    for service, title in (("scheduler", "scheduler"), ("pki", "PKI")):
        for kind, label in (("endpoint", "endpoints"), ("param", "parameters"), ("toc", "table-of-contents operations")):
            sel = [r for r in rows if r.service == service and r.kind == kind]
            if not sel:
                continue
            counts = _count(sel)
            w(f"| {title} {label} | " + " | ".join(str(counts[s]) for s in STATE_TEXT) + f" | {len(sel)} |")
    w("")
    for service, title in (("scheduler", "Scheduler: ACL auth methods"), ("pki", "Secrets service: PKI engine")):
        w(f"## {title}")
        w("")
        w("### Endpoints")
        w("")
        w("| operation | method | path | state | evidence |")
        w("|---|---|---|---|---|")
        for r in (r for r in rows if r.service == service and r.kind == "endpoint"):
            state = STATE_TEXT[r.state] + (f": {r.note}" if r.note else "")
            w(f"| {r.operation} | {r.method} | `{r.label}` | {state} | {_tests_cell(r.tests)} |")
        w("")
        w("### Parameters")
        w("")
        w("| operation | parameter | in | state | evidence |")
        w("|---|---|---|---|---|")
        for r in (r for r in rows if r.service == service and r.kind == "param"):
            state = STATE_TEXT[r.state] + (f": {r.note}" if r.note else "")
            w(f"| {r.operation} | `{r.label}` | {r.where} | {state} | {_tests_cell(r.tests)} |")
        w("")
        toc = [r for r in rows if r.service == service and r.kind == "toc"]
        if toc:
            w("### Operations named only in the document's table of contents")
            w("")
            w("The document names these without paths or payloads (\"not shown\"); listed so that nothing it "
              "mentions goes unaccounted for.")
            w("")
            w("| operation | state | paths / reason | evidence |")
            w("|---|---|---|---|")
            for r in toc:
                w(f"| {r.operation} | {STATE_TEXT[r.state]} | {r.note} | {_tests_cell(r.tests)} |")
            w("")
    acme = [r for r in rows if r.kind == "acme"]
    if acme:
        w("## Secrets service: ACME")
        w("")
        w("The document names ACME among the certificate issuance protocols without describing it; the double "
          "serves it as OpenBao 2.7 does (`path_acme_*.go`). Paths are mount-relative under each of the four "
          "directory prefixes `acme/`, `roles/:role/acme/`, `issuer/:ref/acme/`, "
          "`issuer/:ref/roles/:role/acme/`; the last rows are the double's own test knobs (no upstream "
          "counterpart). How to use it: [docs/guide/howto/acme.md](guide/howto/acme.md).")
        w("")
        w("| operation | method | path | state | evidence |")
        w("|---|---|---|---|---|")
        for r in acme:
            state = STATE_TEXT[r.state] + (f": {r.note}" if r.note else "")
            w(f"| {r.operation} | {r.method} | `{r.label}` | {state} | {_tests_cell(r.tests)} |")
        w("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/coverage.md is not up to date")
    args = parser.parse_args(argv)
    try:
        text = render()
    except CoverageError as exc:
        print(f"coverage_table: {exc}", file=sys.stderr)
        return 2
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print("docs/coverage.md is stale: run python scripts/coverage_table.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
