"""Fixtures for the Alibaba plugin tests: the shared ECS/VPC/STS/BSS test server, an account per test, providers.

Every account is granted exactly the RAM actions of resources/policies/alibaba-ram-policy.json, so a
call the policy does not allow fails the test with Forbidden.RAM (the least-privilege check runs in
every test).  ``make_provider(**settings)`` gives an AlibabaProvider on that server; its data folder
is seeded with one RSA key made per session (a fresh 3072-bit key per test would cost a second).
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest


from alibaba_ecs import Account, AlibabaServer, profile_for, shared_server  # noqa: E402

from workbench.core.domain.models import JobSpec, LaunchRequest, Offer, Resources  # noqa: E402
from workbench.core.providers.contract import ProviderContext, launch_tags  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
POLICY = ROOT / "resources" / "policies" / "alibaba-ram-policy.json"


def policy_actions() -> tuple[str, ...]:
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    return tuple(a for s in doc["Statement"] if s["Effect"] == "Allow" for a in s["Action"])


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK sends even 127.0.0.1 through HTTP(S)_PROXY (it ignores no_proxy): keep them out of these tests."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def ali() -> AlibabaServer:
    return shared_server()


@pytest.fixture
def account(ali: AlibabaServer) -> Iterator[Account]:
    """An account of this test's own, allowed exactly the shipped policy's actions."""
    acct = ali.new_account(actions=policy_actions())
    yield acct
    refused = [s for s in ali.calls_of(acct) if s.code == "Forbidden.RAM"]
    assert not refused, f"the plugin called actions the RAM policy does not allow: {sorted({s.action for s in refused})}"


@pytest.fixture(scope="session")
def rsa_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from workbench.core.providers.sshkeys import ensure_keypair

    folder = tmp_path_factory.mktemp("rsa")
    ensure_keypair(folder, key_type="rsa")
    return folder / "ssh"


@pytest.fixture
def install_id() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_provider(ali: AlibabaServer, account: Account, install_id: str, tmp_path: Path,
                  rsa_key: Path) -> Callable[..., Any]:
    """make_provider(account=None, secrets=None, data_dir=None, owner=None, **settings) → AlibabaProvider."""
    from workbench_alibaba.provider import AlibabaProvider

    def make(acct: Account | None = None, secrets: dict[str, str] | None = None, data_dir: Path | None = None,
             owner: str | None = None, region: str = "cn-hangzhou", **settings: str) -> AlibabaProvider:
        a = acct or account
        folder = data_dir or tmp_path / "data"
        if not (folder / "ssh").exists():
            shutil.copytree(rsa_key, folder / "ssh")
        profile = profile_for(ali, a, region=region, **settings)
        creds = secrets if secrets is not None else {"access_key_id": a.access_key_id, "access_key_secret": a.secret}
        return AlibabaProvider(profile, creds, ProviderContext(install_id=owner or install_id, data_dir=folder))

    return make


def request_for(offer: Offer, install_id: str, launch_id: str | None = None, spot: bool = False,
                **spec: Any) -> LaunchRequest:
    lid = launch_id or f"t-{uuid.uuid4().hex[:10]}"
    job = JobSpec(name=spec.pop("name", "ali-test"), run="python train.py", resources=Resources(
        disk_gb=spec.pop("disk_gb", 100), spot=spot, max_price=spec.pop("max_price", None)), **spec)
    return LaunchRequest(launch_id=lid, spec=job, offer=offer, profile="alibaba-test", tags=launch_tags(lid, install_id),
                         spot=spot)


def offer_of(provider: Any, itype: str = "ecs.gn6i-c4g1.xlarge", region: str = "cn-hangzhou") -> Offer:
    return next(o for o in provider.offers(region) if o.instance_type == itype)
