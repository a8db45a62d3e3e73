"""S3 through the AWS plugin against moto: bucket checks and their errors, a folder upload that skips
unchanged files, resumes after an interruption and cleans unfinished multipart uploads, and the
machine's credentials (STS, scoped by a policy). Every operation is checked against the shipped IAM
policy by this folder's conftest."""

from __future__ import annotations

import json
import os

import boto3
import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import AuthError, NotFoundError
from workbench.core.domain.storage_uri import parse_storage_uri
from workbench.core.storage.upload import upload_folder

from .conftest import KEY_ID, SECRET


def s3(moto, region="us-east-1"):
    return boto3.client("s3", region_name=region, endpoint_url=moto.url, aws_access_key_id=KEY_ID,
                        aws_secret_access_key=SECRET)


def make_folder(root, n=30):
    for i in range(n):
        p = root / ("sub" if i % 3 == 0 else "") / f"f{i:03d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(os.urandom(1000 + i))
    return root


def test_probe_finds_the_bucket_region_and_names_missing_or_refused_buckets(moto, make_provider):
    s3(moto, "us-west-2").create_bucket(Bucket="west-data", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    prov = make_provider()
    info = prov.storage_probe(parse_storage_uri("s3://west-data/x"))
    assert info.region == "us-west-2" and "west-data" in info.display
    with pytest.raises(NotFoundError) as missing:
        prov.storage_probe(parse_storage_uri("s3://no-such-bucket-here/x"))
    assert "no-such-bucket-here" in missing.value.message and "does not exist" in missing.value.message
    moto.faults.add(FaultRule(operation="", service="s3", error="AccessDenied", status=403, message="Access Denied"))
    with pytest.raises(AuthError) as denied:
        make_provider(name="other").storage_probe(parse_storage_uri("s3://someone-elses/x"))
    assert "may not use the S3 bucket 'someone-elses'" in denied.value.message
    assert "s3:ListBucket" in (denied.value.hint or "")


def test_folder_upload_skips_unchanged_files_and_resumes_after_an_interruption(moto, make_provider, tmp_path):
    from workbench.core.domain.errors import TransientError

    s3(moto).create_bucket(Bucket="lab")
    prov = make_provider()
    folder = make_folder(tmp_path / "dataset")
    uri = parse_storage_uri("s3://lab/datasets/d1")
    records = tmp_path / "records"

    cancelled = upload_folder(prov, folder, uri, records, should_stop=lambda: True)  # cancelled at once
    assert cancelled.cancelled and cancelled.uploaded == 0

    # the network dies after ten files: a clear error, and what arrived stays
    puts = {"n": 0}

    def after_ten(call) -> bool:  # S3 speaks REST: an object upload is a PUT of a key
        if call.method != "PUT" or not call.path.startswith("/lab/datasets/"):
            return False
        puts["n"] += 1
        return puts["n"] > 10

    rule = moto.faults.add(FaultRule(operation="", service="s3", error=None, status=503, when=after_ten))
    with pytest.raises(TransientError) as lost:
        upload_folder(prov, folder, uri, records)
    assert "uploading" in lost.value.message and "s3://lab/datasets/d1/" in lost.value.message
    moto.faults.rules.remove(rule)
    arrived = len(s3(moto).list_objects_v2(Bucket="lab", Prefix="datasets/d1/").get("Contents", []))
    assert 1 <= arrived < 30

    resumed = upload_folder(prov, folder, uri, records)  # only what was missing goes
    assert not resumed.cancelled and resumed.skipped == arrived and resumed.uploaded == 30 - arrived
    listed = s3(moto).list_objects_v2(Bucket="lab", Prefix="datasets/d1/")["Contents"]
    assert len(listed) == 30 and {o["Key"] for o in listed} >= {"datasets/d1/sub/f000.bin", "datasets/d1/f001.bin"}

    again = upload_folder(prov, folder, uri, records)  # nothing changed: nothing sent
    assert (again.uploaded, again.skipped, again.bytes_uploaded) == (0, 30, 0)

    changed = folder / "f001.bin"
    changed.write_bytes(b"new content")
    fourth = upload_folder(prov, folder, uri, records)
    assert (fourth.uploaded, fourth.skipped) == (1, 29)
    assert s3(moto).get_object(Bucket="lab", Key="datasets/d1/f001.bin")["Body"].read() == b"new content"


def test_an_unfinished_multipart_upload_is_aborted_before_the_next_upload(moto, make_provider, tmp_path, monkeypatch):
    from workbench.core.storage import s3_api

    client = s3(moto)
    client.create_bucket(Bucket="lab")
    client.create_multipart_upload(Bucket="lab", Key="big/model.pt")  # a crash left this behind: it bills
    monkeypatch.setattr(s3_api, "MULTIPART_BYTES", 5 * 1024 * 1024)
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "model.pt").write_bytes(os.urandom(11 * 1024 * 1024))
    report = upload_folder(make_provider(), folder, parse_storage_uri("s3://lab/big"), tmp_path / "rec")
    assert report.aborted_incomplete == 1 and report.uploaded == 1
    assert client.list_multipart_uploads(Bucket="lab").get("Uploads", []) == []
    posts = [c for c in moto.faults.calls if c.method == "POST" and c.path == "/lab/big/model.pt"]
    parts = [c for c in moto.faults.calls if c.method == "PUT" and c.path == "/lab/big/model.pt"]
    assert len(posts) == 3 and len(parts) == 3  # the leftover, then ours in parts: create, 3 × 5 MB, complete
    assert client.head_object(Bucket="lab", Key="big/model.pt")["ContentLength"] == 11 * 1024 * 1024


