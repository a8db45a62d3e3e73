"""What the PyInstaller spec bundles: plugins and SDKs from entry points, what trimming drops.

The bundle itself is built and installed by `make installer-test`; these checks are the fast part.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "installer"))

import bundle_plan  # noqa: E402
import elf  # noqa: E402


class FakeDist:
    """Just enough of importlib.metadata.Distribution for the plan."""

    def __init__(self, name, requires=(), files=()):
        self.metadata = {"Name": name}
        self.requires = list(requires)
        self.files = [Path(f) for f in files]


class FakeEntryPoint:
    def __init__(self, name, value, dist):
        self.name, self.value, self.dist = name, value, dist


def test_every_registered_provider_is_planned_with_its_sdk():
    plan = bundle_plan.plan()
    registered = {ep.name: ep.value for ep in metadata.entry_points(group=bundle_plan.GROUP)}
    assert {p.name: p.target for p in plan.plugins} == registered
    assert "local" in registered
    for p in plan.plugins:
        assert p.package == p.target.split(":")[0].split(".")[0]
        assert p.package in plan.packages
        assert p.distribution in plan.metadata
    by_name = {p.name: p for p in plan.plugins}
    # the app's own built-in plugins take their SDK from the extra named like them
    assert by_name["aws"].sdk_requirements == ["boto3"]
    assert "azure-mgmt-compute" in by_name["azure"].sdk_requirements
    assert by_name["local"].sdk_requirements == []
    assert "boto3" in plan.packages and "azure.mgmt.compute" in plan.packages
    assert {"botocore", "azure-core", "msal"} <= set(plan.metadata)  # SDKs' own requirements: metadata
    assert not any(p.startswith(bundle_plan.NEVER_COLLECT) for p in plan.packages)
    assert not any(m in plan.metadata for m in ("pytest", "moto", "pyinstaller"))  # test/build extras


def test_a_third_party_plugin_brings_all_its_requirements():
    dist = FakeDist("workbench-lambda", requires=["lambdasdk>=1", "PySide6>=6", 'extra-thing; extra == "docs"'],
                    files=["workbench_lambda/__init__.py", "workbench_lambda/provider.py"])
    ep = FakeEntryPoint("lambda", "workbench_lambda.provider:LambdaProvider", dist)
    assert bundle_plan.sdk_requirements(dist, "lambda") == ["lambdasdk"]  # never Qt, never other extras
    plan = bundle_plan.plan([ep])
    assert plan.plugins[0].package == "workbench_lambda"
    assert plan.missing == ["lambdasdk"]  # not installed: reported, the build goes on
    assert plan.metadata == ["cloud-gpu-workbench", "workbench-lambda"]


def test_requirement_markers_for_other_platforms_are_left_out():
    dist = FakeDist("cloud-gpu-workbench", requires=[
        'boto3>=1.34; extra == "aws"',
        'pywin32; sys_platform == "win32" and extra == "aws"',
        'pyobjc; sys_platform == "darwin" and extra == "aws"'])
    wanted = bundle_plan.sdk_requirements(dist, "aws")
    assert "boto3" in wanted
    assert ("pywin32" in wanted) == (sys.platform == "win32")
    assert ("pyobjc" in wanted) == (sys.platform == "darwin")


def test_top_packages_are_namespace_aware():
    dist = FakeDist("azure-mgmt-compute", files=[
        "azure/mgmt/compute/__init__.py", "azure/mgmt/compute/models/__init__.py",
        "azure/mgmt/compute/_client.py", "azure_mgmt_compute-39.dist-info/METADATA"])
    assert bundle_plan.top_packages(dist) == ["azure.mgmt.compute"]
    single = FakeDist("nvidia-ml-py", files=["pynvml.py", "nvidia_ml_py-12.dist-info/RECORD"])
    assert bundle_plan.top_packages(single) == ["pynvml"]


@pytest.mark.parametrize("path, dropped", [
    ("PySide6/Qt/translations/qtbase_de.qm", True),
    ("PySide6/Qt/translations/qtbase_zh_CN.qm", False),
    ("PySide6/Qt/translations/qt_zh_CN.qm", False),
    ("PySide6/translations/qtbase_fr.qm", True),  # the Windows layout
    ("PySide6/Qt/qml/QtQuick/qmldir", True),
    ("workbench/ui/i18n/workbench_zh_CN.ts", True),
    ("workbench/ui/i18n/workbench_zh_CN.qm", False),
    ("resources/icons/app.svg", False),
    ("botocore/data/ec2/2016-11-15/service-2.json.gz", False),
])
def test_data_trimming(path, dropped):
    assert bundle_plan.drop_data(path) is dropped


@pytest.mark.parametrize("path, dropped", [
    ("PySide6/Qt/plugins/platforms/libqxcb.so", False),
    ("PySide6/Qt/plugins/platforms/libqwayland.so", False),
    ("PySide6/Qt/plugins/platforms/libqoffscreen.so", False),
    ("PySide6/Qt/plugins/platforms/libqvnc.so", True),
    ("PySide6/Qt/plugins/platforms/libqeglfs.so", True),
    ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", True),
    ("PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so", False),
    ("PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so", False),
    ("PySide6/Qt/plugins/wayland-shell-integration/libivi-shell.so", True),
    ("PySide6/Qt/plugins/wayland-graphics-integration-client/libqt-plugin-wayland-egl.so", False),
    ("PySide6/Qt/plugins/wayland-graphics-integration-client/libdmabuf-server.so", True),
    ("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", False),
    ("PySide6/Qt/plugins/imageformats/libqsvg.so", False),
    ("PySide6/Qt/lib/libQt6Network.so.6", True),
    ("PySide6/Qt/lib/libQt6Widgets.so.6", False),
    ("PySide6/Qt/lib/libQt6OpenGLWidgets.so.6", False),  # pyqtgraph's curves need it
    ("PySide6/Qt/lib/libQt6Svg.so.6", False),
    ("PySide6/Qt/lib/libQt6DBus.so.6", False),
])
def test_binary_trimming(path, dropped):
    assert bundle_plan.drop_binary(path) is dropped


def test_orphans_are_only_what_dropped_binaries_needed():
    graph = {
        "qgtk3": ["libgtk-3.so.0", "libQt6Gui.so.6"],
        "gtk": ["libcairo.so.2", "libglib-2.0.so.0"],
        "cairo": ["libpixman-1.so.0"],
        "qxcb": ["libQt6Gui.so.6", "libxcb-cursor.so.0"],
        "qtgui": ["libglib-2.0.so.0"],
    }
    kept = {"libgtk-3.so.0": "gtk", "libcairo.so.2": "cairo", "libpixman-1.so.0": "pixman",
            "libglib-2.0.so.0": "glib", "PySide6/Qt/lib/libQt6Gui.so.6": "qtgui",
            "PySide6/Qt/plugins/platforms/libqxcb.so": "qxcb", "libxcb-cursor.so.0": "xcbcursor",
            "libnvidia-ml-like.so": "ctypes-only"}
    dropped = {"PySide6/Qt/plugins/platformthemes/libqgtk3.so": "qgtk3"}
    found = elf.orphans(kept, dropped, needed_of=lambda src: graph.get(src, []))
    # glib stays (Qt needs it too), the ctypes-only library has no edges and stays
    assert found == {"libgtk-3.so.0", "libcairo.so.2", "libpixman-1.so.0"}


def test_elf_facts_from_objdump():
    ls = Path("/bin/ls").resolve()
    assert elf.is_elf(ls) and not elf.is_elf(ROOT / "README.md")
    assert "libc.so.6" in elf.needed(ls) and elf.needed(ROOT / "README.md") == ()
    assert any(v.startswith("GLIBC_") for v in elf.info(str(ls)).versions["libc.so.6"])
    floor = elf.glibc_floor([ls])
    assert floor is not None and tuple(map(int, floor.split("."))) >= (2, 2)


def test_the_spec_compiles_and_names_what_build_py_expects():
    spec = (ROOT / "installer" / "workbench.spec").read_text(encoding="utf-8")
    compile(spec, "workbench.spec", "exec")
    assert 'name="cloud-gpu-workbench"' in spec  # build.py and the .iss read build/bundle/cloud-gpu-workbench
    assert '"Cloud GPU Workbench.app"' in spec
    assert 'exe("workbench-gui", False)' in spec and 'exe("workbench", True)' in spec
    assert '"PySide6.QtOpenGL"' in spec  # imported by a computed name in pyqtgraph
    assert "PySide6.QtOpenGL" not in bundle_plan.EXCLUDED_MODULES


def test_resources_are_bundled_without_what_git_ignores(tmp_path):
    import subprocess

    (tmp_path / "resources" / "examples" / "demo" / "results").mkdir(parents=True)
    (tmp_path / "resources" / "icons").mkdir()
    (tmp_path / "resources" / "icons" / "app.svg").write_text("<svg/>")
    (tmp_path / "resources" / "examples" / "demo" / ".gitignore").write_text("results/\n")
    (tmp_path / "resources" / "examples" / "demo" / "results" / "metrics.json").write_text("{}")
    everything = bundle_plan.resource_files(tmp_path)  # not a git checkout: every file
    assert any(f.endswith("metrics.json") for f, _ in everything)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    found = dict(bundle_plan.resource_files(tmp_path))  # untracked but not ignored files count
    assert found == {str(tmp_path / "resources/examples/demo/.gitignore"): "resources/examples/demo",
                     str(tmp_path / "resources/icons/app.svg"): "resources/icons"}
    real = dict(bundle_plan.resource_files(ROOT))
    assert str(ROOT / "resources/icons/app.svg") in real and str(ROOT / "resources/examples/local-smoke.yaml") in real


def test_a_release_build_refuses_a_plan_with_a_missing_sdk(capsys):
    dist = FakeDist("workbench-lambda", requires=["lambdasdk>=1"],
                    files=["workbench_lambda/__init__.py", "workbench_lambda/provider.py"])
    plan = bundle_plan.plan([FakeEntryPoint("lambda", "workbench_lambda.provider:LambdaProvider", dist)])
    with pytest.raises(bundle_plan.MissingSdks) as raised:
        bundle_plan.require_every_sdk(plan)
    assert "lambdasdk (needed by the lambda plugin)" in str(raised.value)
    assert "--allow-missing-sdks" in str(raised.value) and "[clouds,installer]" in str(raised.value)
    bundle_plan.require_every_sdk(plan, allow_missing=True)  # a slim developer build: said, not refused
    assert "slim developer build" in capsys.readouterr().out


def test_this_build_environment_has_every_sdk():
    bundle_plan.require_every_sdk(bundle_plan.plan())  # `make test` installs [test], which has every cloud
