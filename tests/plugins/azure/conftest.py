"""Fixtures for the Azure plugin tests: the shared ARM test server, a fresh account per test, providers.

(No ``__init__.py`` here on purpose: a package named ``azure`` under tests/plugins
would shadow the Azure SDK's own ``azure`` namespace.)
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest


from azure_arm import Account, ArmServer, profile_for, shared_server  # noqa: E402

from workbench.core.domain.models import JobSpec, LaunchRequest, Offer, Resources  # noqa: E402
from workbench.core.providers.contract import ProviderContext, launch_tags  # noqa: E402


@pytest.fixture(scope="session")
def arm() -> ArmServer:
    return shared_server()


@pytest.fixture
def account(arm: ArmServer) -> Account:
    """A tenant, service principal and subscription of this test's own."""
    yield (acct := arm.new_account())
    arm.clear_faults(acct.subscription)


@pytest.fixture
def install_id() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_provider(arm: ArmServer, account: Account, install_id: str, tmp_path: Path) -> Callable[..., Any]:
    """make_provider(account=None, secret=None, data_dir=None, **settings) → AzureProvider on the test server."""
    from workbench_azure.provider import AzureProvider

    made: list[AzureProvider] = []

    def make(acct: Account | None = None, secret: str | None = None, data_dir: Path | None = None,
             owner: str | None = None, region: str = "eastus", **settings: str) -> AzureProvider:
        a = acct or account
        profile = profile_for(arm, a, region=region, **settings)
        made.append(AzureProvider(profile, {"client_secret": a.secret if secret is None else secret},
                                  ProviderContext(install_id=owner or install_id, data_dir=data_dir or tmp_path / "data")))
        return made[-1]

    yield make
    for p in made:
        p.close()


@pytest.fixture
def provider(make_provider):
    return make_provider()


def _offer_of(provider: Any, size: str, region: str = "eastus") -> Offer:
    return next(o for o in provider.offers(region) if o.instance_type == size)


def _request_for(provider: Any, size: str = "Standard_NC4as_T4_v3", *, spot: bool = False, region: str = "eastus",
                launch_id: str | None = None, spec: JobSpec | None = None) -> LaunchRequest:
    lid = launch_id or f"t-{uuid.uuid4().hex[:10]}"
    spec = spec or JobSpec(name="train", run="python3 train.py", resources=Resources(spot=spot))
    return LaunchRequest(launch_id=lid, spec=spec, offer=_offer_of(provider, size, region),
                         profile=provider.profile.name, tags=launch_tags(lid, provider.context.install_id), spot=spot)


@pytest.fixture
def request_for() -> Callable[..., LaunchRequest]:
    """request_for(provider, size=..., spot=False, region="eastus", launch_id=None, spec=None) → LaunchRequest."""
    return _request_for


@pytest.fixture
def offer_of() -> Callable[..., Offer]:
    return _offer_of
