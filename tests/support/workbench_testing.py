"""Helpers shared by the test folders (tests/conftest.py puts this folder on sys.path).

- MemoryCredentials: an in-memory stand-in for CredentialStore, for tests whose subject is
  not the keyring (the real Secret Service is tested in test_credentials / the accounts view).
- fake_cloud_accounts(): Accounts over a fresh store that also discover the out-of-tree test
  plugins in tests/fixtures/plugins (provider "fakecloud" and a deliberately broken one).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_PLUGINS = ROOT / "tests" / "fixtures" / "plugins"


class MemoryCredentials:
    """Keyring stand-in: (provider, profile) → {field: value}."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], dict[str, str]] = {}

    def set(self, provider: str, profile: str, values: Mapping[str, str]) -> None:
        self.data[(provider, profile)] = dict(values)

    def get(self, provider: str, profile: str) -> dict[str, str]:
        return dict(self.data.get((provider, profile), {}))

    def has(self, provider: str, profile: str) -> bool:
        return (provider, profile) in self.data

    def delete(self, provider: str, profile: str) -> bool:
        return self.data.pop((provider, profile), None) is not None

    def backend_name(self) -> str:
        return "memory (tests)"

    def check_backend(self) -> None:
        return None


def fake_cloud_accounts(monkeypatch, profiles: Mapping[str, Mapping[str, str]] = (),
                        secrets: Mapping[str, str] | None = None):
    """(Accounts, MemoryCredentials) with a fakecloud profile per ``profiles`` entry (name → settings).

    The caller has set WORKBENCH_HOME; close ``accounts.store`` when done.
    """
    from workbench.core.providers.accounts import Accounts
    from workbench.core.domain.models import Profile
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    monkeypatch.syspath_prepend(str(FIXTURE_PLUGINS))
    importlib.invalidate_caches()
    creds = MemoryCredentials()
    acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
    for name, settings in dict(profiles).items():
        acc.save_profile(Profile(name, "fakecloud", "fake-east", settings=dict(settings)))
        creds.set("fakecloud", name, dict(secrets or {"account": "a"}))
    return acc, creds


#: marks a test that talks to the real (private) Secret Service that `make test` starts (the
#: ``keyring`` marker: tests/support/secret_service.py)
from secret_service import HAS_SECRET_SERVICE, needs_secret_service  # noqa: E402,F401


class ManualClock:
    """A clock tests set by hand (``clock.t = …``): guards and spend judge time through it."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t
