"""docs/architecture.md stays true: every module of core, every package of the UI and every module of a
plugin is named in it, in the row of its own package, and nothing it names there is gone; and every
document a test or the source cites is in the project.

Read from the files themselves, so a new module fails here until the document says where it belongs.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
CORE = ROOT / "workbench" / "core"
UI = ROOT / "workbench" / "ui"
PLUGINS = ROOT / "plugins"


def _rows() -> dict[str, str]:
    """A markdown table row's first cell (its backticked name) → the whole row."""
    out = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _named(text: str) -> set[str]:
    """Every backticked name in ``text``, and each dotted or slashed part of it (`importers/`, `a.b`)."""
    names = set()
    for token in re.findall(r"`([^`]+)`", text):
        names.add(token)
        names.update(p for p in re.split(r"[./ +(),:]", token) if p)
    return names


def _modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")


def test_every_core_module_is_named_in_its_packages_row():
    rows = _rows()
    missing, gone = [], []
    for package in sorted(p for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        row = rows.get(f"core/{package.name}")
        assert row is not None, f"docs/architecture.md has no row for core/{package.name}"
        named = _named(row)
        mods = _modules(package)
        for sub in sorted(p for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
            if sub.name not in named:
                missing.append(f"core/{package.name}/{sub.name}/")
            mods += _modules(sub)
        missing += [f"core/{package.name}/{m}.py" for m in mods if m not in named]
    for m in _modules(CORE):
        if f"core/{m}.py" not in DOC.read_text(encoding="utf-8"):
            missing.append(f"core/{m}.py")
    for key in rows:
        if key.startswith("core/") and not (CORE / key.removeprefix("core/")).is_dir():
            gone.append(key)
    assert missing == [], f"modules docs/architecture.md does not name: {missing}"
    assert gone == [], f"packages docs/architecture.md names that are gone: {gone}"


def test_every_ui_package_is_named():
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("UI packages:"):text.index("CLI (")]
    named = _named(section)
    packages = sorted(p.name for p in UI.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert len(packages) >= 8
    assert [p for p in packages if p not in named] == []


def test_every_plugin_module_is_named_in_its_plugins_row_and_nothing_named_is_gone():
    rows = _rows()
    plugins = sorted(p for p in PLUGINS.iterdir() if p.is_dir() and p.name.startswith("workbench_"))
    assert len(plugins) >= 4
    missing, gone = [], []
    for plugin in plugins:
        row = rows.get(plugin.name)
        assert row is not None, f"docs/architecture.md has no row for {plugin.name}"
        mods = _modules(plugin)
        missing += [f"{plugin.name}/{m}.py" for m in mods if m not in _named(row)]
        gone += [f"{plugin.name}/{n}" for n in re.findall(r"`(\w+)`", row) if n not in mods]
    assert missing == [], f"plugin modules docs/architecture.md does not name: {missing}"
    assert gone == [], f"plugin modules docs/architecture.md names that are gone: {gone}"


def test_every_document_the_code_and_tests_cite_is_in_the_project():
    """A test or module that says 'see X.md' points at a file of this project (they cited DESIGN.md and
    STYLE.md, which were never in it)."""
    have = {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md") if ".venv" not in p.parts}
    names = {Path(p).name for p in have}
    cited = set()
    for folder in ("workbench", "plugins", "tests", "scripts", "benchmarks", "installer"):
        for f in (ROOT / folder).rglob("*.py"):
            if f == Path(__file__).resolve():
                continue
            text = f.read_text(encoding="utf-8")
            # a document by name (DESIGN.md, README.md) or by its place in docs/ (docs/storage.md)
            cited.update((n, str(f.relative_to(ROOT)), n in names) for n in re.findall(r"\b([A-Z][A-Z0-9_-]+\.md)\b", text))
            cited.update((n, str(f.relative_to(ROOT)), n in have) for n in re.findall(r"\b(docs/[a-z][\w-]{2,}\.md)\b", text))
    assert sorted((n, f) for n, f, ok in cited if not ok) == []
    assert len(cited) >= 10  # the search itself finds the citations there are
