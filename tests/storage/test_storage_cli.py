"""`workbench storage buckets|upload|check` through the real CLI against moto S3 (server mode): what a
person types before a launch, with the JSON shapes docs/cli.md promises."""

from __future__ import annotations

import json

import boto3
import pytest

from test_recovery_local import Cli, moto  # noqa: F401 - the fixture is used by name


@pytest.mark.timeout(180)
def test_buckets_upload_and_check_from_the_command_line(moto, tmp_path):  # noqa: F811
    cli = Cli(tmp_path / "home")
    r = cli("profiles", "add", "aws", "moto", "--region", "us-east-1", "--endpoint-url", moto.url,
            "--set", "retry_backoff_cap_s=0.02", "--set", "pricing=snapshot")
    assert r.returncode == 0, r.stderr
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id="AKIAX",
                      aws_secret_access_key="x")
    s3.create_bucket(Bucket="lab-data")

    r = cli("storage", "buckets", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"buckets": [{"profile": "moto", "uri": "s3://lab-data"}], "errors": []}

    folder = tmp_path / "dataset"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a" * 3000)
    (folder / "sub" / "b.txt").write_text("bee")
    first = cli("storage", "upload", str(folder), "s3://lab-data/imagenet", "--json")
    assert first.returncode == 0, first.stderr
    got = json.loads(first.stdout)
    assert (got["files"], got["uploaded"], got["skipped"], got["bytes_total"]) == (2, 2, 0, 3003)
    keys = {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket="lab-data")["Contents"]}
    assert keys == {"imagenet/a.bin": 3000, "imagenet/sub/b.txt": 3}
    again = json.loads(cli("storage", "upload", str(folder), "s3://lab-data/imagenet", "--json").stdout)
    assert (again["uploaded"], again["skipped"]) == (0, 2)  # unchanged files are skipped

    spec = tmp_path / "train.yaml"
    spec.write_text("name: t\nrun: ls /data\nresources: {gpu: V100:1, disk_gb: 100}\n"
                    "storage:\n  - {path: /data, source: s3://lab-data/imagenet}\n"
                    "guards: {max_runtime: 10m}\n")
    r = cli("storage", "check", str(spec), "--provider", "aws", "--json")
    assert r.returncode == 0, r.stderr
    [mount] = json.loads(r.stdout)["storage"]["mounts"]
    assert (mount["uri"], mount["bytes"], mount["objects"], mount["profile"]) == (
        "s3://lab-data/imagenet", 3003, 2, "moto")

    # a missing bucket is an input error naming the mount, before anything bills
    spec.write_text(spec.read_text().replace("lab-data/imagenet", "no-such-bucket/x"))
    r = cli("storage", "check", str(spec), "--provider", "aws")
    assert r.returncode != 0 and "storage[0] (s3://no-such-bucket/x)" in r.stderr and "Traceback" not in r.stderr
    r = cli("storage", "upload", str(tmp_path / "nope"), "s3://lab-data/x")
    assert r.returncode == 1 and "is not a folder" in r.stderr
