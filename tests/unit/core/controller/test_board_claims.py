"""The controller's board and claims on the file-backed fake cloud, with two separate stores (the app's and the
controller's): a handed launch is relaunched exactly once whoever notices first, the other side learns of the
new attempt from the board, a relaunch that died half way is taken over without leaving anything billing, and
the app stands aside while the controller answers."""

from __future__ import annotations

import threading
import time

import pytest

from workbench_testing import fake_cloud_accounts

from workbench.core import paths
from workbench.core.controller import handover
from workbench.core.controller.away import app_claims, catch_up, is_reachable
from workbench.core.controller.board import Board, FolderObjects
from workbench.core.controller.claims import CLAIMED, LAUNCHED, BoardClaims, claim_key
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine
from workbench.core.providers.accounts import Accounts
from workbench.core.providers.registry import discover
from workbench.core.store.database import Store

SPEC = """name: train
run: python3 train.py
resources: {gpu: V100:1, spot: true}
providers: [fakecloud]
regions: [fake-east, fake-west]
guards: {max_runtime: 2h}
recovery: {max_restarts: 3, on: [preemption, failure]}
"""


@pytest.fixture
def sides(tmp_path, monkeypatch):
    """(app accounts, controller accounts, board): two stores on one fake cloud, one board."""
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    app, creds = fake_cloud_accounts(monkeypatch, {"fc": {}})
    other = Accounts(Store.open(app.store.path.parent / "controller.db"), entries=discover(), credentials=creds)
    for p in app.store.list_profiles():
        other.save_profile(p)
    board = Board(FolderObjects(tmp_path / "bucket"))
    yield app, other, board
    other.store.close()
    app.store.close()


def take_back(acc, launch_id: str) -> None:
    prov = acc.provider(acc.profile("fc"))
    with prov._state() as st:
        for iid, raw in st["instances"].items():
            if raw.get("launch_id", launch_id) == launch_id or launch_id in iid:
                raw["state"] = "terminated"


def engine(acc, claims) -> RecoveryEngine:
    return RecoveryEngine(acc, teardown_timeout_s=5, teardown_poll_s=0.01, claims=claims)


def billing(acc) -> set[str]:
    reconcile(acc)
    return {i.launch_id for i in acc.store.list_instances() if i.state.billable}


def test_folder_board_conditional_writes_let_exactly_one_writer_win(tmp_path):
    board = Board(FolderObjects(tmp_path / "b"))
    wins = []

    def race(i: int) -> None:
        if board.put("claims/x/attempt-2.json", {"owner": i}, if_absent=True) is not None:
            wins.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    rec, etag = board.get("claims/x/attempt-2.json")
    assert rec == {"owner": wins[0]}
    assert board.put("claims/x/attempt-2.json", {"owner": "late"}, if_match="0" * 32) is None
    assert board.put("claims/x/attempt-2.json", {"owner": "next"}, if_match=etag) is not None
    assert board.keys("claims") == ["claims/x/attempt-2.json"]


