"""What goes into the frozen app: plugin packages, their SDKs, metadata, and what is trimmed.

Used by ``workbench.spec`` (at build time, inside PyInstaller) and by the fast
tests in ``tests/installer``.  Plain Python: no PyInstaller import here, so
the tests run without it.

Plugins are found generically through the ``workbench.providers`` entry-point
group: a plugin added to pyproject.toml (or installed as its own distribution)
is bundled without editing the spec.  For each entry point we bundle

* every submodule of the package that holds the entry point's module (the
  registry imports it by name at run time, so PyInstaller cannot see it);
* the distribution's metadata (``*.dist-info``), without which
  ``importlib.metadata.entry_points`` finds nothing in the frozen app;
* the cloud SDK it imports lazily: the requirements of its distribution under
  the extra named like the entry point (``boto3; extra == "aws"``), or, for a
  plugin that is its own distribution, all of that distribution's
  requirements — each with every submodule, because the plugin imports them
  inside functions, and with their own metadata (SDKs read their version
  from it).

:func:`plan` does not raise for a missing SDK: it lists it under ``missing``, and
:func:`require_every_sdk` (called by build.py before PyInstaller starts, and by the spec)
refuses to build such a bundle unless a slim developer build was asked for
(``--allow-missing-sdks`` / ``WORKBENCH_ALLOW_MISSING_SDKS=1``): a release whose Alibaba plugin
has no SDK would install fine and fail at the user's first click.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import PurePosixPath

GROUP = "workbench.providers"
APP_DIST = "cloud-gpu-workbench"
#: set to "1" for a slim developer bundle that may lack cloud SDKs (build.py --allow-missing-sdks)
ALLOW_MISSING_ENV = "WORKBENCH_ALLOW_MISSING_SDKS"
#: what installs every cloud's SDK in the build environment (the Makefile and the workflow use it)
EVERY_CLOUD = "pip install -e '.[clouds,installer]'"

#: Qt bindings are collected by PyInstaller's own hooks, module by module: never wholesale.
NEVER_COLLECT = ("PySide6", "shiboken6", "PyQt5", "PyQt6", "PySide2")

#: Python modules the app never imports but that PyInstaller's analysis drags in through
#: optional imports of our dependencies (pyqtgraph, numpy, botocore…).  Excluding them keeps
#: the bundle small; the self-test proves the app still starts without them.
EXCLUDED_MODULES = [
    "tkinter", "_tkinter", "IPython", "matplotlib", "scipy", "pandas", "PIL", "OpenGL",
    "pytest", "_pytest", "moto", "pyqtgraph.opengl", "pyqtgraph.examples", "pyqtgraph.jupyter",
    "numpy.f2py", "numpy.distutils", "setuptools", "pip", "PyInstaller",
    # Qt modules the app does not use (PySide6-Addons would bring some of them).  Not QtOpenGL and
    # QtOpenGLWidgets: pyqtgraph's curves import them (the self-test's plot check proves it).
    "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets", "PySide6.QtWebEngineQuick",
    "PySide6.Qt3DCore", "PySide6.Qt3DRender", "PySide6.Qt3DExtras", "PySide6.QtMultimedia",
    "PySide6.QtMultimediaWidgets", "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets",
    "PySide6.QtQuick3D", "PySide6.QtCharts", "PySide6.QtDataVisualization", "PySide6.QtPdf",
    "PySide6.QtPdfWidgets", "PySide6.QtBluetooth", "PySide6.QtPositioning", "PySide6.QtLocation",
    "PySide6.QtSql", "PySide6.QtTest", "PySide6.QtDesigner", "PySide6.QtHelp", "PySide6.QtUiTools",
    "PySide6.QtNetwork", "PySide6.QtXml",
    "PySide6.QtConcurrent", "PySide6.QtPrintSupport", "PySide6.QtSpatialAudio",
    "PySide6.QtSerialPort", "PySide6.QtWebSockets", "PySide6.QtRemoteObjects", "PySide6.QtScxml",
    "PySide6.QtSensors", "PySide6.QtTextToSpeech", "PySide6.QtNfc", "PySide6.QtHttpServer",
    "PySide6.QtStateMachine", "PySide6.QtSvgWidgets", "PySide6.QtGraphs",
]

#: Shipped Qt translations besides English: the languages the app itself is translated into.
KEEP_QT_LANGUAGES = ("zh_CN",)

#: Files (paths inside the bundle, "/"-separated) that the app never reads.
_DROP_DATA = [
    # PySide6/Qt/translations (Linux, macOS) or PySide6/translations (Windows)
    re.compile(r"(^|/)PySide6/(Qt/)?translations/(?!qt(base)?_(%s)\.qm$)[^/]+$" % "|".join(KEEP_QT_LANGUAGES)),
    re.compile(r"(^|/)PySide6/(Qt/)?qml/"),
    re.compile(r"(^|/)PySide6/(typesystems|include|glue|scripts|examples)/"),
    re.compile(r"(^|/)workbench/ui/i18n/[^/]+\.ts$"),  # sources of the .qm catalogues
    re.compile(r"(^|/)__pycache__/"),
]

#: Shared libraries the app never loads: Qt modules it does not use, and Qt plugins for what a
#: desktop app does not do (embedded eglfs/linuxfb/VNC platforms, evdev/TUIO input, Wayland
#: compositor-side buffer sharing and shells other than xdg-shell, QML tooling, SQL, TLS,
#: multimedia).  The GTK3 platform theme goes too: it drags GTK/cairo/pango (~25 MB) into the
#: bundle, and Qt's own dialogs plus the XDG desktop portal theme (kept: dark/light scheme,
#: portal file dialogs) serve instead.  Libraries that only these needed are dropped after
#: them (elf.orphans).  Linux names: on Windows and macOS only the module excludes above trim Qt
#: (PyInstaller then does not collect those modules' libraries), as no bundle is tested there
#: before a release.
_QT_PLUGINS = "PySide6/Qt/plugins/"
_DROP_BINARIES = [
    re.compile(r"(^|/)libQt6(Quick|Qml|Pdf|VirtualKeyboard|Network|Designer|Test|Sql|"
               r"Multimedia|WebEngine|3D|Charts|DataVisualization|Positioning|Location|Bluetooth|"
               r"EglFSDeviceIntegration|EglFsKmsSupport|WlShellIntegration)[A-Za-z]*\.so"),
    re.compile(r"(^|/)%s(qmltooling|sqldrivers|multimedia|position|networkinformation|tls|designer|"
               r"virtualkeyboard|egldeviceintegrations|generic)/" % _QT_PLUGINS),
    re.compile(r"(^|/)%splatforms/libq(eglfs|linuxfb|vnc|vkkhrdisplay|minimalegl)\.so$" % _QT_PLUGINS),
    re.compile(r"(^|/)%splatformthemes/libqgtk3\.so$" % _QT_PLUGINS),
    re.compile(r"(^|/)%swayland-graphics-integration-client/lib[a-z-]*-server\.so$" % _QT_PLUGINS),
    re.compile(r"(^|/)%swayland-shell-integration/lib(?!xdg-shell)[a-z0-9-]+\.so$" % _QT_PLUGINS),
    re.compile(r"(^|/)%simageformats/libq(pdf|webp|tiff|tga|wbmp|icns)\.so$" % _QT_PLUGINS),
]


def drop_data(dest: str) -> bool:
    """True for a bundled data file (its path inside the bundle) the app never reads."""
    p = dest.replace("\\", "/")
    return any(rx.search(p) for rx in _DROP_DATA)


def drop_binary(dest: str) -> bool:
    """True for a bundled shared library the app never loads (Linux bundles only: see _DROP_BINARIES)."""
    p = dest.replace("\\", "/")
    return any(rx.search(p) for rx in _DROP_BINARIES)


@dataclass
class Plugin:
    """One ``workbench.providers`` entry point and what it needs in the bundle."""

    name: str
    target: str  # "module:Class"
    distribution: str
    package: str  # the importable top-level package holding the entry point's module
    sdk_requirements: list[str] = field(default_factory=list)


@dataclass
class Plan:
    plugins: list[Plugin]
    #: packages whose every submodule must be bundled (plugin packages and SDK packages)
    packages: list[str]
    #: distributions whose metadata must be bundled
    metadata: list[str]
    #: SDK requirements that are not installed in the build environment
    missing: list[str]


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;(]", req.strip(), maxsplit=1)[0]


def _req_extras(req: str) -> set[str]:
    """The extras a requirement's marker asks for: ``boto3; extra == "aws"`` → {"aws"}."""
    _, _, marker = req.partition(";")
    return set(re.findall(r"""extra\s*==\s*["']([^"']+)["']""", marker))


