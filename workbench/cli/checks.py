"""`workbench doctor`: health checks with fix hints (`--self-test` is in selftest.py)."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from workbench.core import paths
from workbench.core.providers.credentials import CredentialStore
from workbench.core.domain.errors import WorkbenchError
from workbench.core.providers.registry import discover, install_command
from workbench.cli.output import emit_json

QT_DEBIAN_PACKAGES = ("libgl1 libegl1 libxkbcommon0 libxkbcommon-x11-0 libx11-6 libglib2.0-0 libfreetype6 "
                      "libfontconfig1 libdbus-1-3 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 "
                      "libxcb-render-util0 libxcb-shape0 libxcb-xkb1")


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    hint: str = ""

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "hint": self.hint}


def _qt_check() -> Check:
    platform_name = os.environ.get("QT_QPA_PLATFORM") or ("xcb" if sys.platform.startswith("linux") else "")
    if sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM") \
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        platform_name = "offscreen"
    # In a child process: a Qt platform that cannot load aborts the process, and the CLI stays Qt-free.
    code = ("import PySide6; from PySide6.QtGui import QGuiApplication; a = QGuiApplication([]); "
            "print('PySide6', PySide6.__version__, 'platform', a.platformName())")
    env = dict(os.environ, QT_QPA_PLATFORM=platform_name) if platform_name else dict(os.environ)
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return Check("Qt platform", "fail", f"starting Qt ({platform_name}) timed out")
    if proc.returncode == 0:
        return Check("Qt platform", "ok", proc.stdout.strip())
    last = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
    return Check("Qt platform", "fail", f"Qt cannot start the {platform_name or 'default'} platform: {last}",
                 f"Debian/Ubuntu: apt-get install {QT_DEBIAN_PACKAGES}; "
                 "set QT_DEBUG_PLUGINS=1 to see the missing library")


def _keyring_check() -> Check:
    creds = CredentialStore()
    try:
        creds.check_backend()
        return Check("keyring", "ok", creds.backend_name())
    except WorkbenchError as exc:
        return Check("keyring", "warn", exc.message, exc.hint or "")


#: SDK distributions shown by doctor → the provider that needs them (None: optional for everyone)
SDKS = (("boto3", "aws"), ("azure-mgmt-compute", "azure"), ("azure-identity", "azure"),
        ("alibabacloud-ecs20140526", "alibaba"), ("nvidia-ml-py", None))


def _plugin_checks(require_all: bool) -> list[Check]:
    out = []
    entries = discover()
    for e in entries.values():
        if e.available:
            out.append(Check(f"provider {e.id}", "ok", f"{e.display_name} ({e.distribution} {e.version})"))
        else:
            out.append(Check(f"provider {e.id}", "fail" if require_all else "warn",
                             f"{e.display_name} is unavailable: {e.reason or 'unknown reason'}",
                             e.fix or "reinstall the plugin or the extra it names"))
    for sdk, provider in SDKS:
        try:
            out.append(Check(f"sdk {sdk}", "ok", metadata.version(sdk)))
        except metadata.PackageNotFoundError:
            entry = entries.get(provider or "")
            if entry is None:
                out.append(Check(f"sdk {sdk}", "ok", "not installed (optional)"))
            else:  # a cloud the app shows cannot be used without it
                out.append(Check(f"sdk {sdk}", "fail" if require_all else "warn",
                                 f"not installed: {entry.display_name} cannot be used",
                                 entry.fix or install_command(provider or "")))
    return out


def _store_check() -> Check:
    from workbench.core.store.database import Store

    try:
        store = Store.open()
    except WorkbenchError as exc:
        return Check("store", "fail", exc.message, exc.hint or "")
    try:
        result = store.integrity()
        moved = f"; a damaged database was moved to {store.recovered_from}" if store.recovered_from else ""
        status = "ok" if result == "ok" else "fail"
        return Check("store", status, f"{store.path} schema v{store.schema_version}: {result}{moved}",
                     "" if status == "ok" else "move the file aside; the app rebuilds it from the providers")
    finally:
        store.close()


def cmd_doctor(ctx, args: argparse.Namespace) -> int:
    checks = [Check("python", "ok", f"{platform.python_version()} on {platform.platform()}")]
    try:
        dirs = {k: str(p) for k, p in (("config", paths.config_dir()), ("data", paths.data_dir()),
                                        ("logs", paths.log_dir()))}
        checks.append(Check("folders", "ok", ", ".join(f"{k} {v}" for k, v in dirs.items())))
        checks.append(_store_check())
    except WorkbenchError as exc:
        checks.append(Check("folders", "fail", exc.message, exc.hint or ""))
    checks.append(_qt_check())
    checks.append(_keyring_check())
    checks.extend(_plugin_checks(require_all=False))
    return _report(checks, args.json)


def _report(checks: list[Check], as_json: bool, extra: dict | None = None) -> int:
    failed = [c for c in checks if c.status == "fail"]
    if as_json:
        emit_json({"ok": not failed, **(extra or {}), "checks": [c.to_json() for c in checks]})
    else:
        for c in checks:
            mark = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}[c.status]
            print(f"[{mark}] {c.name}: {c.detail}")
            if c.hint and c.status != "ok":
                print(f"       fix: {c.hint}")
    return 1 if failed else 0
