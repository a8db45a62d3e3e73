"""The controller's install: the app's own code as a wheel, plus pinned dependencies.

The controller must run the same workbench as the app that hands it launches (the same recovery, guards
and teardown, the same store layout), so it is installed from the running app's own files, not from a
package index: :func:`build_wheel` writes ``cloud_gpu_workbench-<version>-py3-none-any.whl`` from the
loaded ``workbench`` package (without the Qt user interface) and the provider plugins, with the app's
read-only resources as the wheel's data (``share/cloud-gpu-workbench/resources``, where
:func:`workbench.core.paths.resources_dir` finds them in an installed app).

Its dependencies are pinned (``==``) to the versions this app runs with (:func:`requirements`), and come from
the package index the cloud machine reaches (every cloud's images reach PyPI, and its Linux wheels fit the
machine, which a wheelhouse made on the user's computer — maybe a Mac — would not), or, with a wheelhouse
folder (``workbench controller up --wheelhouse DIR``), from that folder with no index at all (air-gapped
accounts, and the tests).

Threading: plain file work; call off the UI thread.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Iterable

from workbench.core import paths

DIST = "cloud-gpu-workbench"
WHEEL_NAME = "cloud_gpu_workbench"
#: what the headless engine imports, per cloud (the CLI path: no Qt, no pyqtgraph)
BASE_REQUIREMENTS = ("PyYAML", "platformdirs", "psutil", "numpy", "paramiko", "cryptography")
CLOUD_REQUIREMENTS = {
    "aws": ("boto3",),
    "azure": ("azure-identity", "azure-mgmt-compute", "azure-mgmt-network", "azure-mgmt-resource",
              "azure-mgmt-resource-subscriptions", "azure-mgmt-storage", "azure-storage-blob"),
    "alibaba": ("alibabacloud_ecs20140526", "alibabacloud_vpc20160428", "alibabacloud_tea_openapi",
                "alibabacloud_credentials", "alibabacloud_sts20150401", "boto3"),
}
#: resources the controller reads (the catalog for relaunch offers, the guard and storage agent it installs)
RESOURCES = ("catalog", "guard", "storage", "billing", "policies")
SKIP_PACKAGES = ("workbench/ui/", "workbench/app.py")


def version() -> str:
    try:
        return md.version(DIST)
    except md.PackageNotFoundError:
        return "0+unknown"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(providers: Iterable[str]) -> list[str]:
    """``name==version`` of every distribution the controller needs for ``providers``, dependencies included."""
    wanted = list(BASE_REQUIREMENTS) + [r for p in providers for r in CLOUD_REQUIREMENTS.get(p, ())]
    pinned: dict[str, str] = {}
    todo = list(wanted)
    while todo:
        name = todo.pop()
        key = _norm(name)
        if key in pinned:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue  # an optional cloud SDK this app lacks: that cloud's controller cannot be made here anyway
        pinned[key] = f"{dist.metadata['Name']}=={dist.version}"
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            if ";" in req and not _marker_ok(req.split(";", 1)[1]):
                continue
            todo.append(re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0])
    return sorted(pinned.values(), key=str.lower)


def _marker_ok(marker: str) -> bool:
    try:
        from packaging.markers import Marker  # pip's vendored copy is not importable; packaging usually is

        return bool(Marker(marker.strip()).evaluate({"extra": ""}))
    except Exception:  # noqa: BLE001 - without packaging: keep it (an extra pin is harmless, a missing one is not)
        return True


def _package_files() -> list[tuple[str, Path]]:
    """(path in the wheel, file) of the workbench package and the in-tree plugins."""
    import workbench

    roots = [Path(workbench.__file__).resolve().parent]
    for name in ("workbench_local", "workbench_aws", "workbench_azure", "workbench_alibaba"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        roots.append(Path(mod.__file__).resolve().parent)
    out = []
    for root in roots:
        for f in sorted(root.rglob("*.py")) + sorted(root.rglob("py.typed")):
            rel = f"{root.name}/{f.relative_to(root).as_posix()}"
            if "__pycache__" in rel or rel.startswith(SKIP_PACKAGES):
                continue
            out.append((rel, f))
    return out


def _resource_files() -> list[tuple[str, Path]]:
    base = paths.resources_dir()
    data = f"{WHEEL_NAME}-{version()}.data/data/share/{paths.APP_NAME}/resources"
    out = []
    for sub in RESOURCES:
        for f in sorted((base / sub).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                out.append((f"{data}/{f.relative_to(base).as_posix()}", f))
    return out


PREBUILT = "controller"  # resources/controller/: the wheel and requirements a packaged app carries


def _prebuilt(name: str) -> Path | None:
    """A packaged app (PyInstaller) has no source files to build a wheel from: its build put the wheel and the
    requirements in ``resources/controller/`` (installer/workbench.spec, :func:`prebuild`)."""
    if not getattr(sys, "frozen", False):
        return None
    path = paths.resources_dir() / PREBUILT / name
    return path if path.exists() else None


def prebuild(dest: Path) -> list[Path]:
    """What a packaged app carries: the wheel and each cloud's pinned requirements (called by the installer)."""
    clouds = sorted(CLOUD_REQUIREMENTS)
    made = [build_wheel(dest, clouds)]
    for cloud in clouds:
        path = dest / f"requirements-{cloud}.txt"
        path.write_text("\n".join(requirements([cloud])) + "\n", encoding="utf-8")
        made.append(path)
    return made


def build_wheel(dest: Path, providers: Iterable[str]) -> Path:
    """Write the controller's wheel into ``dest``; its path."""
    ver = version()
    ready = _prebuilt(f"{WHEEL_NAME}-{ver}-py3-none-any.whl")
    if ready is not None:
        dest.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(ready, dest / ready.name))
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{WHEEL_NAME}-{ver}-py3-none-any.whl"
    info = f"{WHEEL_NAME}-{ver}.dist-info"
    reqs = requirements(providers)
    metadata = "\n".join(["Metadata-Version: 2.1", f"Name: {DIST}", f"Version: {ver}",
                          "Summary: Cloud GPU Workbench, headless (the controller's install)",
                          *(f"Requires-Dist: {r}" for r in reqs)]) + "\n"
    entry_points = ("[console_scripts]\nworkbench = workbench.cli:main\n\n[workbench.providers]\n"
                    "local = workbench_local.provider:LocalProvider\naws = workbench_aws.provider:AwsProvider\n"
                    "azure = workbench_azure.provider:AzureProvider\n"
                    "alibaba = workbench_alibaba.provider:AlibabaProvider\n")
    generated = {f"{info}/METADATA": metadata.encode(),
                 f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: cloud-gpu-workbench\nRoot-Is-Purelib: true\n"
                                  b"Tag: py3-none-any\n",
                 f"{info}/entry_points.txt": entry_points.encode()}
    record: list[str] = []
    tmp = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, f in _package_files() + _resource_files():
            data = f.read_bytes()
            z.writestr(arc, data)
            record.append(_record_line(arc, data))
        for arc, data in generated.items():
            z.writestr(arc, data)
            record.append(_record_line(arc, data))
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    tmp.replace(wheel)
    return wheel


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def write_requirements(dest: Path, providers: Iterable[str]) -> Path:
    path = dest / "requirements.txt"
    wanted = sorted(set(providers))
    ready = _prebuilt(f"requirements-{wanted[0]}.txt") if len(wanted) == 1 else None
    if ready is not None:
        shutil.copy2(ready, path)
        return path
    path.write_text("\n".join(requirements(wanted)) + "\n", encoding="utf-8")
    return path