def test_a_handed_launch_is_relaunched_once_by_whoever_claims_first(sides):
    app, ctl, board = sides
    (first,) = execute(app, plan(app, parse_spec(SPEC, source="t.yaml"), provider="fakecloud"))
    handover.hand_over(app.store, board, first.launch_id, app_public_key="ssh-ed25519 AAAA test")
    assert handover.take_in(ctl.store, board, paths.data_dir() / "wd") == [first.launch_id]
    assert ctl.store.get_launch(first.launch_id).spec["recovery"]["max_restarts"] == 3

    take_back(app, first.launch_id)
    reconcile(app), reconcile(ctl)
    # both notice at once, each with its own store and its own owner name: one relaunches
    results: dict[str, list] = {}

    def poll(name, acc):
        claims = BoardClaims(board, name, retry_s=300)
        results[name] = engine(acc, lambda root: claims).poll()

    threads = [threading.Thread(target=poll, args=(n, a)) for n, a in (("app", app), ("controller", ctl))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    relaunched = [e for evs in results.values() for e in evs if e.action == "relaunched"]
    assert len(relaunched) == 1, results
    (claim, _) = board.get(claim_key(first.launch_id, 2))
    assert claim["state"] == LAUNCHED and claim["launch_id"] == relaunched[0].launch_id
    # the side that stood aside learns of attempt 2 from the board, and then has nothing to do
    winner = ctl if results["controller"] else app
    loser = app if winner is ctl else ctl
    assert handover.import_outcomes(loser.store, board, [first.launch_id]) == [relaunched[0].launch_id]
    assert loser.store.attempt_of(relaunched[0].launch_id).attempt == 2
    assert loser.store.attempt_of(first.launch_id).end_reason in ("failure", "preemption")
    reconcile(loser)
    claims = BoardClaims(board, "again", retry_s=300)
    assert engine(loser, lambda root: claims).poll() == []
    assert billing(app) == {relaunched[0].launch_id}


def test_a_relaunch_that_died_half_way_is_taken_over_and_leaves_nothing(sides, monkeypatch):
    app, ctl, board = sides
    (first,) = execute(app, plan(app, parse_spec(SPEC, source="t.yaml"), provider="fakecloud"))
    handover.hand_over(app.store, board, first.launch_id)
    handover.take_in(ctl.store, board, paths.data_dir() / "wd")
    # the controller died after launching attempt 2's machine but before recording the outcome
    spec2 = parse_spec(SPEC.replace("name: train", "name: train"), source="t.yaml")
    half = plan(app, spec2, provider="fakecloud")
    execute(ctl, half)
    dead = BoardClaims(board, "controller:old", retry_s=300, lease_s=60)
    ticket = dead.take(first.launch_id, 2, "test")
    dead.planned(ticket, half.launch_id)
    assert board.get(claim_key(first.launch_id, 2))[0]["state"] == CLAIMED
    take_back(app, first.launch_id)
    reconcile(app)
    # the app within the lease stands aside; after it, takes over
    now = [time.time()]
    claims = BoardClaims(board, "app:x", retry_s=300, clock=lambda: now[0], lease_s=60)
    assert engine(app, lambda root: claims).poll() == []
    now[0] += 61
    (ev,) = [e for e in engine(app, lambda root: claims).poll() if e.action == "relaunched"]
    assert billing(app) == {ev.launch_id}  # the dead relaunch's machine is gone
    assert board.get(claim_key(first.launch_id, 2))[0]["owner"] == "app:x"


def test_the_app_stands_aside_while_the_controller_answers(sides):
    app, _, board = sides
    (first,) = execute(app, plan(app, parse_spec(SPEC, source="t.yaml"), provider="fakecloud"))
    handover.hand_over(app.store, board, first.launch_id)
    state = {"up": True}
    of = app_claims(app, reachable=lambda profile: state["up"], boards={"fc": board})
    root = app.store.get_launch(first.launch_id)
    assert of(root).take(first.launch_id, 2, "x") is None  # the controller's to relaunch
    state["up"] = False
    ticket = of(root).take(first.launch_id, 2, "x")  # unreachable: the app takes over, through the board
    assert ticket is not None and board.get(claim_key(first.launch_id, 2))[0]["owner"].startswith("app:")
    # a profile whose board cannot be read: recovery waits rather than risk a second relaunch
    assert app_claims(app, reachable=lambda profile: False)(root).take(first.launch_id, 3, "x") is None
    assert app_claims(app)(app.store.get_launch(first.launch_id)) is not None
    now = time.time()
    assert is_reachable({"ts": now - 10, "poll_s": 30}, now)
    assert not is_reachable({"ts": now - 200, "poll_s": 30}, now)
    assert not is_reachable(None, now)


def test_catch_up_reads_events_once_and_imports_ended_attempts(sides, monkeypatch):
    app, _, board = sides
    (first,) = execute(app, plan(app, parse_spec(SPEC, source="t.yaml"), provider="fakecloud"))
    handover.hand_over(app.store, board, first.launch_id)
    app.store.add_attempt(__import__("workbench.core.store.attempts", fromlist=["AttemptRecord"]).AttemptRecord(
        first.launch_id, first.launch_id, 1, time.time() - 60, "running"))
    board.put(f"attempts/{first.launch_id}.json", {"attempts": [
        {"launch_id": first.launch_id, "root_id": first.launch_id, "attempt": 1, "ended_at": time.time(),
         "end_reason": "finished", "detail": "run exited with code 0", "cost": 0.12}]})
    board.add_event({"action": "finished", "launch_id": first.launch_id, "ts": time.time(), "message": "done"})
    board.put("controller.json", {"ts": time.time(), "poll_s": 30})
    (away,) = catch_up(app, boards={"fc": board})
    assert away.reachable and not away.took_over and [e["action"] for e in away.events] == ["finished"]
    assert app.store.attempt_of(first.launch_id).end_reason == "finished"
    (again,) = catch_up(app, boards={"fc": board})
    assert again.events == []  # shown once
