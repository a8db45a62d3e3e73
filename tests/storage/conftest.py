"""Fixtures for the object-storage tests: moto S3 (server mode) and Azurite on loopback ports, real rclone.

``cloud`` gives Accounts over a fresh store (WORKBENCH_HOME in the test's folder) with an AWS
profile ``moto`` pointing at the session's moto server (reset for each test); Azure profiles
are added by the Azure tests (they need the ARM test server too).  Credentials live in memory
(the keyring is not the subject here).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

import aws_moto
import azurite as azurite_support
from agent_run import FAST, KEY_ID, SECRET
from workbench_testing import MemoryCredentials



@dataclass
class Cloud:
    accounts: object
    creds: MemoryCredentials
    moto: aws_moto.MotoStack
    home: Path

    def s3(self, region: str = "us-east-1"):
        return boto3.client("s3", region_name=region, endpoint_url=self.moto.url, aws_access_key_id=KEY_ID,
                            aws_secret_access_key=SECRET)

    def bucket(self, name: str, region: str = "us-east-1", files: dict[str, bytes] | None = None):
        s3 = self.s3(region)
        kw = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        s3.create_bucket(Bucket=name, **kw)
        for key, data in (files or {}).items():
            s3.put_object(Bucket=name, Key=key, Body=data)
        return s3

    def keys(self, bucket: str, prefix: str = "") -> dict[str, bytes]:
        s3 = self.s3()
        out = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for o in page.get("Contents") or []:
                out[o["Key"]] = s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
        return out

    @property
    def profile(self):
        return self.accounts.profile("moto")


@pytest.fixture
def cloud(tmp_path, monkeypatch):
    from workbench.core.domain.models import Profile
    from workbench.core.providers.accounts import Accounts
    from workbench.core.providers.registry import discover
    from workbench.core.store.database import Store

    if shutil.which("rclone") is None:
        pytest.fail("the storage tests need rclone (Debian package rclone; `make test` installs it)")
    stack = aws_moto.start()
    stack.reset()
    home = tmp_path / "home"
    monkeypatch.setenv("WORKBENCH_HOME", str(home))
    creds = MemoryCredentials()
    acc = Accounts(Store.open(), entries=discover(), credentials=creds)  # type: ignore[arg-type]
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url, settings=dict(FAST)))
    creds.set("aws", "moto", {"access_key_id": KEY_ID, "secret_access_key": SECRET})
    yield Cloud(acc, creds, stack, home)
    acc.store.close()
    stack.reset()




@dataclass
class AzureWorld:
    """An Azure profile ``lab`` on the ARM test server whose storage account ``devstoreaccount1`` is Azurite."""

    arm: object
    account: object
    azurite: object
    region: str

    def container(self, name: str, files: dict[str, bytes] | None = None):
        c = self.azurite.container(name)
        for key, data in (files or {}).items():
            c.upload_blob(key, data, overwrite=True)
        return c

    def blobs(self, container: str, prefix: str = "") -> dict[str, bytes]:
        c = self.azurite.service().get_container_client(container)
        return {b.name: c.download_blob(b.name).readall() for b in c.list_blobs(name_starts_with=prefix or None)}

    @staticmethod
    def uri(container: str, prefix: str = "") -> str:
        tail = f"/{prefix}" if prefix else ""
        return f"https://{azurite_support.ACCOUNT}.blob.core.windows.net/{container}{tail}"


@pytest.fixture(scope="session")
def azurite_server():
    """Azurite for this test process, stopped when the session ends (tests stop what they start)."""
    why = azurite_support.available()
    if why:
        pytest.fail(f"the Azure Blob tests need Azurite: {why}")
    yield azurite_support.start()
    azurite_support.stop()


@pytest.fixture
def azure(cloud, azurite_server) -> AzureWorld:
    from azure_arm import profile_for, shared_server
    from azure_arm.storage import add_account

    server = shared_server()
    acct = server.new_account()
    blob = azurite_server
    add_account(server.state, acct.subscription, "data-rg", azurite_support.ACCOUNT, "westeurope", blob.blob_url,
                azurite_support.KEY)
    cloud.accounts.save_profile(profile_for(server, acct, name="lab", region="eastus"))
    cloud.creds.set("azure", "lab", {"client_secret": acct.secret})
    yield AzureWorld(server, acct, blob, "westeurope")
    server.clear_faults(acct.subscription)


@dataclass
class AlibabaWorld:
    """An Alibaba profile ``ali`` on the Alibaba test server (STS) whose OSS is moto (``oss_endpoint``), with the
    storage role ``ROLE`` its machines' tokens come from; ``bucket`` arranges with the profile's key (one moto
    account)."""

    server: object
    account: object
    cloud: Cloud
    ROLE = "acs:ram::1000000000000001:role/workbench-machines"

    def bucket(self, name: str, region: str = "cn-hangzhou", files: dict[str, bytes] | None = None):
        from botocore.config import Config

        s3 = boto3.client("s3", region_name=region, endpoint_url=self.cloud.moto.url,
                          aws_access_key_id=self.account.access_key_id, aws_secret_access_key="arrange",
                          config=Config(s3={"addressing_style": "path"}))
        s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})
        for key, data in (files or {}).items():
            s3.put_object(Bucket=name, Key=key, Body=data)
        return s3

    @property
    def profile(self):
        return self.cloud.accounts.profile("ali")


@pytest.fixture
def alibaba(cloud, monkeypatch) -> AlibabaWorld:
    from alibaba_ecs import profile_for, shared_server

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # the SDK ignores no_proxy
        monkeypatch.delenv(name, raising=False)
    server = shared_server()
    acct = server.new_account()
    acct.roles[AlibabaWorld.ROLE] = ("oss:*",)
    cloud.accounts.save_profile(profile_for(server, acct, name="ali", region="cn-hangzhou",
                                            oss_endpoint=cloud.moto.url, storage_role_arn=AlibabaWorld.ROLE))
    cloud.creds.set("alibaba", "ali", {"access_key_id": acct.access_key_id, "access_key_secret": acct.secret})
    return AlibabaWorld(server, acct, cloud)
