"""The AWS plugin's modules import each other without a cycle (errors ↔ quotas was one)."""

from __future__ import annotations

import ast
from pathlib import Path

import workbench_aws


def _graph() -> dict[str, set[str]]:
    folder = Path(workbench_aws.__file__).parent
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names if a.name in names)
        graph[path.stem] = deps & names
    return graph


def test_no_import_cycle_in_the_aws_plugin():
    graph = _graph()
    assert "errors" not in graph["quotas"] and "quotas" in graph["errors"]
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            assert state.get(dep) != 1, " -> ".join(trail + [node, dep])
            if dep not in state:
                visit(dep, trail + [node])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