def _marker_ok(req: str) -> bool:
    """Whether a requirement's marker, other than its extra, applies here (python/platform markers)."""
    _, _, marker = req.partition(";")
    marker = re.sub(r"""(and|or)?\s*extra\s*==\s*["'][^"']+["']""", "", marker).strip()
    marker = re.sub(r"^(and|or)\s+|\s+(and|or)$", "", marker).strip()
    if not marker:
        return True
    try:
        from packaging.markers import Marker

        return Marker(marker).evaluate()
    except Exception:  # no packaging, or an unparsable marker: bundle it rather than lose it
        return True


def sdk_requirements(dist: metadata.Distribution, plugin_name: str) -> list[str]:
    """Requirement names a plugin's lazily imported SDK comes from (see the module docstring)."""
    own = _canon(dist.metadata["Name"]) == _canon(APP_DIST)
    out = []
    for req in dist.requires or []:
        extras = _req_extras(req)
        wanted = plugin_name in extras if (own or extras) else True
        if wanted and _marker_ok(req) and not any(_canon(_req_name(req)) == _canon(n) for n in NEVER_COLLECT):
            name = _req_name(req)
            if _canon(name) != _canon(dist.metadata["Name"]) and name not in out:
                out.append(name)
    return out


def top_packages(dist: metadata.Distribution) -> list[str]:
    """The importable packages a distribution ships, namespace-aware.

    ``azure-mgmt-compute`` ships ``azure/mgmt/compute/__init__.py`` but no
    ``azure/__init__.py`` (a namespace package): its package is
    ``azure.mgmt.compute``, not all of ``azure``.  Single-module distributions
    (``pynvml.py``) give the module name.
    """
    files = [PurePosixPath(str(f)) for f in (dist.files or [])]
    inits = {f.parent for f in files if f.name == "__init__.py" and ".." not in f.parts}
    out = set()
    for d in inits:
        if d.parent in inits or any(p.endswith((".dist-info", ".egg-info", ".data")) for p in d.parts):
            continue
        out.add(".".join(d.parts))
    for f in files:
        if len(f.parts) == 1 and f.suffix == ".py" and f.stem != "__init__":
            out.add(f.stem)
    return sorted(out)


