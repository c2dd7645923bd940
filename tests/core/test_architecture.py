"""The package keeps its shape (docs/architecture.md): imports point one way and never form a cycle.

The import graph is read from the source with ``ast`` (nothing is imported). An import inside a
function counts like a module-level one: a function-level import may save start-up time, but it
must not hide a cycle. Imports under ``if TYPE_CHECKING:`` only name types and are left out of the
cycle check; the layer rules below still see them where they say "even for types".
"""

from __future__ import annotations

import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "pytest_schedpki"
PKG = "pytest_schedpki"
PKI = f"{PKG}.secrets.engines.pki"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str, path: pathlib.Path, known: set[str]) -> list[tuple[str, bool]]:
    """``(imported module, only for types)`` for every import of the package in ``path``: relative
    imports resolved, ``from package import module`` read as the module."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, types_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                for stmt in child.body:
                    visit_one(stmt, True)
                for stmt in child.orelse:
                    visit_one(stmt, types_only)
            else:
                visit_one(child, types_only)

    def visit_one(node: ast.AST, types_only: bool) -> None:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.append((candidate if candidate in known else target, types_only))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, types_only) for alias in node.names)
        else:
            visit(node, types_only)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return [(target, types_only) for target, types_only in found if target == PKG or target.startswith(PKG + ".")]


@functools.cache
def _all_imports() -> dict[str, list[tuple[str, bool]]]:
    modules = _modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


@functools.cache
def import_graph(types_too: bool = False) -> dict[str, set[str]]:
    """Module -> the package modules it imports (at any depth of its code)."""
    return {name: {t for t, types_only in found if (types_too or not types_only) and t != name}
            for name, found in _all_imports().items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` when it is acyclic."""
    state: dict[str, int] = {}  # 1 visiting, 2 done
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = walk(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = walk(start)
            if cycle:
                return cycle
    return None


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    assert f"{PKG}.secrets.engines.registry" in graph[f"{PKG}.secrets.service"]
    assert f"{PKI}.codecs.keypool" in graph[f"{PKI}.codecs.keys"]  # from . import keypool
    assert f"{PKG}.testing" in graph[PKG]  # a function-level import counts
    assert f"{PKI}.backend" not in graph[f"{PKI}.revocation.crl"]  # a TYPE_CHECKING one does not
    assert f"{PKI}.backend" in import_graph(types_too=True)[f"{PKI}.revocation.crl"]


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_between_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# (modules, modules they may import at all, even for types); None: no rule
PROCESS = f"{PKG}.process"
HCL = f"{PKG}.hcl"
LAYERS = [
    (f"{PKG}.golang", {f"{PKG}.golang"}),
    (HCL, {HCL, f"{PKG}.golang"}),
    (PROCESS, {PROCESS}),
    (f"{PKG}.wire", {f"{PKG}.wire", f"{PKG}.journal", f"{PKG}.faults", PROCESS}),
    (f"{PKG}.ui", {f"{PKG}.ui", f"{PKG}.scheduler", f"{PKG}.secrets", f"{PKG}.journal", f"{PKG}.faults",
                   f"{PKG}.clock", f"{PKG}.wire", f"{PKG}.errors", PROCESS}),
    (f"{PKG}.scheduler", {f"{PKG}.scheduler", f"{PKG}.golang", HCL, f"{PKG}.clock", f"{PKG}.errors", PROCESS,
                          f"{PKG}.wire.bytes_response"}),
    (f"{PKG}.scheduler.acl", {f"{PKG}.scheduler.acl", f"{PKG}.golang", HCL}),
    (f"{PKG}.scheduler.agent", {f"{PKG}.scheduler.agent", f"{PKG}.scheduler.request", f"{PKG}.scheduler.model",
                                f"{PKG}.scheduler.state", f"{PKG}.scheduler.aclstore.resolve", f"{PKG}.scheduler.acl",
                                f"{PKG}.golang"}),
    (f"{PKG}.secrets", {f"{PKG}.secrets", f"{PKG}.golang", HCL, f"{PKG}.wire", f"{PKG}.clock", f"{PKG}.errors", PROCESS}),
    (f"{PKG}.secrets.auth", {f"{PKG}.secrets.auth", f"{PKG}.secrets.framework", f"{PKG}.golang", PROCESS}),
    (f"{PKG}.secrets.engines.pki", {PKI, f"{PKG}.secrets.framework", f"{PKG}.golang", PROCESS}),
    (f"{PKI}.codecs", {f"{PKI}.codecs", f"{PKG}.secrets.framework", f"{PKG}.golang", PROCESS}),
    (f"{PKI}.authority", {PKI, f"{PKG}.secrets.framework", f"{PKG}.golang", PROCESS}),
]


@pytest.mark.parametrize(("layer", "allowed"), LAYERS, ids=[layer.removeprefix(PKG + ".") for layer, _ in LAYERS])
def test_each_layer_imports_only_what_its_docstring_allows(layer, allowed):
    graph = import_graph(types_too=True)
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _in(m, layer)
                   for t in targets if not _in(t, *allowed))
    assert not wrong, wrong


