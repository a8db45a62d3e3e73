"""oss:// on the machine: rclone's S3-compatible remote, with moto standing in for OSS (no OSS emulator exists).

The Alibaba plugin (another part of the project) mints OSS STS tokens on this computer; here a stand-in
provider serving ``oss`` gets STS credentials from moto and hands them to core's
:func:`s3_compatible_remote`, exactly as a plugin would.  Core resolves the ``oss://`` mount to it, and the
real rclone copies a dataset in and syncs checkpoints out through the remote definition.  The last test
does the same with the real Alibaba plugin: its STS token from the Alibaba test server, moto as OSS."""

from __future__ import annotations

import sys
from typing import Mapping, Sequence

import boto3

from agent_run import new_machine

from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Identity, Instance, LaunchRequest, Offer, Profile, Region, Resource
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.contract import Provider, ProviderContext
from workbench.core.providers.registry import ProviderEntry, discover
from workbench.core.storage.contract import BucketInfo, SupportsObjectStorage
from workbench.core.storage.machine import SECRET_PREFIX, machine_setup
from workbench.core.storage.rclone import oss_endpoint, s3_compatible_remote

MOTO_URL = ""


class OssStandIn(Provider, SupportsObjectStorage):
    """Serves oss:// with STS credentials from moto (what the Alibaba plugin does with Alibaba's STS)."""

    id = "alibaba"
    display_name = "Alibaba (test stand-in: moto)"
    storage_kinds = ("oss",)

    def __init__(self, profile: Profile, secrets: Mapping[str, str], context: ProviderContext) -> None:
        super().__init__(profile, secrets, context)

    def _sts(self):
        return boto3.client("sts", region_name="us-east-1", endpoint_url=MOTO_URL, aws_access_key_id="AKIAOSSSTANDIN01",
                            aws_secret_access_key="x")

    def storage_machine_remote(self, uri, write, duration_s, label):  # type: ignore[no-untyped-def]
        c = self._sts().get_federation_token(Name=f"wb-{label}"[:32], DurationSeconds=duration_s)["Credentials"]
        return s3_compatible_remote(uri, c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"], "cn-hangzhou",
                                    endpoint=MOTO_URL)

    def storage_probe(self, uri):  # type: ignore[no-untyped-def]
        return BucketInfo(uri, "cn-hangzhou")

    def storage_list(self, uri):  # type: ignore[no-untyped-def]
        return {}

    def storage_put(self, uri, files, on_done, on_bytes, should_stop) -> None:  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def storage_buckets(self) -> list[str]:
        return []

    # the compute half is not this stand-in's business
    def check_credentials(self) -> Identity:
        return Identity("oss", "stand-in")

    def regions(self) -> list[Region]:
        return [Region("cn-hangzhou")]

    def offers(self, region: str | None = None) -> list[Offer]:
        return []

    def launch(self, req: LaunchRequest) -> list[Instance]:
        raise NotImplementedError

    def instances(self) -> list[Instance]:
        return []

    def terminate(self, instances: Sequence[Instance]) -> None:
        pass

    def leftovers(self) -> list[Resource]:
        return []

    def delete(self, resources: Sequence[Resource]) -> None:
        pass


def test_the_oss_remote_uses_the_alibaba_endpoint_unless_one_is_given():
    uri = parse_storage_uri("oss://bkt-data/x")
    real = s3_compatible_remote(uri, "STS.ak", "sk", "token", "cn-shanghai")
    assert real.options["provider"] == "Alibaba" and real.options["endpoint"] == "https://oss-cn-shanghai.aliyuncs.com"
    assert oss_endpoint("oss-cn-beijing") == "https://oss-cn-beijing.aliyuncs.com"
    stand_in = s3_compatible_remote(uri, "STS.ak", "sk", "token", "cn-shanghai", endpoint="http://127.0.0.1:9")
    assert stand_in.options["provider"] == "Other" and real.path == "bkt-data/x"