def _requirement_closure(names: list[str]) -> tuple[list[metadata.Distribution], list[str]]:
    """The installed distributions of ``names`` and of everything they require (metadata for all)."""
    seen: dict[str, metadata.Distribution] = {}
    missing: list[str] = []
    todo = list(names)
    while todo:
        name = todo.pop(0)
        key = _canon(name)
        if key in seen or any(_canon(m) == key for m in missing):
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        seen[key] = dist
        todo.extend(_req_name(r) for r in (dist.requires or []) if not _req_extras(r) and _marker_ok(r))
    return list(seen.values()), missing


def plan(entry_points=None) -> Plan:
    """Everything the spec must add for the installed ``workbench.providers`` plugins."""
    eps = sorted(metadata.entry_points(group=GROUP) if entry_points is None else entry_points,
                 key=lambda e: e.name)
    plugins: list[Plugin] = []
    packages: list[str] = []
    meta: list[str] = [APP_DIST]
    missing: list[str] = []
    for ep in eps:
        dist = ep.dist
        module = ep.value.partition(":")[0].strip()
        package = module.split(".")[0]
        sdk = sdk_requirements(dist, ep.name) if dist is not None else []
        dist_name = dist.metadata["Name"] if dist is not None else "?"
        plugins.append(Plugin(ep.name, ep.value, dist_name, package, sdk))
        if package not in packages:
            packages.append(package)
        if dist is not None and dist_name not in meta:
            meta.append(dist_name)
        sdk_dists, sdk_missing = _requirement_closure(sdk)
        missing.extend(m for m in sdk_missing if m not in missing)
        direct = {_canon(n) for n in sdk}
        for d in sdk_dists:
            if d.metadata["Name"] not in meta:
                meta.append(d.metadata["Name"])
            if _canon(d.metadata["Name"]) in direct:  # the SDK itself: all of it, it is imported lazily
                packages.extend(p for p in top_packages(d) if p not in packages
                                and not p.startswith(NEVER_COLLECT))
    return Plan(plugins, packages, meta, missing)


class MissingSdks(Exception):
    """The build environment lacks a plugin's SDK: the bundle would ship that cloud unusable."""


def require_every_sdk(plan: Plan, allow_missing: bool = False) -> None:
    """Raise :class:`MissingSdks` naming the SDKs absent from the build environment, unless
    ``allow_missing`` (a slim developer build, said so on the console)."""
    if not plan.missing:
        return
    owners = [p.name for p in plan.plugins if any(_canon(m) == _canon(r) for m in plan.missing
                                                  for r in p.sdk_requirements)]
    what = f"{', '.join(plan.missing)} (needed by the {', '.join(owners) or 'plugins'} plugin)"
    if allow_missing:
        print(f"[bundle] slim developer build: SDKs not installed, their plugins will be unavailable: {what}")
        return
    raise MissingSdks(f"cloud SDKs missing from the build environment: {what}. A release bundle carries "
                      f"every cloud: {EVERY_CLOUD}, or build a slim developer bundle with --allow-missing-sdks")


def resource_files(root) -> list[tuple[str, str]]:
    """``resources/`` as (file, bundle folder) pairs, minus what git ignores there (outputs of an
    example run in place, editor files); every file when ``root`` is not a git checkout."""
    import subprocess
    from pathlib import Path

    root = Path(root)
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "resources"],
                             cwd=root, capture_output=True, check=True).stdout.decode()
        files = [root / f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = [p for p in (root / "resources").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return [(str(f), str(f.parent.relative_to(root))) for f in sorted(files) if f.is_file()]


def source_roots(packages) -> list[str]:
    """The sys.path folders holding ``packages`` (editable installs map them through an import
    finder that PyInstaller's analysis does not consult: it needs the folders on ``pathex``)."""
    import importlib.util

    roots: list[str] = []
    for package in packages:
        try:
            spec = importlib.util.find_spec(package.split(".")[0])
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        for loc in spec.submodule_search_locations:
            root = os.path.dirname(loc)
            if root not in roots:
                roots.append(root)
    return roots
