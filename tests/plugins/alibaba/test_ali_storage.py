"""OSS through the Alibaba plugin: moto in server mode stands in for OSS's S3-compatible API (no OSS
emulator exists), the Alibaba test server for STS.  Bucket checks and their errors (a missing bucket,
a refused one, a bucket answered from another region's endpoint), a folder upload that skips unchanged
files and resumes after an interruption, unfinished multipart uploads aborted, the bucket picker, and the
machine's credentials: an STS token of the profile's storage role under a policy scoped to the mount,
never the profile's AccessKey.  Every account here is granted only the shipped RAM policy (conftest);
every OSS operation is checked against the plugin's action list before it is sent."""

from __future__ import annotations

import json
import os
from typing import Iterator

import boto3
import pytest
from botocore.config import Config

import aws_moto
from aws_moto import FaultRule
from workbench.core.domain.errors import AuthError, ConfigError, NotFoundError, PluginError, TransientError
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.storage.upload import upload_folder

ROLE = "acs:ram::1000000000000001:role/workbench-machines"


@pytest.fixture
def moto() -> Iterator[aws_moto.MotoStack]:
    stack = aws_moto.start()
    stack.reset()
    yield stack
    stack.reset()


@pytest.fixture
def oss(moto, account):
    """A plain S3 client on moto for arranging and checking (same key as the plugin: same moto account)."""

    def client(region: str = "cn-hangzhou"):
        return boto3.client("s3", region_name=region, endpoint_url=moto.url, aws_access_key_id=account.access_key_id,
                            aws_secret_access_key="arrange", config=Config(s3={"addressing_style": "path"}))

    return client


def bucket(oss, name: str, region: str = "cn-hangzhou", files: dict[str, bytes] | None = None):
    c = oss(region)
    c.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})
    for key, data in (files or {}).items():
        c.put_object(Bucket=name, Key=key, Body=data)
    return c


@pytest.fixture
def provider(make_provider, moto):
    def make(**settings: str):
        return make_provider(oss_endpoint=moto.url, **settings)

    return make


@pytest.fixture
def oss_actions() -> Iterator[set[str]]:
    """Every OSS RAM action the plugin sends in the test (must all be in the shipped policy)."""
    from workbench_alibaba import clients

    from .conftest import policy_actions

    seen: set[str] = set()

    def watch(product: str, action: str) -> None:
        if product == "oss":
            seen.add(action)

    clients.add_call_observer(watch)
    yield seen
    clients.remove_call_observer(watch)
    assert {f"oss:{a}" for a in seen} <= set(policy_actions())


def oss_error(code: str, message: str, status: int, **more: str) -> tuple[int, str, str]:
    """An error answer as OSS writes it (XML: Code, Message, RequestId, HostId, then extra fields)."""
    extra = "".join(f"<{k}>{v}</{k}>" for k, v in more.items())
    return status, "application/xml", (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>'
                                       f"{message}</Message><RequestId>5C3D9175B6FC201293AD4890</RequestId><HostId>"
                                       f"example.oss-cn-hangzhou.aliyuncs.com</HostId>{extra}</Error>")


def make_folder(root, n=30):
    for i in range(n):
        p = root / ("sub" if i % 3 == 0 else "") / f"f{i:03d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(os.urandom(1000 + i))
    return root


def test_probe_finds_the_bucket_region_and_names_missing_or_refused_buckets(moto, oss, provider, oss_actions):
    bucket(oss, "sh-data", "cn-shanghai", {"x/a": b"1"})
    prov = provider()
    info = prov.storage_probe(parse_storage_uri("oss://sh-data/x"))
    assert info.region == "cn-shanghai" and info.display == "OSS bucket sh-data (cn-shanghai)"
    assert oss_actions == {"GetBucketLocation"}
    with pytest.raises(NotFoundError) as missing:
        prov.storage_probe(parse_storage_uri("oss://no-such-bucket-here/x"))
    assert "the OSS bucket 'no-such-bucket-here' does not exist" in missing.value.message
    moto.faults.add(FaultRule(operation=None, service="s3", respond=oss_error(
        "AccessDenied", "You have no right to access this object because of bucket acl.", 403)))
    with pytest.raises(AuthError) as denied:
        provider().storage_probe(parse_storage_uri("oss://someone-elses/x"))
    assert "may not use the OSS bucket 'someone-elses' (AccessDenied)" in denied.value.message
    assert "oss:ListObjects" in (denied.value.hint or "")
    with pytest.raises(Exception) as wrong_kind:
        prov.storage_probe(parse_storage_uri("s3://lab/x"))
    assert "serves oss:// addresses" in str(wrong_kind.value)


