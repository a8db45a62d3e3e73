"""No import cycles in workbench/ and plugins/, found by walking every import statement (AST).

Edges are counted in three kinds: module level (run on import), under ``if TYPE_CHECKING:``
(only type checkers run them, but a cycle there is still two modules that know each other)
and inside functions (lazy imports); the check runs in three rounds (module level, then with
TYPE_CHECKING, then with lazy imports) so a failure says which kind closed the cycle; all
must find none.  Besides modules, the
packages of workbench.core and of workbench.ui must form no cycle either, so each can be read
(and tested) after the ones it builds on (docs/architecture.md).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE, TYPE_ONLY, LAZY = "module", "type-checking", "lazy"


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for workbench/ (as ``workbench.…``) and plugins/* (as ``workbench_x.…``)."""
    out: dict[str, Path] = {}
    for base, top in ((root, root / "workbench"), (root / "plugins", root / "plugins")):
        for f in sorted(top.rglob("*.py")):
            parts = list(f.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def import_edges(name: str, path: Path, modules: dict[str, Path]) -> set[tuple[str, str]]:
    """(imported module, kind) for every import in ``path`` that names a module of ``modules``.

    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``.  A
    module's own parent packages are not counted: Python has already imported them when it runs it.
    """
    is_package = path.name == "__init__.py"
    edges: set[tuple[str, str]] = set()

    def resolve(dotted: str) -> str | None:
        parts = dotted.split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in modules:
                return candidate
        return None

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            child_kind = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                child_kind = LAZY
            elif isinstance(child, ast.If) and _is_type_checking(child.test) and kind == MODULE:
                child_kind = TYPE_ONLY
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[:len(package) - (child.level - 1)]
                    base = ".".join(package + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in child.names] + [base]
            else:
                targets = []
            for t in targets:
                target = resolve(t)
                if target and target != name and not name.startswith(target + "."):
                    edges.add((target, child_kind))
            visit(child, child_kind)

    visit(ast.parse(path.read_text(encoding="utf-8")), MODULE)
    return edges


def import_graph(root: Path) -> dict[str, set[tuple[str, str]]]:
    modules = module_files(root)
    return {name: import_edges(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _only(graph: dict[str, set[tuple[str, str]]], kinds: set[str]) -> dict[str, set[str]]:
    return {m: {t for t, k in edges if k in kinds} for m, edges in graph.items()}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[tuple[str, str]]]:
    g = import_graph(ROOT)
    assert len(g) > 100 and "workbench.ui.launch.launch_wizard" in g and "workbench_aws.provider" in g
    return g


def test_no_module_level_import_cycle(graph):
    assert cycles(_only(graph, {MODULE})) == []


def test_no_import_cycle_even_for_type_checking(graph):
    assert cycles(_only(graph, {MODULE, TYPE_ONLY})) == []


def test_no_import_cycle_even_through_lazy_imports(graph):
    assert cycles(_only(graph, {MODULE, TYPE_ONLY, LAZY})) == []


def _package_graph(graph: dict[str, set[tuple[str, str]]], prefix: str) -> dict[str, set[str]]:
    """workbench.core.<pkg> (or workbench.ui.<pkg>) → the sibling packages its modules import."""
    depth = prefix.count(".") + 2

    def package(m: str) -> str | None:
        return ".".join(m.split(".")[:depth]) if m.startswith(prefix + ".") else None

    out: dict[str, set[str]] = defaultdict(set)
    for m, edges in graph.items():
        src = package(m)
        if src is None:
            continue
        out[src].update(t for t in (package(t) for t, _ in edges) if t and t != src)
    return out


@pytest.mark.parametrize("prefix", ["workbench.core", "workbench.ui"])
def test_packages_form_no_cycle(graph, prefix):
    packages = _package_graph(graph, prefix)
    assert len(packages) >= 6
    assert cycles(packages) == []


# -- the walker itself ------------------------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, set[tuple[str, str]]]:
    (tmp_path / "plugins").mkdir()
    for rel, text in files.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return import_graph(tmp_path)


def test_the_walker_sees_each_kind_of_cycle(tmp_path):
    g = _tree(tmp_path, {
        "workbench/__init__.py": "",
        "workbench/a.py": "from workbench import b\n",
        "workbench/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from workbench.c import X\n",
        "workbench/c.py": "def f():\n    from . import a\n",
        "workbench/pkg/__init__.py": "from .inner import y\n",
        "workbench/pkg/inner.py": "import workbench.pkg.other\n",
        "workbench/pkg/other.py": "",
    })
    assert g["workbench.a"] == {("workbench.b", MODULE)}
    assert g["workbench.b"] == {("workbench.c", TYPE_ONLY)}
    assert g["workbench.c"] == {("workbench.a", LAZY)}
    assert g["workbench.pkg.inner"] == {("workbench.pkg.other", MODULE)}  # its own package is not an edge
    assert cycles(_only(g, {MODULE})) == []
    assert cycles(_only(g, {MODULE, TYPE_ONLY})) == []
    assert cycles(_only(g, {MODULE, TYPE_ONLY, LAZY})) == [["workbench.a", "workbench.b", "workbench.c"]]