def test_machine_credentials_come_from_sts_with_a_policy_never_the_profile_key(moto, make_provider):
    s3(moto).create_bucket(Bucket="lab")
    uri = parse_storage_uri("s3://lab/runs/r1")
    remote = make_provider().storage_machine_remote(uri, write=False, duration_s=7200, label="train-abc123")
    assert remote.options["access_key_id"] != KEY_ID and SECRET not in remote.options.values()
    assert remote.path == "lab/runs/r1" and remote.expires_at is not None
    (call,) = moto.faults.find("GetFederationToken")
    assert call.param("Name") == "wb-train-abc123" and call.param("DurationSeconds") == "7200"
    policy = json.loads(call.param("Policy"))
    assert {a for st in policy["Statement"] for a in ([st["Action"]] if isinstance(st["Action"], str)
                                                      else st["Action"])} == {"s3:ListBucket", "s3:GetObject",
                                                                              "s3:GetBucketLocation"}

    role = "arn:aws:iam::123456789012:role/workbench-machines"
    make_provider(name="sso", storage_role_arn=role).storage_machine_remote(uri, True, 50 * 3600, "train-abc123")
    (assumed,) = moto.faults.find("AssumeRole")
    assert assumed.param("RoleArn") == role and assumed.param("DurationSeconds") == str(12 * 3600)
    assert "s3:PutObject" in assumed.param("Policy")


def test_temporary_profile_credentials_cannot_federate_and_say_what_to_do(moto, make_provider):
    s3(moto).create_bucket(Bucket="lab")
    moto.faults.add(FaultRule(operation="GetFederationToken", error="AccessDenied", status=403,
                              message="Cannot call GetFederationToken with session credentials"))
    with pytest.raises(AuthError) as info:
        make_provider().storage_machine_remote(parse_storage_uri("s3://lab/x"), True, 3600, "l1")
    assert "storage_role_arn" in (info.value.hint or "")


def test_buckets_are_listed_for_the_picker(moto, make_provider):
    for name in ("alpha-data", "beta-runs"):
        s3(moto).create_bucket(Bucket=name)
    assert make_provider().storage_buckets() == ["s3://alpha-data", "s3://beta-runs"]
