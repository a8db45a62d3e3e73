"""Every ``kind`` the CLI's ``--json`` error output can carry is documented in docs/cli.md, with its exit code
(issue 30: ``connection_lost`` was emitted and documented nowhere).

The kinds are read from the source, not from a list kept by hand: the ``kind`` class attribute of every
:class:`~workbench.core.domain.errors.WorkbenchError` subclass in ``workbench/`` (the CLI prints
``exc.to_json()`` for any of them) and ``plugins/``, with the ``exit_code`` it inherits, plus the literal
``{"kind": …, "message": …, "hint": …}`` documents the CLI writes itself (``internal``), with the exit code
their ``except`` clause returns.  ``workbench/ui`` is left out: the CLI never imports it.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "workbench", ROOT / "plugins"]
SKIP = ROOT / "workbench" / "ui"
DOC = ROOT / "docs" / "cli.md"
BASE = "WorkbenchError"


@dataclass
class ErrorClass:
    name: str
    where: str
    bases: list[str]
    kind: str | None = None
    exit_code: int | None = None
    problems: list[str] = field(default_factory=list)


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # errors.ConfigError
        return node.attr
    return None


def _class_attr(cls: ast.ClassDef, attr: str) -> ast.expr | None:
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
            return stmt.value
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
            return stmt.value
    return None


@functools.cache
def _files() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
            for top in SOURCES for path in sorted(top.rglob("*.py")) if not path.is_relative_to(SKIP)]


def error_classes() -> dict[str, list[ErrorClass]]:
    """Every class, by name (two modules may use the same name), with its literal kind / exit_code."""
    found: dict[str, list[ErrorClass]] = {}
    for path, tree in _files():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            c = ErrorClass(node.name, where, [b for b in map(_base_name, node.bases) if b])
            for attr in ("kind", "exit_code"):
                value = _class_attr(node, attr)
                if value is None:
                    continue
                if isinstance(value, ast.Constant) and isinstance(value.value, str if attr == "kind" else int):
                    setattr(c, attr, value.value)
                else:
                    c.problems.append(f"{where}:{value.lineno}: {node.name}.{attr} is not a literal")
            found.setdefault(node.name, []).append(c)
    return found


def emitted_by_classes() -> dict[str, set[tuple[int, str]]]:
    """kind -> {(exit code, class)} for every WorkbenchError subclass (kind and exit code inherited)."""
    classes = error_classes()
    problems: list[str] = []

    def lineage(c: ErrorClass, seen: tuple[str, ...] = ()) -> list[ErrorClass] | None:
        """c and its ancestors up to WorkbenchError, nearest first; None when it is no WorkbenchError."""
        if c.name == BASE and c.where.endswith("errors.py"):
            return [c]
        for base in c.bases:
            if base in seen:
                continue
            candidates = classes.get(base, [])
            same_file = [b for b in candidates if b.where == c.where]
            for b in same_file or candidates:
                up = lineage(b, seen + (c.name,))
                if up is not None:
                    return [c, *up]
        return None

    out: dict[str, set[tuple[int, str]]] = {}
    for group in classes.values():
        for c in group:
            chain = lineage(c)
            if chain is None:
                continue
            problems += c.problems
            kind = next(x.kind for x in chain if x.kind is not None)
            code = next(x.exit_code for x in chain if x.exit_code is not None)
            out.setdefault(kind, set()).add((code, f"{c.where}:{c.name}"))
    assert not problems, "kinds must be literals so that this test can read them:\n" + "\n".join(problems)
    return out


def emitted_literally() -> dict[str, set[tuple[int | None, str]]]:
    """kind -> {(exit code or None, where)} for error documents the CLI builds as dict literals."""
    out: dict[str, set[tuple[int | None, str]]] = {}
    for path, tree in _files():
        if not path.is_relative_to(ROOT / "workbench" / "cli"):
            continue
        handlers = [h for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler)]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            keys = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
            if not {"kind", "message", "hint"} <= keys.keys():
                continue
            kind = keys["kind"]
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            assert isinstance(kind, ast.Constant) and isinstance(kind.value, str), f"{where}: a kind that is no literal"
            codes: set[int | None] = set()
            for h in handlers:
                if any(n is node for n in ast.walk(h)):
                    codes |= {r.value.value for r in ast.walk(h) if isinstance(r, ast.Return)
                              and isinstance(r.value, ast.Constant) and isinstance(r.value.value, int)}
            for code in codes or {None}:
                out.setdefault(kind.value, set()).add((code, where))
    return out


def documented() -> dict[str, str]:
    """kind -> its exit code cell, from the error-kind table in docs/cli.md (rows "| `kind` | exit | … |")."""
    text = DOC.read_text(encoding="utf-8")
    start = text.find("| kind | exit |")
    assert start >= 0, "docs/cli.md has no error-kind table (| kind | exit | what it means | what to do |)"
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`([a-z_]+)`", cells[0])
        assert m, f"docs/cli.md: a row of the error-kind table without a `kind`: {line}"
        assert len(cells) == 4 and all(cells), f"docs/cli.md: {m[1]} needs its exit code, meaning and what to do"
        rows[m[1]] = cells[1]
    return rows


def test_every_json_error_kind_is_documented_with_its_exit_code():
    emitted: dict[str, set[tuple[int | None, str]]] = {}
    for table in (emitted_by_classes(), emitted_literally()):
        for kind, items in table.items():
            emitted.setdefault(kind, set()).update(items)
    # the scan sees what it must (a scan that finds nothing would pass vacuously)
    assert {"error", "config", "transient", "connection_lost", "internal"} <= emitted.keys()
    doc = documented()
    missing = {k: sorted(w for _, w in v) for k, v in emitted.items() if k not in doc}
    assert not missing, f"kinds the CLI can print and docs/cli.md does not document: {missing}"
    wrong = {k: (doc[k], sorted(v)) for k, v in emitted.items()
             if any(code is not None and str(code) not in re.findall(r"\d+", doc[k]) for code, _ in v)}
    assert not wrong, f"docs/cli.md gives another exit code than the code has (doc, [(code, where)]): {wrong}"
    # the contract is add, never rename: a documented kind that nothing emits any more is a rename or a removal
    stale = sorted(set(doc) - emitted.keys())
    assert not stale, f"docs/cli.md documents kinds nothing emits any more (renamed or removed?): {stale}"


def test_the_scan_agrees_with_the_classes_python_loads():
    """The AST reading matches the imported classes for the CLI's own error tree (inheritance resolved right)."""
    from workbench.core.domain import errors
    from workbench.core.remote import cluster, connection, hostkeys

    by_class = emitted_by_classes()
    for mod in (errors, connection, hostkeys, cluster):
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, errors.WorkbenchError) and obj.__module__ == mod.__name__:
                where = f"{mod.__name__.replace('.', '/')}.py:{obj.__name__}"
                assert (obj.exit_code, where) in by_class.get(obj.kind, set()), (obj, obj.kind, obj.exit_code)
