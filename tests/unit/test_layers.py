"""The layer rule (docs/architecture.md, "Layers"), enforced by walking every import in the source tree.

core: no Qt, no cloud SDK, no workbench.ui/cli/app, no plugin; core/domain: nothing of workbench
but itself.  ui: Qt, core and itself (never the CLI or a plugin directly).  plugins: no Qt, no
workbench.ui/cli/app, no other plugin.  Only workbench/ui (and app.py, the Qt bootstrap) may import
Qt.  Import cycles are checked in test_import_cycles.py.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph", "qtpy")
CLOUD_SDKS = ("boto3", "botocore", "azure", "msal", "google", "aliyunsdkcore", "paramiko", "asyncssh")


def imported_modules(source: str) -> set[str]:
    """Every module name an import statement in ``source`` can load (relative ones resolved by name only)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            names.add(str(node.args[0].value))
    return names


def violations(files: list[Path], banned: tuple[str, ...], banned_relative: tuple[str, ...] = ()) -> list[str]:
    out = []
    for f in files:
        for mod in imported_modules(f.read_text(encoding="utf-8")):
            top = mod.split(".")[0]
            if top in banned or any(mod == b or mod.startswith(b + ".") for b in banned):
                out.append(f"{f.relative_to(ROOT)} imports {mod}")
            if mod.startswith(".") and any(mod.lstrip(".").split(".")[0] == b for b in banned_relative):
                out.append(f"{f.relative_to(ROOT)} imports {mod}")
    return out


SSH_LIBS = ("paramiko", "asyncssh")
PLUGINS = tuple(sorted(p.name for p in (ROOT / "plugins").iterdir() if p.name.startswith("workbench_")))


def workbench_imports(files: list[Path]) -> list[tuple[str, str]]:
    """(file, module) for every import of a workbench module or an in-tree plugin in ``files``."""
    return [(str(f.relative_to(ROOT)), mod) for f in files for mod in sorted(imported_modules(f.read_text("utf-8")))
            if mod.split(".")[0] == "workbench" or mod.split(".")[0] in PLUGINS or mod.startswith(".")]


def test_domain_imports_nothing_else_of_workbench():
    files = sorted((ROOT / "workbench" / "core" / "domain").rglob("*.py"))
    assert len(files) >= 5
    bad = [(f, m) for f, m in workbench_imports(files)
           if not (m.startswith("workbench.core.domain") or (m.startswith(".") and not m.startswith("..")))]
    assert bad == []


def test_core_imports_no_plugin():
    files = sorted((ROOT / "workbench" / "core").rglob("*.py"))
    assert PLUGINS and violations(files, PLUGINS) == []


def test_ui_goes_through_core_only():
    files = sorted((ROOT / "workbench" / "ui").rglob("*.py"))
    assert len(files) >= 20
    bad = [(f, m) for f, m in workbench_imports(files)
           if not (m.startswith(("workbench.core.", "workbench.ui.")) or m in ("workbench.core", "workbench.ui")
                   or m.startswith("."))]
    assert bad == []


def test_plugins_import_only_core_and_themselves():
    for plugin in PLUGINS:
        files = sorted((ROOT / "plugins" / plugin).rglob("*.py"))
        bad = [(f, m) for f, m in workbench_imports(files)
               if not (m.startswith("workbench.core.") or m == "workbench.core" or m.split(".")[0] == plugin
                       or m.startswith("."))]
        assert bad == [], plugin


def test_core_imports_no_qt_no_cloud_sdk_no_ui():
    files = sorted((ROOT / "workbench" / "core").rglob("*.py"))
    assert len(files) >= 10
    remote = ROOT / "workbench" / "core" / "remote"
    # the SSH library is core's own business, but only in core/remote and only imported lazily
    ssh_ok = [f for f in files if remote in f.parents]
    others = [f for f in files if f not in ssh_ok]
    sdks = tuple(s for s in CLOUD_SDKS if s not in SSH_LIBS)
    assert violations(others, QT + CLOUD_SDKS + ("workbench.ui", "workbench.cli", "workbench.app"),
                      banned_relative=("ui", "cli", "app")) == []
    assert violations(ssh_ok, QT + sdks + ("workbench.ui", "workbench.cli", "workbench.app"),
                      banned_relative=("ui", "cli", "app")) == []
    for f in ssh_ok:
        top = ast.parse(f.read_text(encoding="utf-8")).body
        eager = [n for n in top if isinstance(n, (ast.Import, ast.ImportFrom))
                 and any(m.split(".")[0] in SSH_LIBS for m in imported_modules(ast.unparse(n)))]
        assert not eager, f"{f.relative_to(ROOT)} imports an SSH library at module level (import it lazily)"


def test_plugins_import_no_qt_no_ui():
    files = sorted((ROOT / "plugins").rglob("*.py")) + sorted((ROOT / "tests/fixtures/plugins").rglob("*.py"))
    assert files
    assert violations(files, QT + ("workbench.ui", "workbench.app", "workbench.cli")) == []


def test_only_ui_imports_qt():
    allowed = {ROOT / "workbench" / "app.py"}
    files = [f for f in sorted((ROOT / "workbench").rglob("*.py"))
             if "ui" not in f.relative_to(ROOT / "workbench").parts and f not in allowed]
    assert violations(files, QT) == []


@pytest.mark.parametrize("source, bad", [
    ("import PySide6.QtWidgets", True),
    ("from PySide6 import QtCore", True),
    ("import importlib\nimportlib.import_module('boto3')", True),
    ("from azure.mgmt.compute import ComputeManagementClient", True),
    ("def f():\n    import pyqtgraph\n", True),
    ("import json\nfrom pathlib import Path", False),
])
def test_the_walker_catches_imports(tmp_path, source, bad):
    f = tmp_path / "m.py"
    f.write_text(source)
    found = [m for m in imported_modules(source) if m.split(".")[0] in QT + CLOUD_SDKS]
    assert bool(found) is bad


def test_cli_and_core_do_not_load_qt_at_runtime():
    code = ("import sys, workbench.cli, workbench.cli.cloud, workbench.cli.admin, workbench.core.lifecycle.teardown, "
            "workbench.cli.remote, workbench.core.remote.jobs, "
            "workbench.core.providers.registry as r; list(r.discover().values()); "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'boto3', 'azure', "
            "'paramiko')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
