"""Modules stay small enough to read in one sitting: source under 500 lines, tests under 600.

Split a module by topic before it grows past the limit (docs/architecture.md, "Layers"), which
also says where each topic lives.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_MAX, TEST_MAX = 500, 600


FOLDERS = ("workbench", "plugins", "tests", "benchmarks", "scripts", "installer")


def _python_files() -> list[Path]:
    return [f for folder in FOLDERS for f in sorted((ROOT / folder).rglob("*.py"))
            if not any(part.startswith(".") or part in ("build", "dist", "__pycache__")
                       for part in f.relative_to(ROOT).parts)]


def _too_long(files: list[Path], limit: int) -> list[str]:
    out = []
    for f in files:
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{f.relative_to(ROOT)}: {n} lines (limit {limit})")
    return out


def test_no_source_module_over_500_lines():
    files = [f for f in _python_files() if f.relative_to(ROOT).parts[0] in ("workbench", "plugins")]
    assert len(files) > 100
    assert _too_long(files, SOURCE_MAX) == []


def test_no_test_or_tool_module_over_600_lines():
    files = [f for f in _python_files() if f.relative_to(ROOT).parts[0] not in ("workbench", "plugins")]
    assert any(f.relative_to(ROOT).parts[0] == "tests" for f in files)
    assert _too_long(files, TEST_MAX) == []
