"""Fixtures for the CLI tests (helpers live in wbcli.py)."""

from __future__ import annotations

import subprocess

import psutil
import pytest

from wbcli import Workbench


@pytest.fixture
def wb(tmp_path) -> Workbench:
    w = Workbench(tmp_path / "home")
    yield w
    # never leave a job running, whatever the test did
    for p in psutil.process_iter(["environ"]):
        try:
            env = p.info["environ"] or {}
        except (psutil.Error, OSError):
            continue
        if env.get("WORKBENCH_MANAGED") == "true" and str(tmp_path) in env.get("PWD", "") + env.get("WORKBENCH_HOME", ""):
            p.kill()
    subprocess.run(w.argv("down", "--all", "--yes", "--include-own", "--timeout", "10"), env=w.env, capture_output=True,
                   timeout=60, stdin=subprocess.DEVNULL)