def test_oss_mounts_copy_in_and_sync_out_through_rclone_s_s3_compatible_remote(cloud, tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "MOTO_URL", cloud.moto.url)
    entries = {**discover(), "alibaba": ProviderEntry("alibaba", f"{__name__}:OssStandIn", None, None, OssStandIn)}
    acc = Accounts(cloud.accounts.store, entries=entries, credentials=cloud.creds)
    acc.save_profile(Profile("oss-lab", "alibaba", "cn-hangzhou"))
    cloud.bucket("bkt-oss", files={"corpus/part-0.txt": b"hello oss\n"})
    spec = parse_spec("name: oss\nrun: x\nstorage:\n"
                      "  - {path: data, source: oss://bkt-oss/corpus, mode: copy}\n"
                      "  - {path: checkpoints, source: oss://bkt-oss/runs/r1, mode: sync, interval: 1s}\n",
                      source="t.yaml")
    setup = machine_setup(acc, spec, "oss-abc123", acc.profile("local"), state_dir=str(tmp_path / "m" / "state"),
                          on_this_computer=True, notice={"poll_s": 0.1})
    assert setup.secret_env[f"{SECRET_PREFIX}0_PROVIDER"] == "Other"
    assert setup.config["mounts"][0]["remote"] == "wb0:bkt-oss/corpus"
    m = new_machine(tmp_path / "m", setup)
    assert m.agent("prepare").returncode == 0
    assert (m.work / "data" / "part-0.txt").read_text() == "hello oss\n"
    proc = m.start([sys.executable, "train.py"], STEPS="4", STEP_SECONDS="0.1")
    assert proc.wait(60) == 0, m.output()
    assert sorted(cloud.keys("bkt-oss", "runs/r1/")) == [f"runs/r1/step-{i:06d}.txt" for i in range(1, 5)]


def test_the_alibaba_plugin_s_sts_token_carries_rclone_to_oss_and_back(cloud, alibaba, tmp_path):
    """The real plugin end to end: its STS token (Alibaba test server) in rclone's remote, moto as OSS."""
    alibaba.bucket("bkt-ali", files={"corpus/part-0.txt": b"hello ali\n"})
    spec = parse_spec("name: oss\nrun: x\nstorage:\n"
                      "  - {path: data, source: oss://bkt-ali/corpus, mode: copy}\n"
                      "  - {path: checkpoints, source: oss://bkt-ali/runs/r1, mode: sync, interval: 1s}\n",
                      source="t.yaml")
    setup = machine_setup(cloud.accounts, spec, "oss-ali123", cloud.accounts.profile("local"),
                          state_dir=str(tmp_path / "m" / "state"), on_this_computer=True, notice={"poll_s": 0.1})
    keys = {setup.secret_env[f"{SECRET_PREFIX}{i}_ACCESS_KEY_ID"] for i in (0, 1)}
    assert all(k.startswith("STS.") for k in keys) and len(keys) == 2  # one token per mount, each scoped to it
    assert alibaba.account.access_key_id not in setup.secret_env.values()
    m = new_machine(tmp_path / "m", setup)
    assert m.agent("prepare").returncode == 0
    assert (m.work / "data" / "part-0.txt").read_text() == "hello ali\n"
    proc = m.start([sys.executable, "train.py"], STEPS="3", STEP_SECONDS="0.1")
    assert proc.wait(60) == 0, m.output()
    listed = boto3.client("s3", region_name="cn-hangzhou", endpoint_url=cloud.moto.url,
                          aws_access_key_id=alibaba.account.access_key_id, aws_secret_access_key="x")
    got = sorted(o["Key"] for o in listed.list_objects_v2(Bucket="bkt-ali", Prefix="runs/r1/").get("Contents", []))
    assert got == [f"runs/r1/step-{i:06d}.txt" for i in range(1, 4)]