def test_a_bucket_of_another_region_is_followed_to_its_endpoint(moto, oss, provider):
    """OSS refuses a bucket addressed through another region's endpoint and names the right one."""
    bucket(oss, "bj-data", "cn-beijing")
    body = oss_error("AccessDenied", "The bucket you are attempting to access must be addressed using the specified "
                     "endpoint. Please send all future requests to this endpoint.", 403, Bucket="bj-data",
                     Endpoint="oss-cn-beijing.aliyuncs.com")
    moto.faults.add(FaultRule(operation=None, service=None, times=1, respond=body,
                              when=lambda call: call.method == "GET" and call.path.startswith("/bj-data")))
    info = provider().storage_probe(parse_storage_uri("oss://bj-data"))
    assert info.region == "cn-beijing"
    gets = [c for c in moto.faults.calls if c.method == "GET" and c.path.startswith("/bj-data")]
    assert [c.region for c in gets] == ["cn-hangzhou", "cn-beijing"]  # signed for the home region, then the bucket's


def test_folder_upload_skips_unchanged_files_and_resumes_after_an_interruption(moto, oss, provider, tmp_path,
                                                                              oss_actions):
    client = bucket(oss, "lab")
    prov = provider(retry_total="0")
    folder = make_folder(tmp_path / "dataset")
    uri = parse_storage_uri("oss://lab/datasets/d1")
    records = tmp_path / "records"

    cancelled = upload_folder(prov, folder, uri, records, should_stop=lambda: True)
    assert cancelled.cancelled and cancelled.uploaded == 0

    puts = {"n": 0}

    def after_ten(call) -> bool:
        if call.method != "PUT" or not call.path.startswith("/lab/datasets/"):
            return False
        puts["n"] += 1
        return puts["n"] > 10

    rule = moto.faults.add(FaultRule(operation=None, service=None, error=None, status=503, when=after_ten))
    with pytest.raises(TransientError) as lost:
        upload_folder(prov, folder, uri, records)
    assert "uploading" in lost.value.message and "oss://lab/datasets/d1/" in lost.value.message
    moto.faults.rules.remove(rule)
    arrived = len(client.list_objects_v2(Bucket="lab", Prefix="datasets/d1/").get("Contents", []))
    assert 1 <= arrived < 30

    resumed = upload_folder(prov, folder, uri, records)
    assert not resumed.cancelled and resumed.skipped == arrived and resumed.uploaded == 30 - arrived
    listed = client.list_objects_v2(Bucket="lab", Prefix="datasets/d1/")["Contents"]
    assert len(listed) == 30 and {o["Key"] for o in listed} >= {"datasets/d1/sub/f000.bin", "datasets/d1/f001.bin"}

    again = upload_folder(prov, folder, uri, records)
    assert (again.uploaded, again.skipped, again.bytes_uploaded) == (0, 30, 0)
    (folder / "f001.bin").write_bytes(b"new content")
    fourth = upload_folder(prov, folder, uri, records)
    assert (fourth.uploaded, fourth.skipped) == (1, 29)
    assert client.get_object(Bucket="lab", Key="datasets/d1/f001.bin")["Body"].read() == b"new content"
    assert prov.storage_list(parse_storage_uri("oss://lab/datasets/d1"))["f001.bin"].size == len(b"new content")
    assert oss_actions >= {"GetBucketLocation", "ListObjects", "PutObject", "ListMultipartUploads"}
    # no aws-chunked bodies (OSS does not take them): boto3's optional checksums are off
    assert not any("aws-chunked" in str(c.params) for c in moto.faults.calls)


def test_an_unfinished_multipart_upload_is_aborted_and_v2_signing_works(moto, oss, provider, tmp_path, monkeypatch,
                                                                        oss_actions):
    from workbench.core.storage import s3_api

    client = bucket(oss, "lab")
    client.create_multipart_upload(Bucket="lab", Key="big/model.pt")  # a crash left this behind: it bills
    monkeypatch.setattr(s3_api, "MULTIPART_BYTES", 5 * 1024 * 1024)
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "model.pt").write_bytes(os.urandom(11 * 1024 * 1024))
    report = upload_folder(provider(oss_signature="v2"), folder, parse_storage_uri("oss://lab/big"), tmp_path / "rec")
    assert report.aborted_incomplete == 1 and report.uploaded == 1
    assert client.list_multipart_uploads(Bucket="lab").get("Uploads", []) == []
    parts = [c for c in moto.faults.calls if c.method == "PUT" and c.path == "/lab/big/model.pt"]
    assert len(parts) == 3 and all(c.region == "" for c in parts)  # V2: no V4 credential scope
    assert client.head_object(Bucket="lab", Key="big/model.pt")["ContentLength"] == 11 * 1024 * 1024
    assert "AbortMultipartUpload" in oss_actions


def test_buckets_are_listed_for_the_picker_and_an_unlisted_operation_is_refused(oss, provider):
    for name in ("alpha-data", "beta-runs"):
        bucket(oss, name)
    prov = provider()
    assert prov.storage_buckets() == ["oss://alpha-data", "oss://beta-runs"]
    with pytest.raises(PluginError) as refused:
        prov._oss()._client("cn-hangzhou").delete_bucket(Bucket="alpha-data")
    assert "DeleteBucket, which is not in its list of actions" in refused.value.message
    assert oss("cn-hangzhou").head_bucket(Bucket="alpha-data")  # still there: the call was never sent


