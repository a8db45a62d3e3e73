"""The GUI's lanes are named in one place (workbench/ui/runtime/lanes.py), never spelt out where a task starts.

A lane spelt as a string where it is used ("teardown", f"{provider}/{profile}") is a new worker thread the
moment it is misspelt, and two calls meant to take turns race without a sound.  So nothing passes a string
(or an f-string) as ``lane=`` / ``change=``, and only lanes.py makes a ``Lane``.  (TaskRunner.run also
refuses a string at run time.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LANES = ROOT / "workbench" / "ui" / "runtime" / "lanes.py"
KEYWORDS = ("lane", "change")


def bare_lanes(source: str) -> list[str]:
    """Lanes in ``source`` given as text instead of a named Lane, and Lanes made outside lanes.py."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg in KEYWORDS and (isinstance(kw.value, ast.JoinedStr) or (
                    isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str))):
                found.append(f"line {node.lineno}: {kw.arg}={ast.unparse(kw.value)}")
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name == "Lane":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_lane_is_spelt_out_where_a_task_starts():
    files = [f for top in ("workbench", "tests") for f in sorted((ROOT / top).rglob("*.py"))
             if f not in (LANES, Path(__file__).resolve())]
    bad = [f"{f.relative_to(ROOT)} {hit}" for f in files for hit in bare_lanes(f.read_text(encoding="utf-8"))]
    assert bad == [], "use workbench.ui.runtime.lanes (TEARDOWN, GUARDS, … or profile_lane()):\n" + "\n".join(bad)


def test_lanes_module_names_every_lane():
    source = LANES.read_text(encoding="utf-8")
    assert {"TEARDOWN", "GUARDS", "RECOVERY", "PRICES", "profile_lane"} <= {
        n.targets[0].id if isinstance(n, ast.Assign) else n.name for n in ast.parse(source).body
        if isinstance(n, ast.FunctionDef) or (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name))}


@pytest.mark.parametrize("source, bad", [
    ("session.run(work, lane='teardown')", True),
    ("session.mutate(work, lane=f'{p.provider}/{p.name}')", True),
    ("run_for(self, s, fn, change='aws/lab')", True),
    ("x = Lane('mine')", True),
    ("session.mutate(work, lane=TEARDOWN)", False),
    ("session.mutate(work, lane=profile_lane(p.name))", False),
    ("session.run(work, lane=self.lane)", False),
    ("session.run(work)", False),
])
def test_the_walker_catches_bare_lanes(source, bad):
    assert bool(bare_lanes(source)) is bad
