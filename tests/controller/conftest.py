"""Fixtures of the controller tests: a wheelhouse of the controller's pinned dependencies (made once, kept
between runs: the package index is reachable from this machine kind, as from a cloud machine), the moto
server, an instance metadata service serving the controller role's credentials, and a real sshd standing in
for every machine (the controller's and the jobs')."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import aws_moto
from workbench_testing import MemoryCredentials

KEY_ID = "AKIACONTROLLERTEST01"  # the app's long-term key: must never reach a machine
SECRET = "controller-test-long-term-secret-not-real"


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """Wheels of every pinned requirement of an AWS controller (``pip download``, cached under ~/.cache)."""
    from workbench.core.controller import bundle

    reqs = "\n".join(bundle.requirements(["aws"])) + "\n"
    digest = hashlib.sha256(reqs.encode()).hexdigest()[:16]
    folder = Path.home() / ".cache" / "workbench-tests" / f"controller-wheelhouse-{digest}"
    done = folder / ".complete"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        req = tmp_path_factory.mktemp("req") / "requirements.txt"
        req.write_text(reqs)
        for attempt in range(3):
            got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d",
                                  str(folder), "-r", str(req)], capture_output=True, text=True, timeout=600)
            if got.returncode == 0:
                break
        else:
            pytest.fail(f"pip download of the controller's requirements failed: {got.stderr[-2000:]}")
        done.write_text(reqs)
    return folder


@pytest.fixture
def moto_stack():
    stack = aws_moto.start()
    stack.reset()
    yield stack
    stack.reset()


@pytest.fixture
def app_accounts(tmp_path, monkeypatch):
    """The app's Accounts (its own home), credentials in memory (the keyring is not the subject here)."""
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "app"))
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    creds = MemoryCredentials()
    acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
    yield acc, creds
    acc.store.close()
