"""A real venv without the AWS SDK: AWS is listed as unavailable with the exact fix everywhere, never a bug.

The venv is made in the test (``python -m venv --without-pip``, ~1 s) and sees this project's
installed packages through symlinks, except boto3, botocore and s3transfer: exactly an install
of the app without the ``[aws]`` extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from partial_venv import make_venv

HIDDEN = {"boto3", "botocore", "s3transfer"}
FIX = "pip install 'cloud-gpu-workbench[aws]'"


def _hidden(name: str) -> bool:
    return name.split("-")[0].split(".")[0].lower().replace("_", "") in HIDDEN


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("no-aws-sdk") / "venv", _hidden)


def _wb(venv: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, WORKBENCH_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(venv / "bin" / "python"), "-m", "workbench", *args], capture_output=True, text=True,
                          env=env, timeout=120, stdin=subprocess.DEVNULL)


def test_the_venv_really_lacks_the_sdk(venv):
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import boto3"], capture_output=True, text=True)
    assert probe.returncode == 1 and "No module named 'boto3'" in probe.stderr


def test_providers_doctor_and_credentials_say_unavailable_with_the_fix(venv, tmp_path):
    home = tmp_path / "home"
    r = _wb(venv, home, "providers", "--json")
    assert r.returncode == 0, r.stderr
    entries = {e["id"]: e for e in json.loads(r.stdout)["providers"]}
    assert entries["aws"]["available"] is False and entries["aws"]["fix"] == FIX
    assert "boto3" in entries["aws"]["reason"] and entries["aws"]["display_name"] == "Amazon Web Services (EC2)"
    assert entries["azure"]["available"] and entries["local"]["available"]
    table = _wb(venv, home, "providers").stdout
    assert f"unavailable: " in table and FIX in table

    doctor = json.loads(_wb(venv, home, "doctor", "--json").stdout)
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["provider aws"]["status"] == "warn" and checks["provider aws"]["hint"] == FIX
    assert checks["sdk boto3"]["status"] == "warn" and "cannot be used" in checks["sdk boto3"]["detail"]
    assert checks["sdk boto3"]["hint"] == FIX

    (home / "config").mkdir(parents=True, exist_ok=True)  # an AWS profile made before the SDK went away
    (home / "config" / "profiles.json").write_text(json.dumps([{"name": "work", "provider": "aws",
                                                               "region": "us-east-1", "settings": {}}]))
    r = _wb(venv, home, "credentials", "check", "aws", "work")
    assert r.returncode == 3 and "unavailable" in r.stderr and FIX in r.stderr
    for bad in ("ModuleNotFoundError", "internal error", "bug", "Traceback"):
        assert bad not in r.stderr, r.stderr

    r = _wb(venv, home, "offers", "--gpu", "V100", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [e["profile"] for e in data["errors"]] == ["work"] and FIX in data["errors"][0]["hint"]
    aws = [o for o in data["offers"] if o["provider"] == "aws"]  # still compared, from the catalog
    assert aws and all(o["needs_account"] and FIX in o["availability_note"] for o in aws)
