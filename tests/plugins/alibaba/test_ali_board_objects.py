"""The controller's board on OSS through the Alibaba plugin, moto standing in for OSS's S3-compatible API with our
wrapper answering PutObject as OSS does (``s3_writes.oss``: If-None-Match / If-Match refused with 400
NotImplemented, ``x-oss-forbid-overwrite: true`` honoured with 409 FileAlreadyExists; tests/support/
aws_s3_conditional.py).  What the plugin sends is recorded from boto3's own ``before-send`` event: a create carries
the signed OSS header and no S3 condition; 12 racing creates give one ETag; a replace (built on the create of
a marker, OSS having no If-Match write) lets one of 12 racing holders of an ETag win and a stale ETag lose."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import boto3
import pytest
from botocore.config import Config

import aws_moto
from workbench.core.controller.board import Board, BucketObjects
from workbench.core.domain.storage_uri import parse_storage_uri

RACERS = 12
URI = parse_storage_uri("oss://board-oss/workbench/workbench-controller/install-1")
KEY = "claims/root-1/attempt-1.json"


@pytest.fixture
def moto() -> Iterator[aws_moto.MotoStack]:
    stack = aws_moto.start()
    stack.reset()
    stack.faults.s3_writes.oss = True
    yield stack
    stack.reset()


@pytest.fixture
def provider(make_provider, moto, account):
    boto3.client("s3", region_name="cn-hangzhou", endpoint_url=moto.url, aws_access_key_id=account.access_key_id,
                 aws_secret_access_key="arrange", config=Config(s3={"addressing_style": "path"})).create_bucket(
        Bucket="board-oss", CreateBucketConfiguration={"LocationConstraint": "cn-hangzhou"})
    return make_provider(oss_endpoint=moto.url)


@pytest.fixture
def sent(provider) -> list[dict[str, str]]:
    """The headers of every PutObject the plugin's OSS client sends (after signing)."""
    seen: list[dict[str, str]] = []
    lock = threading.Lock()

    def record(request, **_):
        with lock:
            seen.append({k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()})

    store = provider._oss()
    store._client(store.region_of(URI)).meta.events.register("before-send.s3.PutObject", record)
    return seen


def racing(n: int, one) -> list[str | None]:
    start = threading.Barrier(n)

    def run(i: int) -> str | None:
        start.wait()
        return one(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


def test_a_create_sends_oss_s_forbid_overwrite_header_signed_and_no_s3_condition(provider, sent):
    assert provider.storage_write(URI, KEY, b'{"state":"claimed"}', if_absent=True)
    assert provider.storage_write(URI, KEY, b"{}", if_absent=True) is None  # 409 FileAlreadyExists: lost
    assert len(sent) == 2
    for headers in sent:
        assert headers["x-oss-forbid-overwrite"] == "true"
        assert "if-none-match" not in headers and "if-match" not in headers
        assert "x-oss-forbid-overwrite" in headers["authorization"]  # SigV4's SignedHeaders: part of the signature
    sent.clear()
    provider.storage_write(URI, "events/1.json", b"{}")  # a plain write: no header
    assert sent and "x-oss-forbid-overwrite" not in sent[0]


def test_of_twelve_racing_creates_exactly_one_wins(provider):
    got = racing(RACERS, lambda i: provider.storage_write(URI, KEY, f'{{"owner":{i}}}'.encode(), if_absent=True))
    winners = [e for e in got if e is not None]
    assert len(winners) == 1, got
    assert provider.storage_read(URI, KEY) == (f'{{"owner":{got.index(winners[0])}}}'.encode(), winners[0])


def test_a_replace_wins_with_the_current_etag_loses_with_a_stale_one_and_never_sends_if_match(provider, sent):
    first = provider.storage_write(URI, KEY, b'{"state":"claimed"}', if_absent=True)
    second = provider.storage_write(URI, KEY, b'{"state":"launched"}', if_match=first)
    assert second is not None and second != first
    assert provider.storage_write(URI, KEY, b'{"state":"x"}', if_match=first) is None
    assert provider.storage_write(URI, "claims/root-1/none.json", b"{}", if_match=first) is None
    assert provider.storage_read(URI, KEY) == (b'{"state":"launched"}', second)
    assert not any("if-match" in h or "if-none-match" in h for h in sent)
    assert list(provider.storage_list(URI)) == [KEY]  # every marker removed


def test_of_twelve_racing_replaces_of_one_etag_exactly_one_wins(provider):
    etag = provider.storage_write(URI, KEY, b'{"state":"claimed"}', if_absent=True)
    got = racing(RACERS, lambda i: provider.storage_write(URI, KEY, f'{{"taker":{i}}}'.encode(), if_match=etag))
    winners = [e for e in got if e is not None]
    assert len(winners) == 1, got
    assert provider.storage_read(URI, KEY)[1] == winners[0]
    assert list(provider.storage_list(URI)) == [KEY]


def test_a_marker_left_by_a_dead_writer_makes_the_replace_lose_and_is_named_in_a_warning(provider, caplog):
    etag = provider.storage_write(URI, KEY, b'{"state":"claimed"}', if_absent=True)
    provider.storage_write(URI, f"{KEY}.if-match-{etag}", b'{"at": 1.0}')  # died between its marker and its write
    with caplog.at_level("WARNING", logger="workbench.alibaba.storage"):
        assert provider.storage_write(URI, KEY, b'{"state":"taken"}', if_match=etag) is None
    assert f"{KEY}.if-match-{etag}" in caplog.text and "deleted" in caplog.text


def test_s3_s_conditional_headers_are_what_oss_refuses(moto, account):
    """The stand-in answers as OSS documents (why the plugin never sends them)."""
    from botocore.exceptions import ClientError

    s3 = boto3.client("s3", region_name="cn-hangzhou", endpoint_url=moto.url, aws_access_key_id=account.access_key_id,
                      aws_secret_access_key="x", config=Config(s3={"addressing_style": "path"}))
    s3.create_bucket(Bucket="plain-oss", CreateBucketConfiguration={"LocationConstraint": "cn-hangzhou"})
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket="plain-oss", Key="k", Body=b"x", IfNoneMatch="*")
    assert refused.value.response["Error"]["Code"] == "NotImplemented"


def test_read_delete_and_a_board_round_trip(provider):
    assert provider.storage_read(URI, "nothing.json") is None
    provider.storage_delete(URI, "nothing.json")
    board = Board(BucketObjects(provider, URI))
    etag = board.put("launches/root-1.json", {"root_id": "root-1"}, if_absent=True)
    assert etag is not None and board.put("launches/root-1.json", {}, if_absent=True) is None
    board.add_event({"ts": 1.0, "kind": "relaunched"})
    assert board.get("launches/root-1.json") == ({"root_id": "root-1"}, etag)
    assert board.keys("launches") == ["launches/root-1.json"]
    board.delete("launches/root-1.json")
    assert board.keys("launches") == [] and [r["kind"] for _, r in board.records("events")] == ["relaunched"]
