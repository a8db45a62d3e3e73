"""The recovery engine's decisions, on the file-backed fake cloud: what counts as an interruption, when a
launch is relaunched and with what, what stops it (restarts, runtime, budget, the user), and that two
processes polling one store relaunch once."""

from __future__ import annotations

import json
import time

import pytest

from workbench_testing import fake_cloud_accounts

from workbench.core import paths
from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import Instance, InstanceState
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine, classify, history, note_teardown
from workbench.core.lifecycle.teardown import teardown
from workbench.core.providers.accounts import Accounts
from workbench.core.store.database import LaunchRecord, Store

SPEC = """name: train
run: python3 train.py
resources: {gpu: V100:1, spot: true}
providers: [fakecloud]
regions: [fake-east, fake-west]
guards: {max_runtime: 2h}
"""


@pytest.fixture
def acc(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    accounts, _ = fake_cloud_accounts(monkeypatch, {"fc": {}})
    yield accounts
    accounts.store.close()


def launch(acc, recovery: str = "{max_restarts: 2, on: [preemption]}", extra: str = ""):
    spec = parse_spec(SPEC + f"recovery: {recovery}\n" + extra, source="t.yaml")
    (inst,) = execute(acc, plan(acc, spec, provider="fakecloud"))
    return inst


def take_back(acc, inst: Instance, notice: bool = True) -> None:
    """The cloud ends the machine; with ``notice`` the machine's agent recorded the interruption first."""
    prov = acc.provider(acc.profile("fc"))
    with prov._state() as st:
        st["instances"][inst.instance_id]["state"] = "terminated"
    if notice:
        (paths.job_dir(inst.launch_id) / "interrupted").write_text(json.dumps(
            {"reason": "preemption", "source": "AWS spot instance-action (terminate)", "saved": True}))
    reconcile(acc)


def ran_an_hour(acc, inst: Instance) -> None:
    """Move the instance's start an hour back in the spend ledger (as if it had been running since)."""
    with acc.store._write() as conn:
        conn.execute("UPDATE ledger SET ts = ts - 3600 WHERE instance_id = ?", (inst.instance_id,))


def engine(acc, **kw) -> RecoveryEngine:
    return RecoveryEngine(acc, teardown_timeout_s=5, teardown_poll_s=0.01, **kw)


def test_classify_tells_the_endings_apart(tmp_path):
    with Store.open(tmp_path / "s.db") as store:
        rec = LaunchRecord("l-1", "t", "aws", "p", "us-east-1", time.time())

        def inst(state=InstanceState.TERMINATED, code=None, **extra):
            return Instance("aws", "p", "i-1", "l-1", "us-east-1", "p3.2xlarge", state, exit_code=code, extra=extra)

        on = ("preemption",)
        assert classify(store, rec, [], on) is None
        assert classify(store, rec, [inst(InstanceState.RUNNING)], on) is None
        assert classify(store, rec, [inst(spot_interrupted=True, state_reason="Server.SpotInstanceTermination")],
                        on)[0] == "preemption"
        assert classify(store, rec, [inst(evicted=True)], on)[0] == "preemption"
        assert classify(store, rec, [inst(code=0)], on) == ("finished", "run exited with code 0")
        assert classify(store, rec, [inst(code=3)], on) == ("failure", "run exited with code 3")
        assert classify(store, rec, [inst(InstanceState.RUNNING, code=3)], on) is None  # not wanted: let it end
        assert classify(store, rec, [inst(InstanceState.RUNNING, code=3)], ("failure",))[0] == "failure"
        assert classify(store, rec, [inst(state_reason="Client.InstanceInitiatedShutdown")], on)[0] == "stopped"
        assert classify(store, rec, [inst(reason="killed")], on) == ("failure", "the machine was lost (killed)")
        note_teardown(store, ["l-1"])
        assert classify(store, rec, [inst()], on)[0] == "stopped"  # the app ended it on purpose


def test_an_interrupted_launch_is_relaunched_once_with_the_attempt_and_the_time_left(acc, tmp_path):
    first = launch(acc)
    take_back(acc, first)
    # the GUI and `workbench watch` poll the same store at once: one relaunch between them
    other = Accounts(Store.open(acc.store.path), entries=acc.entries, credentials=acc.credentials)
    try:
        events = engine(acc).poll() + engine(other).poll()
    finally:
        other.store.close()
    (ev,) = events
    assert ev.action == "relaunched" and ev.attempt == 2 and ev.root_id == first.launch_id
    assert "interruption notice: AWS spot instance-action" in ev.message and "fk.v100x1" in ev.message
    second = acc.store.get_launch(ev.launch_id)
    assert second.spec["env"] == {"WORKBENCH_ATTEMPT": "2", "WORKBENCH_RESUME": "1"}
    assert 115 <= second.spec["guards"]["max_runtime_minutes"] <= 120
    assert second.spec["resources"]["spot"] is True  # still spot: the cheapest allowed offer
    assert [(h["attempt"], h["end_reason"]) for h in history(acc.store, ev.launch_id)] == [(1, "preemption"),
                                                                                          (2, None)]
    assert "relaunching as attempt 2" in paths.job_log(first.launch_id).read_text()
    assert engine(acc).poll() == []  # attempt 2 runs


def test_restarts_runtime_and_the_reasons_in_on_bound_recovery(acc):
    a = launch(acc, "{max_restarts: 0, on: [preemption]}")
    take_back(acc, a)
    (ev,) = engine(acc).poll()
    assert ev.action == "gave_up" and "all 0 restart(s)" in ev.message
    assert engine(acc).poll() == []  # said once

    b = launch(acc, "{max_restarts: 3, on: [preemption]}")
    take_back(acc, b, notice=False)  # gone without a word: a machine lost, i.e. a failure
    (ev,) = engine(acc).poll()
    assert ev.action == "not_recovered" and "does not list failure" in ev.message

    c = launch(acc)
    acc.store.update_launch(c.launch_id, created_at=time.time() - 2 * 3600 + 60)  # 1 min of 2 h left
    take_back(acc, c)
    (ev,) = engine(acc).poll()
    assert ev.action == "gave_up" and "maximum runtime" in ev.message


def test_what_earlier_attempts_spent_counts_against_the_budget(acc):
    spec = parse_spec(SPEC.replace("guards: {max_runtime: 2h}", "guards: {max_runtime: 2h, budget_usd: 4}")
                      + "recovery: {max_restarts: 2, on: [preemption]}\n", source="t.yaml")
    (first,) = execute(acc, plan(acc, spec, provider="fakecloud"))
    ran_an_hour(acc, first)  # at its spot price, 0.92/h, before the interruption
    take_back(acc, first)
    (ev,) = engine(acc).poll()
    second = acc.store.get_launch(ev.launch_id)
    assert 2.9 < second.spec["guards"]["budget_usd"] < 3.1  # 4 − what attempt 1 spent

    spec2 = parse_spec(SPEC.replace("guards: {max_runtime: 2h}", "guards: {max_runtime: 2h, budget_usd: 0.5}")
                       + "recovery: {max_restarts: 2, on: [preemption]}\n", source="t.yaml")
    (poor,) = execute(acc, plan(acc, spec2, provider="fakecloud"))
    ran_an_hour(acc, poor)
    take_back(acc, poor)
    (ev,) = [e for e in engine(acc).poll() if e.root_id == poor.launch_id]
    assert ev.action == "gave_up" and "budget" in ev.message


def test_a_launch_the_user_tore_down_is_not_relaunched(acc):
    inst = launch(acc)
    report = teardown(acc, [inst.launch_id], timeout=5, poll=0.01)
    assert report.clean
    assert engine(acc).poll() == []
    assert history(acc.store, inst.launch_id)[0]["end_reason"] is None or \
        history(acc.store, inst.launch_id)[0]["end_reason"] == "stopped"
