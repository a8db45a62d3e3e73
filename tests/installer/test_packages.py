"""The packaging recipes: icons, the .deb and .tar.gz from a small stand-in bundle, the Windows and
macOS recipes, the CI workflow and the frozen entry point.  (The real bundle is built, installed and
tested by `make installer-test`.)"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
from configparser import ConfigParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "installer"
sys.path.insert(0, str(INSTALLER))
sys.path.insert(0, str(INSTALLER / "linux"))

import deb  # noqa: E402
import icons  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def icon_dir(tmp_path_factory, qapp):  # pytest-qt's QApplication: icons.py must not make a QGuiApplication
    out = tmp_path_factory.mktemp("icons")
    icons.build(out)
    return out


def test_icons_in_every_format(icon_dir):
    for size in icons.HICOLOR_SIZES:
        png = icon_dir / "hicolor" / f"{size}x{size}" / "apps" / "cloud-gpu-workbench.png"
        data = png.read_bytes()
        assert data.startswith(PNG)
        assert struct.unpack(">II", data[16:24]) == (size, size)  # IHDR width, height
    assert (icon_dir / "hicolor/scalable/apps/cloud-gpu-workbench.svg").read_bytes().startswith(b"<svg")

    ico = (icon_dir / "app.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, len(icons.ICO_SIZES))
    sizes = []
    for i in range(count):
        w, h, _, _, planes, bpp, length, offset = struct.unpack("<BBBBHHII", ico[6 + 16 * i: 22 + 16 * i])
        assert ico[offset:offset + 8] == PNG and offset + length <= len(ico) and bpp == 32
        sizes.append(w or 256)
    assert sorted(sizes) == sorted(icons.ICO_SIZES)

    icns = (icon_dir / "app.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    pos, kinds = 8, []
    while pos < len(icns):
        kind, length = icns[pos:pos + 4].decode(), struct.unpack(">I", icns[pos + 4:pos + 8])[0]
        assert icns[pos + 8:pos + 16] == PNG
        kinds.append(kind)
        pos += length
    assert pos == len(icns) and {"icp4", "ic07", "ic10", "ic14"} <= set(kinds)


@pytest.fixture(scope="module")
def fake_bundle(tmp_path_factory):
    """A stand-in onedir: a real ELF executable as `workbench` and a data file."""
    b = tmp_path_factory.mktemp("bundle") / "cloud-gpu-workbench"
    (b / "_internal" / "resources").mkdir(parents=True)
    shutil.copy2("/bin/true", b / "workbench")
    (b / "_internal" / "resources" / "note.txt").write_text("data\n")
    return b


def test_depends_come_from_what_the_bundle_links(fake_bundle):
    deps = deb.system_dependencies(fake_bundle)
    assert deps.unresolved == []
    assert "libc.so.6" in deps.packages["libc6"]
    # libc from the executable's NEEDED; fontconfig's configuration and fonts, which nothing links
    assert re.fullmatch(r"libc6 \(>= 2\.\d+\), libfontconfig1", deps.depends_line())


def test_deb_layout(fake_bundle, icon_dir, tmp_path):
    out, deps = deb.build_deb(fake_bundle, icon_dir, tmp_path / "dist", "1.2.3", tmp_path / "work")
    assert out.name == f"cloud-gpu-workbench_1.2.3_{deb.deb_arch()}.deb"
    info = subprocess.run(["dpkg-deb", "--field", str(out)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(": ", 1) for line in info.splitlines() if ": " in line and not line.startswith(" "))
    assert fields["Package"] == "cloud-gpu-workbench" and fields["Version"] == "1.2.3"
    assert fields["Depends"] == deps.depends_line()
    assert "gnome-keyring" in fields["Recommends"] and "fonts-noto-cjk" in fields["Recommends"]
    contents = subprocess.run(["dpkg-deb", "--contents", str(out)], capture_output=True, text=True,
                              check=True).stdout.splitlines()
    by_path = {line.split()[5].lstrip("."): line for line in contents}
    assert by_path["/opt/cloud-gpu-workbench/workbench"].startswith("-rwxr-xr-x root/root")
    assert by_path["/opt/cloud-gpu-workbench/_internal/resources/note.txt"].startswith("-rw-r--r-- root/root")
    assert "/usr/bin/workbench -> /opt/cloud-gpu-workbench/workbench" in by_path["/usr/bin/workbench"]
    assert "/usr/share/applications/cloud-gpu-workbench.desktop" in by_path
    assert "/usr/share/icons/hicolor/256x256/apps/cloud-gpu-workbench.png" in by_path
    assert "/usr/share/icons/hicolor/scalable/apps/cloud-gpu-workbench.svg" in by_path
    ctrl = tmp_path / "ctrl"
    subprocess.run(["dpkg-deb", "--control", str(out), str(ctrl)], check=True)
    assert os.stat(ctrl / "postrm").st_mode & stat.S_IXUSR


def test_postrm_removes_leftovers_only_on_remove(tmp_path):
    text = (INSTALLER / "linux" / "postrm").read_text()
    script = text.replace("/opt/cloud-gpu-workbench", str(tmp_path / "opt"))
    (tmp_path / "opt").mkdir()
    (tmp_path / "opt" / "stray").write_text("x")
    for arg, gone in (("upgrade", False), ("remove", True)):
        r = subprocess.run(["sh", "-c", script, "postrm", arg], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "opt").exists() is not gone
    assert subprocess.run(["sh", "-c", script, "postrm", "bogus"], capture_output=True).returncode == 1


def test_tarball_and_its_menu_entry_script(fake_bundle, icon_dir, tmp_path):
    out = deb.build_tarball(fake_bundle, icon_dir, tmp_path / "dist", "1.2.3")
    assert out.name == f"cloud-gpu-workbench-1.2.3-linux-{os.uname().machine}.tar.gz"
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert all(m.uid == 0 and m.uname == "root" for m in members.values())
        top = "cloud-gpu-workbench-1.2.3"
        assert members[f"{top}/workbench"].mode & 0o111
        assert members[f"{top}/install-menu-entry.sh"].mode & 0o111
        assert f"{top}/share/cloud-gpu-workbench.desktop" in members
        tar.extractall(tmp_path / "unpacked", filter="tar")
    folder = tmp_path / "unpacked" / "my apps" / top  # a path with a space
    folder.parent.mkdir()
    (tmp_path / "unpacked" / top).rename(folder)
    data = tmp_path / "xdg-data"
    env = dict(os.environ, XDG_DATA_HOME=str(data))
    subprocess.run([str(folder / "install-menu-entry.sh")], env=env, check=True, capture_output=True)
    entry = ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(data / "applications" / "cloud-gpu-workbench.desktop", encoding="utf-8")
    assert entry["Desktop Entry"]["Exec"] == f'"{folder}/workbench" gui'
    assert entry["Desktop Entry"]["TryExec"] == f"{folder}/workbench"
    assert (data / "icons/hicolor/48x48/apps/cloud-gpu-workbench.png").exists()
    subprocess.run([str(folder / "install-menu-entry.sh"), "--remove"], env=env, check=True, capture_output=True)
    assert not (data / "applications" / "cloud-gpu-workbench.desktop").exists()
    assert not (data / "icons/hicolor/48x48/apps/cloud-gpu-workbench.png").exists()


def test_desktop_entry():
    entry = ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(INSTALLER / "linux" / "cloud-gpu-workbench.desktop", encoding="utf-8")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Exec"] == "workbench gui" and d["Icon"] == "cloud-gpu-workbench"
    assert d["Terminal"] == "false" and d["Name[zh_CN]"]
    if shutil.which("desktop-file-validate"):  # installed by `make installer`
        r = subprocess.run(["desktop-file-validate", str(INSTALLER / "linux" / "cloud-gpu-workbench.desktop")],
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == "", r.stdout


def test_macos_info_plist():
    with open(INSTALLER / "macos" / "Info.plist", "rb") as f:
        info = plistlib.load(f)
    assert info["CFBundleIdentifier"] and info["CFBundlePackageType"] == "APPL"
    assert info["CFBundleIconFile"] == "app.icns"  # the name BUNDLE copies build/icons/app.icns to
    assert info["NSHighResolutionCapable"] is True and "zh_CN" in info["CFBundleLocalizations"]
    script = (INSTALLER / "macos" / "make-dmg.sh").read_text()
    assert "hdiutil create" in script and "ln -s /Applications" in script
    assert subprocess.run(["sh", "-n", str(INSTALLER / "macos" / "make-dmg.sh")]).returncode == 0


def _iss_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(";") or s.startswith("#"):
            continue
        m = re.fullmatch(r"\[(\w+)\]", s)
        if m:
            current = m.group(1)
            sections[current] = []
        elif current:
            sections[current].append(s)
    return sections


def test_inno_setup_script_is_per_user_with_start_menu_and_uninstaller():
    text = (INSTALLER / "windows" / "workbench.iss").read_text(encoding="utf-8")
    sec = _iss_sections(text)
    setup = dict(line.split("=", 1) for line in sec["Setup"])
    assert setup["PrivilegesRequired"] == "lowest"  # no admin, per user
    assert setup["DefaultDirName"].startswith("{autopf}")  # %LOCALAPPDATA%\Programs in that mode
    assert re.fullmatch(r"\{\{[0-9A-F-]{36}\}", setup["AppId"])
    assert setup["ArchitecturesInstallIn64BitMode"] == "x64compatible"
    assert setup["UninstallDisplayIcon"] == "{app}\\{#AppExe}"
    assert any(line.startswith('Name: "{autoprograms}\\{#AppName}"; Filename: "{app}\\{#AppExe}"')
               for line in sec["Icons"])
    assert '#define AppExe "workbench-gui.exe"' in text
    assert any("recursesubdirs" in line and "{#SourceDir}\\*" in line for line in sec["Files"])
    assert "CurUninstallStepChanged" in text  # takes its PATH entry away again
    # every value build.py passes with /D has a default here, and the output name is what build.py reports
    build = (INSTALLER / "build.py").read_text()
    for define in re.findall(r"/D(\w+)=", build):
        assert f"#ifndef {define}" in text
    assert setup["OutputBaseFilename"] == "cloud-gpu-workbench-{#AppVersion}-windows-x64-setup"
    assert '-windows-x64-setup.exe"' in build


def _makefile_recipe(target: str) -> str:
    makefile = (ROOT / "Makefile").read_text()
    return makefile.split(f"$(VENV)/{target}:", 1)[1].split("\n\n", 1)[0]


def _pip_extras(commands: str) -> set[str]:
    """The extras of the project's own ``pip install -e .[...]`` lines (all of them, joined)."""
    found = re.findall(r"pip install[^\n]*?-e\s+[\"']?\.\[([^\]]+)\]", commands)
    assert found, commands
    return {extra.strip() for line in found for extra in line.split(",")}


