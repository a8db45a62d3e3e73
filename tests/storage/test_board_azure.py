"""The controller's board on Azure Blob through the Azure plugin, against Azurite with the real azure-storage-blob
SDK (the account and its key found through the ARM test server): of 12 racing creates exactly one wins, a stale
If-Match loses, reads and deletes, and a Board round trip with its keys listing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from workbench.core.controller.board import Board, BucketObjects
from workbench.core.domain.storage_uri import parse_storage_uri

RACERS = 12


@pytest.fixture
def board_uri(azure):
    azure.container("boards")
    return parse_storage_uri(azure.uri("boards", "workbench/workbench-controller/install-1"))


@pytest.fixture
def provider(cloud, azure):
    return cloud.accounts.provider(cloud.accounts.profile("lab"))


def test_of_twelve_racing_creates_of_one_blob_exactly_one_wins(provider, board_uri, azure):
    start = threading.Barrier(RACERS)

    def one(i: int) -> str | None:
        start.wait()
        return provider.storage_write(board_uri, "claims/root-1/attempt-1.json", f'{{"owner":{i}}}'.encode(),
                                      if_absent=True)

    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        got = list(pool.map(one, range(RACERS)))
    winners = [e for e in got if e is not None]
    assert len(winners) == 1, got
    data, etag = provider.storage_read(board_uri, "claims/root-1/attempt-1.json")
    assert etag == winners[0] and data == f'{{"owner":{got.index(etag)}}}'.encode()
    stored = azure.blobs("boards", "workbench/workbench-controller/install-1/claims/")
    assert list(stored) == ["workbench/workbench-controller/install-1/claims/root-1/attempt-1.json"]


def test_racing_replaces_of_one_etag_let_exactly_one_win(provider, board_uri):
    etag = provider.storage_write(board_uri, "claims/r/attempt-2.json", b'{"state":"claimed"}', if_absent=True)
    start = threading.Barrier(RACERS)

    def one(i: int) -> str | None:
        start.wait()
        return provider.storage_write(board_uri, "claims/r/attempt-2.json", f'{{"taker":{i}}}'.encode(), if_match=etag)

    with ThreadPoolExecutor(max_workers=RACERS) as pool:
        got = list(pool.map(one, range(RACERS)))
    assert sum(e is not None for e in got) == 1, got


def test_if_match_wins_with_the_current_etag_and_loses_with_a_stale_one_or_no_blob(provider, board_uri):
    first = provider.storage_write(board_uri, "claims/r/attempt-3.json", b'{"state":"claimed"}', if_absent=True)
    assert first and provider.storage_write(board_uri, "claims/r/attempt-3.json", b"{}", if_absent=True) is None
    second = provider.storage_write(board_uri, "claims/r/attempt-3.json", b'{"state":"launched"}', if_match=first)
    assert second is not None and second != first
    assert provider.storage_write(board_uri, "claims/r/attempt-3.json", b'{"x":1}', if_match=first) is None
    assert provider.storage_read(board_uri, "claims/r/attempt-3.json") == (b'{"state":"launched"}', second)
    assert provider.storage_write(board_uri, "claims/r/missing.json", b"{}", if_match=first) is None
    plain = provider.storage_write(board_uri, "claims/r/attempt-3.json", b'{"state":"failed"}')  # unconditional
    assert plain not in (None, second)


def test_read_and_delete_and_what_is_not_there(provider, board_uri):
    assert provider.storage_read(board_uri, "nothing.json") is None
    provider.storage_delete(board_uri, "nothing.json")  # already gone: fine
    provider.storage_write(board_uri, "released/root-9.json", b'{"root_id":"root-9"}')
    provider.storage_delete(board_uri, "released/root-9.json")
    assert provider.storage_read(board_uri, "released/root-9.json") is None


def test_a_board_round_trip_with_its_keys(provider, board_uri, azure):
    board = Board(BucketObjects(provider, board_uri))
    assert board.where().startswith("https://")
    etag = board.put("launches/root-1.json", {"root_id": "root-1", "attempts": 1}, if_absent=True)
    assert etag is not None and board.put("launches/root-1.json", {}, if_absent=True) is None
    board.put_bytes("launches/root-1.tar.gz", b"\x1f\x8b workdir")
    board.add_event({"ts": 2.0, "kind": "finished"})
    board.add_event({"ts": 1.0, "kind": "relaunched"})
    assert board.get("launches/root-1.json") == ({"attempts": 1, "root_id": "root-1"}, etag)
    assert board.get_bytes("launches/root-1.tar.gz") == b"\x1f\x8b workdir"
    assert board.keys("launches") == ["launches/root-1.json", "launches/root-1.tar.gz"]
    assert [r["kind"] for _, r in board.records("events")] == ["relaunched", "finished"]  # time order
    board.delete("launches/root-1.json")
    assert board.keys("launches") == ["launches/root-1.tar.gz"]


def test_a_missing_container_is_a_not_found_error_naming_it(provider, azure):
    from workbench.core.domain.errors import NotFoundError

    uri = parse_storage_uri(azure.uri("no-such-container", "b"))
    with pytest.raises(NotFoundError) as err:
        provider.storage_write(uri, "claims/x.json", b"{}", if_absent=True)
    assert "no-such-container" in err.value.message
    with pytest.raises(NotFoundError):
        provider.storage_read(uri, "claims/x.json")
