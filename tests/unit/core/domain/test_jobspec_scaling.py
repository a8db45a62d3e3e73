"""The spec fields for clusters, storage, recovery and secrets (num_nodes, storage, recovery, secrets)."""

from __future__ import annotations

import json
import textwrap

import pytest

from workbench.core.domain.errors import SpecError
from workbench.core.domain.jobspec import parse_spec, spec_from_dict, spec_to_dict
from workbench.core.domain.models import Recovery, StorageMode, StorageMount
from workbench.core.domain.storage_uri import parse_storage_uri

BASE = "name: job\nrun: python train.py\n"


def parse(text: str, tmp_path=None):
    return parse_spec(BASE + textwrap.dedent(text), source="t.yaml", base_dir=tmp_path)


def error_of(text: str, tmp_path=None) -> str:
    with pytest.raises(SpecError) as info:
        parse(text, tmp_path)
    return info.value.message


def test_defaults_are_one_node_no_storage_no_recovery():
    spec = parse("")
    assert (spec.num_nodes, spec.outputs_from, spec.storage, spec.recovery, spec.secrets) == (1, "head", (), None, ())


def test_a_full_cluster_spec_round_trips_through_the_store_dict(tmp_path):
    (tmp_path / "data").mkdir()
    spec = parse("""
        num_nodes: 4
        outputs_from: all
        storage:
          - {path: /data, source: s3://my-bucket/imagenet, mode: copy}
          - {path: ckpt, source: "https://acct01.blob.core.windows.net/runs/exp1", mode: sync, interval: 30s}
          - {path: /oss, source: oss://bucket-cn/x/y/}
          - {path: /local, source: ./data}
        recovery: {max_restarts: 5, on: [preemption, failure]}
        secrets: [HF_TOKEN, WANDB_API_KEY]
    """, tmp_path)
    assert spec.num_nodes == 4 and spec.outputs_from == "all"
    assert spec.storage[0] == StorageMount("/data", "s3://my-bucket/imagenet", StorageMode.COPY, 300)
    assert spec.storage[1].mode is StorageMode.SYNC and spec.storage[1].interval_s == 30
    assert spec.storage[3].source == str((tmp_path / "data").resolve())
    assert spec.recovery == Recovery(5, ("preemption", "failure"))
    assert spec.secrets == ("HF_TOKEN", "WANDB_API_KEY")
    again = spec_from_dict(json.loads(json.dumps(spec_to_dict(spec))))
    assert again == spec


def test_an_old_stored_spec_reads_with_the_new_defaults():
    d = spec_to_dict(parse(""))
    for key in ("num_nodes", "outputs_from", "storage", "recovery", "secrets"):
        d.pop(key)
    assert spec_from_dict(d) == parse("")


@pytest.mark.parametrize("text, message", [
    ("num_nodes: 0", "num_nodes: must be a whole number from 1 to 64, got 0"),
    ("num_nodes: 65", "num_nodes: must be a whole number from 1 to 64, got 65"),
    ("outputs_from: rank0", "outputs_from: must be one of head, all, got 'rank0'"),
    ("storage: s3://b/p", "storage: must be a list of mounts"),
    ("storage: [{path: /d}]", "storage[0].source: required field is missing"),
    ("storage: [{path: /d, source: gs://bucket/x}]", "unknown storage scheme 'gs://'"),
    ("storage: [{path: /d, source: s3://UPPER/x}]", "'UPPER' is not a valid bucket name"),
    ("storage: [{path: /d, source: 'https://example.com/c/x'}]", "is not an Azure Blob address"),
    ("storage: [{path: /d, source: s3://bkt/x, interval: 5m}]", "only a 'sync' mount has an interval"),
    ("storage: [{path: /d, source: s3://bkt/x, mode: mirror}]", "storage[0].mode: must be one of copy, sync"),
    ("storage: [{path: /d, source: s3://bkt/x}, {path: /d, source: s3://bkt/y}]", "'/d' is mounted twice"),
    ("storage: [{path: ../up, source: s3://bkt/x}]", "must not contain '..'"),
    ("storage: [{path: /d, source: ./missing}]", "folder './missing' does not exist"),
    ("storage: [{path: /d, source: s3://bkt/x, mode: sync, interval: 0s}]", "interval: must be"),
    ("recovery: {max_restarts: -1}", "recovery.max_restarts: must be a whole number from 0 to 100"),
    ("recovery: {on: [preemtion]}", "did you mean 'preemption'"),
    ("recovery: 3", "recovery: must be a mapping"),
    ("secrets: [HF-TOKEN]", "'HF-TOKEN' is not a variable name"),
    ("secrets: [TOKEN]\nenv: {TOKEN: abc}", "'TOKEN' is also set in env"),
])
def test_bad_fields_name_the_line_and_the_fix(tmp_path, text, message):
    assert message in error_of(text, tmp_path)


def test_recovery_off_means_none_and_a_bare_mapping_means_the_defaults():
    assert parse("recovery: off").recovery is None
    assert parse("recovery: {}").recovery == Recovery(3, ("preemption",))


def test_errors_point_at_the_line():
    assert error_of("storage:\n  - path: /d\n    source: ftp://x/y\n").startswith("t.yaml:5: storage[0].source")


@pytest.mark.parametrize("text, kind, bucket, prefix, account", [
    ("s3://my-bucket", "s3", "my-bucket", "", ""),
    ("s3://my-bucket/a/b/", "s3", "my-bucket", "a/b", ""),
    ("oss://bkt-1/x", "oss", "bkt-1", "x", ""),
    ("https://acct01.blob.core.windows.net/cont/p/q", "azure", "cont", "p/q", "acct01"),
    ("./here", "local", "", "", ""),
])
def test_storage_uris_parse_into_their_parts(text, kind, bucket, prefix, account):
    uri = parse_storage_uri(text)
    assert (uri.kind, uri.bucket, uri.prefix, uri.account) == (kind, bucket, prefix, account)
    if kind != "local":
        assert parse_storage_uri(str(uri)) == uri
