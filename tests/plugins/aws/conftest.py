"""Fixtures for the AWS plugin tests: moto in server mode behind our fault wrapper, real boto3 over HTTP.

- ``moto``: the session's server (one per test process), reset before and after every test.
- ``make_provider(**settings)``: an AwsProvider whose profile points at that server.
- every test records the AWS operations the plugin sends (botocore before-call hooks) and fails
  if one is missing from resources/policies/aws-iam-policy.json (the IAM calls that make the controller's
  identity: from aws-app-controller-additions.json, which the app's user holds beside it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterator

import pytest

import aws_moto
from workbench.core.domain.models import JobSpec, LaunchRequest, Profile, Resources
from workbench.core.providers.contract import ProviderContext, launch_tags

ROOT = Path(__file__).resolve().parents[3]
POLICY = ROOT / "resources" / "policies" / "aws-iam-policy.json"
ADDITIONS = ROOT / "resources" / "policies" / "aws-app-controller-additions.json"
INSTALL_ID = "wbtest000001"


def launch_request(provider, launch_id: str, itype: str, count: int, name: str, run: str) -> LaunchRequest:
    """A request for ``count`` machines of ``itype`` in us-east-1 (the offer as the provider lists it)."""
    offer = next(o for o in provider.offers("us-east-1") if o.instance_type == itype)
    spec = JobSpec(name=name, run=run, num_nodes=count, resources=Resources())
    return LaunchRequest(launch_id, spec, offer, provider.profile.name, launch_tags(launch_id, INSTALL_ID),
                         count=count)
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYTESTSECRET"
KEY_ID = "AKIAWORKBENCHTEST01"

#: settings that make a provider fast against moto (no real waiting, small timeouts)
FAST = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
        "read_timeout": "20", "retry_backoff_cap_s": "0.02"}


def policy_actions(*paths: Path) -> set[str]:
    """The actions the documents allow (default: the app's policy and its controller additions)."""
    actions: set[str] = set()
    for path in paths or (POLICY, ADDITIONS):
        for statement in json.loads(path.read_text(encoding="utf-8"))["Statement"]:
            if statement["Effect"] == "Allow":
                listed = statement["Action"]
                actions.update([listed] if isinstance(listed, str) else listed)
    return actions


@pytest.fixture(scope="session")
def moto_server() -> aws_moto.MotoStack:
    return aws_moto.start()


@pytest.fixture
def moto(moto_server: aws_moto.MotoStack) -> Iterator[aws_moto.MotoStack]:
    moto_server.reset()
    yield moto_server
    moto_server.reset()


@pytest.fixture(autouse=True)
def operations_within_policy() -> Iterator[set[str]]:
    """Every AWS operation the plugin sends during the test must be allowed by the shipped policy."""
    from workbench_aws import clients

    seen: set[str] = set()
    clients.add_operation_observer(seen.add)
    try:
        yield seen
    finally:
        clients.remove_operation_observer(seen.add)
    missing = sorted(seen - policy_actions())
    assert not missing, f"operations missing from {POLICY.name} + {ADDITIONS.name}: {missing}"


@pytest.fixture
def make_provider(moto: aws_moto.MotoStack, tmp_path: Path) -> Callable[..., "AwsProvider"]:  # noqa: F821
    from workbench_aws.provider import AwsProvider

    def make(name: str = "aws-test", secrets: dict[str, str] | None = None, install_id: str = INSTALL_ID,
             region: str = "us-east-1", endpoint: str | None = None, **settings: str) -> AwsProvider:
        merged = {**FAST, **{k.replace("__", "."): str(v) for k, v in settings.items()}}
        profile = Profile(name, "aws", region, endpoint_url=endpoint or moto.url, settings=merged)
        creds = {"access_key_id": KEY_ID, "secret_access_key": SECRET} if secrets is None else secrets
        return AwsProvider(profile, creds, ProviderContext(install_id=install_id, data_dir=tmp_path / "data"))

    return make


@pytest.fixture
def ec2(moto: aws_moto.MotoStack) -> Callable[[str], object]:
    """A plain boto3 EC2 client on the moto server (for arranging and checking, not the subject)."""
    import boto3

    def client(region: str = "us-east-1"):
        return boto3.client("ec2", region_name=region, endpoint_url=moto.url, aws_access_key_id="AKIAARRANGE",
                            aws_secret_access_key="arrange")

    return client
