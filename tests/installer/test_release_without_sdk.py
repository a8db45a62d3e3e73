"""Issue 36: a build environment without the Alibaba SDK yields no release, and the self-test says so.

A real venv that lacks the ``alibabacloud_*`` packages (everything else of this install is there,
tests/support/partial_venv.py): ``installer/build.py`` must stop before PyInstaller starts, naming
the SDK and the plugin, and ``workbench --self-test`` must fail its providers check naming Alibaba.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from partial_venv import make_venv

ROOT = Path(__file__).resolve().parents[2]


def _alibaba_sdk(name: str) -> bool:
    return name.lower().startswith(("alibabacloud", "darabonba"))


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("no-alibaba-sdk") / "venv", _alibaba_sdk)


def _run(venv: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(venv / "bin" / "python"), *args], capture_output=True, text=True, env=env,
                          timeout=300, stdin=subprocess.DEVNULL, cwd=tmp_path)


def test_the_venv_really_lacks_the_sdk(venv, tmp_path):
    probe = _run(venv, tmp_path, "-c", "import alibabacloud_ecs20140526")
    assert probe.returncode == 1 and "No module named 'alibabacloud_ecs20140526'" in probe.stderr


def test_the_release_build_stops_before_pyinstaller_naming_the_sdk(venv, tmp_path):
    r = _run(venv, tmp_path, str(ROOT / "installer" / "build.py"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "cloud SDKs missing from the build environment" in r.stderr
    assert "alibabacloud" in r.stderr and "alibaba plugin" in r.stderr and "--allow-missing-sdks" in r.stderr
    assert "PyInstaller" not in r.stdout and "[build] icons" not in r.stdout  # nothing was built


def test_the_self_test_fails_naming_the_cloud_that_is_not_usable(venv, tmp_path):
    r = _run(venv, tmp_path, "-m", "workbench", "--self-test", "--json")
    assert r.returncode == 1, r.stderr
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["providers"]["status"] == "fail"
    assert "Alibaba Cloud (ECS) (alibaba)" in checks["providers"]["detail"].split("; usable:")[0]
    for pid in ("local", "aws", "azure"):  # the others are still usable, and said so
        assert f"({pid})" in checks["providers"]["detail"].split("; usable:")[1]


def test_this_install_names_every_provider_usable(tmp_path):
    import sys

    env = dict(os.environ, WORKBENCH_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-m", "workbench", "--self-test", "--json"], capture_output=True,
                       text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    assert checks["providers"]["status"] == "ok", checks["providers"]
    for pid in ("local", "aws", "azure", "alibaba"):
        assert f"({pid})" in checks["providers"]["detail"]