def test_machine_credentials_are_an_sts_token_of_the_storage_role_scoped_to_the_mount(ali, account, oss, provider):
    bucket(oss, "lab", "cn-shanghai")
    account.roles[ROLE] = ("oss:*",)
    uri = parse_storage_uri("oss://lab/runs/r1")
    prov = provider(storage_role_arn=ROLE)
    remote = prov.storage_machine_remote(uri, write=False, duration_s=1800, label="train-abc123")
    opts = remote.options
    assert opts["access_key_id"].startswith("STS.") and opts["access_key_id"] != account.access_key_id
    assert account.secret not in opts.values() and opts["session_token"].startswith("CAIS")
    assert opts["region"] == "cn-shanghai" and opts["type"] == "s3" and remote.path == "lab/runs/r1"
    assert remote.expires_at is not None and set(remote.secret_keys) == {"secret_access_key", "session_token"}
    temp = ali.state.temp[opts["access_key_id"]]
    assert temp.role_arn == ROLE and temp.session == "wb-train-abc123" and temp.expires - ali.state.now(
        account.account_id) == pytest.approx(1800, abs=5)
    read = temp.policy["Statement"]
    assert read[0] == {"Effect": "Allow", "Action": ["oss:ListObjects"], "Resource": ["acs:oss:*:*:lab"],
                       "Condition": {"StringLike": {"oss:Prefix": ["runs/r1", "runs/r1/", "runs/r1/*"]}}}
    assert read[1] == {"Effect": "Allow", "Action": ["oss:GetObject"], "Resource": ["acs:oss:*:*:lab/runs/r1/*"]}
    assert remote.notes == ()

    # a sync mount writes; a run longer than the role's session gets what the role allows, and says so
    long = prov.storage_machine_remote(uri, write=True, duration_s=30 * 3600, label="train-abc123")
    temp = ali.state.temp[long.options["access_key_id"]]
    assert "oss:PutObject" in temp.policy["Statement"][1]["Action"]
    assert temp.expires - ali.state.now(account.account_id) == pytest.approx(3600, abs=5)
    assert "storage_session_max_s" in long.notes[0]
    sessions = [s for s in ali.calls(account, "sts:AssumeRole")]
    assert [dict(s.params).get("DurationSeconds") for s in sessions] == ["1800", "3600"]


def test_longer_sessions_need_the_role_to_allow_them(ali, account, oss, provider):
    bucket(oss, "lab")
    account.roles[ROLE] = ("oss:*",)
    uri = parse_storage_uri("oss://lab/ckpt")
    with pytest.raises(ConfigError) as short_role:
        provider(storage_role_arn=ROLE, storage_session_max_s="43200").storage_machine_remote(uri, True, 8 * 3600, "l1")
    assert "does not allow sessions of 28800 s" in short_role.value.message
    assert "storage_session_max_s" in (short_role.value.hint or "")
    account.role_max_s[ROLE] = 43200
    remote = provider(storage_role_arn=ROLE, storage_session_max_s="43200").storage_machine_remote(uri, True,
                                                                                                  8 * 3600, "l1")
    temp = ali.state.temp[remote.options["access_key_id"]]
    assert temp.expires - ali.state.now(account.account_id) == pytest.approx(8 * 3600, abs=5) and remote.notes == ()


def test_without_a_storage_role_the_machine_gets_nothing_and_the_setting_is_named(ali, account, oss, provider):
    bucket(oss, "lab")
    with pytest.raises(ConfigError) as no_role:
        provider().storage_machine_remote(parse_storage_uri("oss://lab/x"), False, 3600, "l1")
    assert "setting storage_role_arn" in no_role.value.message and "never gets" in (no_role.value.hint or "")
    assert ali.calls(account, "sts:AssumeRole") == []
    with pytest.raises(ConfigError) as bad:
        provider(storage_role_arn="arn:aws:iam::1:role/x").storage_probe(parse_storage_uri("oss://lab"))
    assert "is not a RAM role ARN" in bad.value.message
    with pytest.raises(AuthError) as unknown:  # a role the account does not have: STS says so
        provider(storage_role_arn="acs:ram::1000000000000001:role/nope").storage_machine_remote(
            parse_storage_uri("oss://lab/x"), False, 3600, "l1")
    assert "making the machine's OSS credentials" in unknown.value.message


def test_the_server_checks_the_session_policy_grammar(ali, account, make_provider):
    account.roles[ROLE] = ("oss:*",)
    prov = make_provider()
    with pytest.raises(Exception) as bad:
        prov._api.sts("AssumeRole", RoleArn=ROLE, RoleSessionName="wb-x", Policy=json.dumps({"Statement": "x"}),
                      DurationSeconds=900)
    assert "PolicyGrammar" in str(bad.value)
