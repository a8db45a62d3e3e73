"""Fixtures for the remote-job tests: one real sshd per test session, a throwaway home per test.

``sshd_server`` is a real OpenSSH sshd on a loopback port (tests/support/sshd.py) with the
fake nvidia-smi on its PATH.  ``remote`` gives Accounts over a fresh store that see the
``sshcloud`` test provider (tests/fixtures/remote_plugins), a profile ``loop`` whose machines
are that sshd, and the app's key authorized there.  Whatever a test launched is torn down
afterwards, which also kills its job's processes on "the machine".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

import sshd as sshd_support
from workbench_testing import ROOT

REMOTE_PLUGINS = ROOT / "tests" / "fixtures" / "remote_plugins"


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory):
    why = sshd_support.available()
    if why:
        pytest.fail(f"the remote tests need a real sshd: {why}")
    server = sshd_support.Sshd.start(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@dataclass
class Remote:
    accounts: object
    server: sshd_support.Sshd
    home: Path
    profile: object

    @property
    def data_dir(self) -> Path:
        return self.accounts.store.path.parent


@pytest.fixture
def remote(tmp_path, monkeypatch, sshd_server):
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.providers.sshkeys import ensure_keypair
    from workbench.core.store.database import Store
    from workbench.core.lifecycle.teardown import teardown

    home = tmp_path / "home"
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    monkeypatch.syspath_prepend(str(REMOTE_PLUGINS))
    importlib.invalidate_caches()
    store = Store.open()
    acc = Accounts(store, entries=discover())
    prof = Profile("loop", "sshcloud", "loop-1", settings={"port": str(sshd_server.port), "user": sshd_server.user})
    acc.save_profile(prof)
    sshd_server.authorize(ensure_keypair(store.path.parent).public_openssh)
    sshd_server.set_gpu("v100x1")
    (sshd_server.nvidia_state / "period_ms").unlink(missing_ok=True)
    yield Remote(acc, sshd_server, home, prof)
    try:
        teardown(acc, None, timeout=10, poll=0.05)
    finally:
        store.close()