def test_both_services_share_one_hcl1_parser():
    """HCL1 lives once, in the ``hcl/`` foundation; both services' policy decoders import it."""
    graph = import_graph()
    assert f"{HCL}.hcl1" in graph[f"{PKG}.secrets.policy_parser"]
    assert f"{HCL}.hcl1" in graph[f"{PKG}.scheduler.acl.policy"]
    copies = sorted(m for m in graph if m.rsplit(".", 1)[-1].startswith("hcl1") and not _in(m, HCL))
    assert not copies, copies


def test_framework_needs_no_service_engine_or_auth_method_at_run_time():
    graph = import_graph()
    allowed = (f"{PKG}.secrets.framework", f"{PKG}.golang", f"{PKG}.wire")
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _in(m, f"{PKG}.secrets.framework")
                   for t in targets if not _in(t, *allowed))
    assert not wrong, wrong


def test_engines_and_auth_methods_never_import_the_service_even_for_types():
    graph = import_graph(types_too=True)
    host = [f"{PKG}.secrets.service", f"{PKG}.secrets.http", f"{PKG}.secrets.system", f"{PKG}.secrets.seed",
            f"{PKG}.secrets.acl", f"{PKG}.double"]
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items()
                   if _in(m, f"{PKG}.secrets.engines", f"{PKG}.secrets.auth") for t in targets if _in(t, *host))
    assert not wrong, wrong


def test_the_service_knows_engines_only_through_the_registry():
    graph = import_graph(types_too=True)
    outside = [m for m in graph if not _in(m, f"{PKG}.secrets.engines")]
    wrong = sorted(f"{m} -> {t}" for m in outside if _in(m, f"{PKG}.secrets") for t in graph[m]
                   if _in(t, f"{PKG}.secrets.engines") and t != f"{PKG}.secrets.engines.registry")
    assert not wrong, wrong


def test_the_authority_never_calls_revocation_code():
    """Issuers announce changes (``PkiBackend.issuers_changed``); the CRL side listens."""
    graph = import_graph(types_too=True)
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _in(m, f"{PKI}.authority")
                   for t in targets if _in(t, f"{PKI}.revocation"))
    assert not wrong, wrong


def test_only_the_user_surface_imports_the_user_surface():
    surface = [f"{PKG}.{m}" for m in ("plugin", "handle", "factories", "testing", "sso_testing", "cli", "upstream")]
    graph = import_graph(types_too=True)
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if not _in(m, *surface) and m != PKG
                   for t in targets if _in(t, *surface))
    assert not wrong, wrong


def test_every_sub_package_says_what_lives_there_and_what_it_may_import():
    for init in ROOT.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if init.parent == ROOT:
            continue  # the package itself documents its public names
        assert "import" in doc, f"{init.relative_to(ROOT.parent)}: docstring must state its import rules"


def test_modules_and_folders_stay_small():
    too_long = sorted(f"{_module_name(p)}: {n}" for p in ROOT.rglob("*.py")
                      if (n := len(p.read_text(encoding="utf-8").splitlines())) > 440)
    assert not too_long, too_long
    crowded = sorted(f"{d.relative_to(ROOT.parent)}: {n}" for d in [ROOT, *ROOT.rglob("*/")]
                     if d.is_dir() and (n := len([p for p in d.glob("*.py") if p.name != "__init__.py"])) > 13)
    assert not crowded, crowded
