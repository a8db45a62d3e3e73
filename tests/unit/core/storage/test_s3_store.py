"""The storage kit: an S3-compatible store's shared half and the provider mixin that hands storage calls to it.

A fake client and transfer manager stand in for boto3 (the plugins' own tests run the real SDK against
moto); what is checked here is what the kit adds: addresses in messages, the operation named to the
plugin's error mapping, a stopped upload that is no failure, and the refusal of another kind's address.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import Future
from typing import Any

import pytest

from workbench.core.domain.errors import ConfigError, NotFoundError, WorkbenchError
from workbench.core.domain.storage_uri import StorageUri, parse_storage_uri
from workbench.core.storage import s3_api
from workbench.core.storage.contract import PutFile, RemoteObject, ServesObjectStorage
from workbench.core.storage.s3_store import S3CompatibleStore, transfer_config


class SdkError(Exception):
    pass


class Pages:
    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages

    def paginate(self, **_: Any) -> list[dict[str, Any]]:
        return self.pages


class Client:
    def __init__(self, region: str, fail: bool = False) -> None:
        self.region, self.fail = region, fail

    def get_paginator(self, name: str) -> Pages:
        if self.fail:
            raise SdkError("no")
        if name == "list_objects_v2":
            return Pages([{"Contents": [{"Key": "runs/a/x.bin", "Size": 3, "ETag": '"e1"'},
                                        {"Key": "runs/a/sub/", "Size": 0}]}])
        return Pages([{"Uploads": []}])

    def list_buckets(self) -> dict[str, Any]:
        if self.fail:
            raise SdkError("no")
        return {"Buckets": [{"Name": "zeta"}, {"Name": "alpha"}]}


class Manager:
    """Uploads finish at once; a file named ``bad`` fails."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def upload(self, path: str, bucket: str, key: str, subscribers: list[Any]) -> Future:
        fut: Future = Future()
        self.keys.append(key)
        if path == "bad":
            fut.set_exception(SdkError("refused"))
        else:
            fut.set_result(None)
            for s in subscribers:
                s.on_progress(fut, 5)
                s.on_done(fut)
        return fut


class Store(S3CompatibleStore):
    scheme, service = "s3", "S3"
    make_bucket, grant = "the console", "its user s3:ListBucket on the bucket"

    def __init__(self, fail: bool = False) -> None:
        self.home, self.fail, self.manager, self.failed = "home-1", fail, Manager(), []
        self.profile_name = "lab"

    def _client(self, region: str) -> Client:
        return Client(region, self.fail)

    def region_of(self, uri: StorageUri) -> str:
        return "west-2"

    def _transfer_manager(self, client: Any) -> Any:
        assert client.region == "west-2"  # the bucket's region, not home
        return contextlib.nullcontext(self.manager)

    def _fail(self, exc: BaseException, what: str, uri: StorageUri, operation: str) -> WorkbenchError:
        self.failed.append((what, operation))
        return NotFoundError(f"{what} ({operation})")

    def machine_remote(self, uri, write, duration_s, label):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def test_probe_list_and_buckets_read_the_same_on_every_cloud() -> None:
    uri = parse_storage_uri("s3://data/runs/a")
    store = Store()
    assert store.probe(uri).display == "S3 bucket data (west-2)"
    assert store.list(uri) == {"x.bin": RemoteObject(3, "e1")}
    assert store.abort_incomplete(uri) == 0
    assert store.buckets() == ["s3://alpha", "s3://zeta"]
    assert store.url(uri) == "s3://data/runs/a/" and store.url(uri, "x.bin") == "s3://data/runs/a/x.bin"


def test_sdk_errors_go_through_the_plugin_s_mapping_with_the_address_and_operation() -> None:
    uri = parse_storage_uri("s3://data/runs/a")
    store = Store(fail=True)
    for call in (lambda: store.list(uri), lambda: store.abort_incomplete(uri), store.buckets):
        with pytest.raises(NotFoundError):
            call()
    assert store.failed == [("listing s3://data/runs/a/", "ListObjectsV2"),
                            ("cleaning unfinished uploads in s3://data/runs/a/", "ListMultipartUploads"),
                            ("listing S3 buckets", "ListBuckets")]


def test_put_reports_each_file_and_names_the_one_that_failed() -> None:
    uri = parse_storage_uri("s3://data/runs/a")
    store, done, sent = Store(), [], []
    store.put(uri, [], done.append, sent.append, lambda: False)  # nothing to send: no client asked
    assert store.manager.keys == []
    store.put(uri, [PutFile("f1", "x.bin", 5)], lambda f, etag: done.append(f.key), sent.append, lambda: False)
    assert done == ["x.bin"] and sent == [5] and store.manager.keys == ["runs/a/x.bin"]
    with pytest.raises(NotFoundError, match=r"uploading bad to s3://data/runs/a/y.bin \(PutObject\)"):
        store.put(uri, [PutFile("bad", "y.bin", 5)], lambda f, etag: None, sent.append, lambda: False)
    store.failed.clear()
    store.put(uri, [PutFile("bad", "y.bin", 5)], lambda f, etag: None, sent.append, lambda: True)
    assert store.failed == []  # stopped: an abandoned upload is not a failure


def test_transfer_config_follows_the_shared_part_size(monkeypatch) -> None:
    monkeypatch.setattr(s3_api, "MULTIPART_BYTES", 5 * 1024 * 1024)
    assert transfer_config() == {"multipart_threshold": 5 * 1024 * 1024, "multipart_chunksize": 5 * 1024 * 1024,
                                 "max_concurrency": s3_api.CONCURRENCY}


def test_missing_and_refused_buckets_read_alike() -> None:
    from workbench.core.domain.errors import AuthError

    uri, store = parse_storage_uri("s3://data/x"), Store()
    missing = store._bucket_error("NoSuchBucket", uri)
    assert isinstance(missing, NotFoundError) and missing.message == (
        "the S3 bucket 'data' does not exist (or is not visible to profile 'lab')")
    assert missing.hint == "check the name; buckets are created in the console"
    refused = store._bucket_error("403", uri)
    assert isinstance(refused, AuthError) and refused.message == "profile 'lab' may not use the S3 bucket 'data' (403)"
    assert refused.hint == "give its user s3:ListBucket on the bucket"
    assert store._bucket_error("SlowDown", uri) is None


class Served(ServesObjectStorage):
    display_name = "Fake Cloud"
    storage_kinds, storage_addresses = ("s3",), "s3://"

    def __init__(self) -> None:
        self.store = Store()

    def _object_store(self) -> Store:
        return self.store


def test_a_provider_serves_its_kind_through_its_store_and_refuses_others() -> None:
    prov = Served()
    assert prov.storage_probe(parse_storage_uri("s3://data")).region == "west-2"
    assert prov.storage_buckets() == ["s3://alpha", "s3://zeta"]
    assert prov.storage_abort_incomplete(parse_storage_uri("s3://data")) == 0
    with pytest.raises(ConfigError, match="the Fake Cloud plugin serves s3:// addresses, not oss://data"):
        prov.storage_list(parse_storage_uri("oss://data"))
