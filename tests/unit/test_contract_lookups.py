"""Optional provider abilities are ``Supports*`` classes of the contract, never a method looked up by name.

A ``getattr(prov, "cancel_launch", None)`` hides an ability from the contract: a new plugin cannot see it,
a rename breaks it silently and a type checker cannot follow it.  So outside the contract modules no
``getattr``/``hasattr`` may (a) name an attribute of a ``Supports*`` class or a class attribute of
``Provider``, or (b) look anything up on an object that reads as a provider (``prov``, ``provider``,
``accounts.provider(...)``).  Callers use ``isinstance(prov, SupportsX)`` (or ``issubclass`` on a
registry entry's class) and then call the method.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = (ROOT / "workbench/core/providers/contract.py", ROOT / "workbench/core/storage/contract.py")
LOOKUPS = ("getattr", "hasattr")
PROVIDER_LIKE = re.compile(r"(^|[._])prov(ider)?$|\.provider\(")


def _class_names(cls: ast.ClassDef, methods: bool) -> set[str]:
    out: set[str] = set()
    for node in cls.body:
        if methods and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in out if not n.startswith("_")}


def contract_names() -> set[str]:
    """Every member of a ``Supports*`` class, and ``Provider``'s class attributes (its ClassVars)."""
    names: set[str] = set()
    for path in CONTRACTS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.startswith("Supports"):
                names |= _class_names(node, methods=True)
            elif isinstance(node, ast.ClassDef) and node.name == "Provider":
                names |= _class_names(node, methods=False)
    return names


def lookups(source: str, names: set[str]) -> list[str]:
    """``getattr``/``hasattr`` calls in ``source`` that look a provider ability up by name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in LOOKUPS
                and node.args):
            continue
        target = ast.unparse(node.args[0])
        attr = node.args[1] if len(node.args) > 1 else None
        named = isinstance(attr, ast.Constant) and attr.value in names
        if named or PROVIDER_LIKE.search(target):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_contract_names_cover_the_optional_abilities():
    names = contract_names()
    assert {"cancel_launch", "provide_mfa_code", "stop", "extend", "samples", "actual_costs", "storage_put",
            "runs_jobs_over_ssh", "sdk_modules", "install_extra"} <= names
    assert "instances" not in names  # required methods are called, not looked up (and many values have one)


def test_no_provider_ability_is_looked_up_by_name_outside_the_contract():
    names = contract_names()
    files = [f for top in ("workbench", "plugins") for f in sorted((ROOT / top).rglob("*.py"))
             if f not in CONTRACTS]
    assert len(files) > 100
    bad = [f"{f.relative_to(ROOT)} {hit}" for f in files for hit in lookups(f.read_text(encoding="utf-8"), names)]
    assert bad == [], "use isinstance(x, Supports…) from the contract instead:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, bad", [
    ("stop = getattr(accounts.provider(p), 'cancel_launch', None)", True),
    ("give = getattr(prov, 'provide_mfa_code', None)", True),
    ("x = hasattr(self.provider, 'whatever')", True),
    ("ok = getattr(thing, 'runs_jobs_over_ssh', True)", True),
    ("msg = getattr(exc, 'message', str(exc))", False),
    ("rows = getattr(snap, 'instances', ())", False),
    ("spec = getattr(rec, 'spec', None)", False),
    ("if isinstance(prov, SupportsStop):\n    prov.stop(x)", False),
])
def test_the_walker_catches_lookups(source, bad):
    assert bool(lookups(source, contract_names())) is bad