def test_the_makefile_builds_the_bundle_with_one_install_of_every_cloud():
    recipe = _makefile_recipe(".stamp-installer")
    assert recipe.count("pip install") == 1, recipe  # one resolver run, the same line as the workflow's
    assert _pip_extras(recipe) == {"clouds", "installer"}


def test_ci_workflow_builds_and_installs_on_windows_and_macos():
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "installers.yml").read_text())
    jobs = wf["jobs"]
    assert jobs["windows"]["runs-on"].startswith("windows")
    assert any(r.startswith("macos") for r in jobs["macos"]["strategy"]["matrix"]["runner"])
    for name, job in jobs.items():
        runs = "\n".join(step.get("run", "") for step in job["steps"])
        assert "python installer/build.py" in runs, name
        # the bundle must carry every plugin's SDK: the same extras as the Makefile's Linux build
        assert _pip_extras(runs) == _pip_extras(_makefile_recipe(".stamp-installer")) == {"clouds", "installer"}, name
        assert runs.count("--self-test") >= 2, name  # the bundle and the installed/mounted package
        assert any("upload-artifact" in step.get("uses", "") for step in job["steps"]), name
    assert "/VERYSILENT" in str(jobs["windows"]["steps"]) and "unins000.exe" in str(jobs["windows"]["steps"])
    assert "hdiutil attach" in str(jobs["macos"]["steps"])


def test_frozen_entry_point_runs_code_and_cli(tmp_path):
    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path))
    r = subprocess.run([sys.executable, str(INSTALLER / "entry.py"), "-c", "import sys; print('ran', sys.argv)",
                        "x"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ran ['-c', 'x']", r.stderr
    r = subprocess.run([sys.executable, str(INSTALLER / "entry.py"), "--version"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("workbench "), r.stderr


def test_frozen_app_gives_children_the_users_library_path(monkeypatch):
    import entry

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", "/opt/cloud-gpu-workbench/_internal", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/cloud-gpu-workbench/_internal")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/local/cuda/lib64")
    monkeypatch.setenv("QT_PLUGIN_PATH", "/opt/cloud-gpu-workbench/_internal/PySide6/Qt/plugins")
    entry._clean_child_environment()
    assert os.environ["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64"
    assert "LD_LIBRARY_PATH_ORIG" not in os.environ and "QT_PLUGIN_PATH" not in os.environ
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/cloud-gpu-workbench/_internal")  # the user had none
    entry._clean_child_environment()
    assert "LD_LIBRARY_PATH" not in os.environ
