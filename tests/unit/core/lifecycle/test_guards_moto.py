"""The app-side guards on the AWS plugin against moto (real boto3 over HTTP): max runtime and idle GPU
each fire at their threshold, tear the instance down, and the teardown is verified."""

from __future__ import annotations

import pytest

import aws_moto
from workbench.core.lifecycle.guards import GuardEngine
from workbench.core.domain.jobspec import parse_spec
from workbench.core.lifecycle.launcher import execute, choose_offer
from workbench.core.domain.models import GpuSample, Profile
from workbench.core.lifecycle.reconcile import reconcile
from workbench_testing import ManualClock, fake_cloud_accounts

SETTINGS = {"ssh_cidr": "198.51.100.23/32", "poll_s": "0.01", "terminate_wait_s": "10", "connect_timeout": "2",
            "read_timeout": "20", "retry_backoff_cap_s": "0.02"}


Clock = ManualClock


@pytest.fixture
def aws_accounts(tmp_path, monkeypatch):
    stack = aws_moto.start()
    stack.reset()
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "home"))
    acc, creds = fake_cloud_accounts(monkeypatch)
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=stack.url, settings=SETTINGS))
    creds.set("aws", "moto", {"access_key_id": "AKIAWORKBENCHTEST01", "secret_access_key": "not-a-real-secret"})
    yield acc, stack
    acc.store.close()
    stack.reset()


def _running(stack) -> list[str]:
    import boto3

    ec2 = boto3.client("ec2", region_name="us-east-1", endpoint_url=stack.url, aws_access_key_id="AKIAARRANGE",
                       aws_secret_access_key="arrange")
    return [i["InstanceId"] for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
            if i["State"]["Name"] not in ("terminated", "shutting-down")]


def test_max_runtime_and_idle_tear_down_on_moto(aws_accounts):
    acc, stack = aws_accounts
    spec = parse_spec("name: moto-guard\nrun: python3 train.py\nresources:\n  gpu: V100:1\n"
                      "guards:\n  max_runtime: 1h\n  idle_minutes: 10\n  idle_util_below: 5\n")
    lp = choose_offer(acc, spec, profile="moto")
    [inst] = execute(acc, lp)
    assert _running(stack) == [inst.instance_id]
    start = acc.store.get_launch(lp.launch_id).created_at
    eng = GuardEngine(acc, clock=Clock(start + 3599), collect_samples=False, teardown_poll_s=0.05,
                      teardown_timeout_s=30)
    assert [e for e in eng.poll() if e.launch_id] == []
    eng.clock = Clock(start + 3600)
    events = [e for e in eng.poll() if e.launch_id]
    assert [(e.guard, e.action) for e in events] == [("max_runtime", "teardown"), ("max_runtime", "verified")]
    assert _running(stack) == []

    lp2 = choose_offer(acc, spec, profile="moto")
    [inst2] = execute(acc, lp2)
    t0 = acc.store.get_launch(lp2.launch_id).created_at
    acc.store.add_samples([GpuSample(inst2.instance_id, t0 + s, 0, 1.0, 100, 16000) for s in range(0, 700, 60)])
    eng.clock = Clock(t0 + 599)
    assert [e for e in eng.poll() if e.launch_id] == []
    eng.clock = Clock(t0 + 601)
    events = [e for e in eng.poll() if e.launch_id]
    assert [(e.guard, e.action) for e in events] == [("idle", "teardown"), ("idle", "verified")]
    assert _running(stack) == []


def test_budget_and_finished_job_tear_down_on_moto(aws_accounts):
    from workbench.core.money import budgets
    from workbench.core.domain.models import InstanceState

    acc, stack = aws_accounts
    spec = parse_spec("name: moto-done\nrun: python3 train.py\nresources:\n  gpu: V100:1\n"
                      "guards:\n  max_runtime: 24h\n")
    lp = choose_offer(acc, spec, profile="moto")
    [inst] = execute(acc, lp)
    # the remote runner records the job's exit code; the next listing from AWS must not erase it
    acc.store.upsert_instance(inst.with_state(InstanceState.RUNNING, exit_code=0))
    t0 = acc.store.get_launch(lp.launch_id).created_at
    eng = GuardEngine(acc, clock=Clock(t0 + 5), collect_samples=False, finish_grace_s=120, teardown_poll_s=0.05,
                      teardown_timeout_s=30)
    [pending] = [e for e in eng.poll() if e.launch_id]
    assert (pending.guard, pending.action) == ("finished", "pending")
    eng.clock = Clock(t0 + 124)
    assert [e for e in eng.poll() if e.launch_id] == []
    eng.clock = Clock(t0 + 125)
    assert [(e.guard, e.action) for e in eng.poll() if e.launch_id] == [("finished", "teardown"),
                                                                        ("finished", "verified")]
    assert _running(stack) == []

    lp2 = choose_offer(acc, spec, profile="moto")
    [inst2] = execute(acc, lp2)
    budgets.set_launch(acc.store, lp2.launch_id, 0.06)
    reconcile(acc)  # moto starts instances at once: the ledger now says when it began running
    running = next(e.ts for e in acc.store.ledger(instance_id=inst2.instance_id) if e.state == "running")
    eng.clock = Clock(running + 1)  # one second, but AWS bills 60 s per start: $3.06 × 60 / 3600 = $0.051
    events = [e for e in eng.poll() if e.launch_id == lp2.launch_id]
    assert [(e.guard, e.action) for e in events] == [("budget", "warn"), ("budget", "warn")]
    assert "80 %" in events[1].message and _running(stack) == [inst2.instance_id]
    eng.clock = Clock(running + 71)  # $3.06 × 71 / 3600 = $0.0604 > $0.06
    events = [e for e in eng.poll() if e.launch_id == lp2.launch_id]
    assert [(e.guard, e.action) for e in events] == [("budget", "warn"), ("budget", "teardown"),
                                                     ("budget", "verified")]
    assert "100 %" in events[0].message and _running(stack) == []
