"""The controller's board on S3 through the AWS plugin: small objects with conditional writes, against moto behind
our wrapper, which decides a conditional write atomically as S3 does (tests/support/aws_s3_conditional.py).

Of 12 processes that create the same claim at once exactly one gets an ETag; a replace with a stale ETag loses;
and without the wrapper's per-object lock moto lets more than one create win (the race the lock closes)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest

from workbench.core.controller.board import Board, BucketObjects
from workbench.core.domain.storage_uri import parse_storage_uri

from .conftest import KEY_ID, SECRET

RACERS = 12
URI = parse_storage_uri("s3://board-lab/workbench/workbench-controller/install-1")


@pytest.fixture
def bucket(moto):
    boto3.client("s3", region_name="us-east-1", endpoint_url=moto.url, aws_access_key_id=KEY_ID,
                 aws_secret_access_key=SECRET).create_bucket(Bucket="board-lab")
    return URI


@pytest.fixture
def slow_check(monkeypatch):
    """moto's look-up of the key (its If-None-Match / If-Match check) takes 30 ms more: the window between its
    check and its store, which is a few microseconds in-process and which racing requests then almost never
    hit, is made wide enough that twelve racers always meet in it (a loaded server's window)."""
    from moto.s3.models import S3Backend

    real = S3Backend.get_object

    def get_object(self, *args, **kwargs):
        found = real(self, *args, **kwargs)
        time.sleep(0.03)
        return found

    monkeypatch.setattr(S3Backend, "get_object", get_object)


def race(provider, uri, key: str, n: int = RACERS) -> list[str | None]:
    """``n`` threads create ``key`` at once (each with its own content); what each got."""
    start = threading.Barrier(n)

    def one(i: int) -> str | None:
        start.wait()
        return provider.storage_write(uri, key, f'{{"owner":"racer-{i}"}}'.encode(), if_absent=True)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


def test_of_twelve_racing_creates_exactly_one_wins_and_the_object_is_the_winner_s(moto, make_provider, bucket,
                                                                                  slow_check):
    provider = make_provider()
    got = race(provider, bucket, "claims/root-1/attempt-1.json")
    winners = [etag for etag in got if etag is not None]
    assert len(winners) == 1, got
    data, etag = provider.storage_read(bucket, "claims/root-1/attempt-1.json")
    assert etag == winners[0]
    assert data == f'{{"owner":"racer-{got.index(etag)}"}}'.encode()
    puts = [c for c in moto.faults.calls if c.service == "s3" and c.method == "PUT" and "attempt-1" in c.path]
    assert len(puts) == RACERS  # every racer reached the server: the others lost there, not before


def test_a_replace_with_a_stale_etag_loses_and_one_with_the_current_etag_wins(make_provider, bucket):
    provider = make_provider()
    first = provider.storage_write(bucket, "claims/r/attempt-2.json", b'{"state":"claimed"}', if_absent=True)
    assert first is not None
    assert provider.storage_write(bucket, "claims/r/attempt-2.json", b"{}", if_absent=True) is None
    second = provider.storage_write(bucket, "claims/r/attempt-2.json", b'{"state":"launched"}', if_match=first)
    assert second is not None and second != first
    assert provider.storage_write(bucket, "claims/r/attempt-2.json", b'{"state":"x"}', if_match=first) is None
    assert provider.storage_read(bucket, "claims/r/attempt-2.json") == (b'{"state":"launched"}', second)
    # If-Match on a key that is not there loses too (S3: 404 NoSuchKey), it does not raise
    assert provider.storage_write(bucket, "claims/r/none.json", b"{}", if_match=first) is None


def test_racing_replaces_of_one_etag_let_exactly_one_win(make_provider, bucket, slow_check):
    provider = make_provider()
    etag = provider.storage_write(bucket, "claims/r/attempt-3.json", b'{"state":"claimed"}', if_absent=True)
    start = threading.Barrier(RACERS)

    def one(i: int) -> str | None:
        start.wait()
        return provider.storage_write(bucket, "claims/r/attempt-3.json", f'{{"taker":{i}}}'.encode(), if_match=etag)

    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        got = list(pool.map(one, range(RACERS)))
    assert sum(e is not None for e in got) == 1, got


def test_a_busy_key_may_answer_409_conditional_request_conflict_which_is_a_lost_condition(moto, make_provider,
                                                                                        bucket, slow_check):
    moto.faults.s3_writes.conflict = True
    provider = make_provider()
    got = race(provider, bucket, "claims/root-2/attempt-1.json")
    assert sum(e is not None for e in got) == 1, got
    assert moto.faults.s3_writes.conflicts >= 1  # some racers met the key busy and were told so


def test_read_delete_and_the_board_round_trip(make_provider, bucket):
    provider = make_provider()
    assert provider.storage_read(bucket, "nothing.json") is None
    provider.storage_delete(bucket, "nothing.json")  # deleting what is not there is fine (S3: 204)
    board = Board(BucketObjects(provider, bucket))
    etag = board.put("launches/root-1.json", {"root_id": "root-1", "attempts": 1}, if_absent=True)
    assert etag is not None and board.put("launches/root-1.json", {}, if_absent=True) is None
    board.add_event({"ts": 1.0, "kind": "relaunched"})
    assert board.get("launches/root-1.json") == ({"attempts": 1, "root_id": "root-1"}, etag)
    assert board.keys("launches") == ["launches/root-1.json"]
    assert [r["kind"] for _, r in board.records("events")] == ["relaunched"]
    board.delete("launches/root-1.json")
    assert board.get("launches/root-1.json") is None and board.keys("launches") == []


def test_without_the_wrapper_s_lock_moto_lets_more_than_one_create_win(moto, make_provider, bucket, slow_check):
    """The race the lock closes: moto checks If-None-Match, then stores; racing requests can both pass the check."""
    moto.faults.s3_writes.enabled = False
    provider = make_provider()
    most = 0
    for attempt in range(5):
        got = race(provider, bucket, f"claims/unlocked/attempt-{attempt}.json")
        most = max(most, sum(e is not None for e in got))
        if most > 1:
            break
    assert most > 1, "moto decided every race atomically: the wrapper's lock may no longer be needed"
