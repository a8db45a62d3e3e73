"""Recovery against the clouds' own protocols: AWS (moto) takes a spot machine back with the spot reason,
Azure (the ARM test server) evicts a spot VM; the recovery engine sees it, sweeps what is left of the old
attempt, relaunches on the cheapest allowed offer (another region when the first has no capacity), and
the old machine and its leftovers are gone: nothing leaks."""

from __future__ import annotations

from moto.core import DEFAULT_ACCOUNT_ID
from moto.ec2.models import ec2_backends
from moto.ec2.models.instances import StateReason

from aws_moto import FaultRule
from agent_run import FAST

from workbench.core.domain.jobspec import parse_spec
from workbench.core.domain.models import InstanceState, Profile
from workbench.core.lifecycle.launcher import choose_offer as plan, execute
from workbench.core.lifecycle.reconcile import reconcile
from workbench.core.lifecycle.recovery import RecoveryEngine, history
from workbench.core.lifecycle.teardown import inventory, teardown


def reclaim_spot(instance_id: str, region: str) -> None:
    """What AWS does to an interrupted spot instance: terminated, reason Server.SpotInstanceTermination."""
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][region]
    inst = backend.get_instance(instance_id)
    backend.terminate_instances([instance_id])
    inst.state_reason = StateReason("Server.SpotInstanceTermination: Spot instance termination",
                                    "Server.SpotInstanceTermination")


def billing(acc) -> tuple[set[str], list]:
    """(launch ids of billable machines, leftovers) across every profile, fresh from the clouds."""
    inv = inventory(acc)
    assert not inv.errors
    insts = [x for p in inv.profiles for x in p.instances]
    return {i.launch_id for i in insts if i.state.billable}, [x for p in inv.profiles for x in p.leftovers]


def launch_one(acc, provider: str, spec_text: str):
    """The spec launched on ``provider``: its plan and its one machine."""
    lp = plan(acc, parse_spec(spec_text, source="t.yaml"), provider=provider)
    (first,) = execute(acc, lp)
    return lp, first


def engine(acc) -> RecoveryEngine:
    return RecoveryEngine(acc, teardown_timeout_s=30, teardown_poll_s=0.05)


def test_aws_spot_interruption_relaunches_in_another_allowed_region(cloud):
    acc = cloud.accounts
    acc.save_profile(Profile("moto", "aws", "us-east-1", endpoint_url=cloud.moto.url,
                             settings={**FAST, "regions": "us-east-1,us-west-2"}))
    lp, first = launch_one(acc, "aws", "name: train\nrun: python3 train.py\nresources: {gpu: 'V100:1', spot: true}\n"
                           "providers: [aws]\nregions: [us-east-1, us-west-2]\n"
                           "recovery: {max_restarts: 2, on: [preemption]}\nguards: {max_runtime: 6h}\n")
    assert first.region == "us-east-1" and first.spot  # the spec's first region
    try:
        # 1: AWS takes the machine back; the cheapest allowed offer now is a spot p3.2xlarge in us-west-2
        reclaim_spot(first.instance_id, "us-east-1")
        reconcile(acc)
        (ev,) = engine(acc).poll()
        assert ev.action == "relaunched" and ev.attempt == 2 and "Server.SpotInstanceTermination" in ev.message
        (second,) = [i for i in acc.store.list_instances() if i.launch_id != lp.launch_id]
        assert second.launch_id == ev.launch_id
        assert second.region == "us-west-2" and second.spot and second.state.active
        assert engine(acc).poll() == []  # attempt 2 runs: nothing to do
        spec2 = acc.store.get_launch(second.launch_id).spec
        assert spec2["env"]["WORKBENCH_ATTEMPT"] == "2" and spec2["env"]["WORKBENCH_RESUME"] == "1"
        assert 355 <= spec2["guards"]["max_runtime_minutes"] <= 360  # what is left of the first attempt's 6 h
        # the old attempt is gone with everything it had (security group, key pair)
        live, left = billing(acc)
        assert live == {second.launch_id} and [r for r in left if r.launch_id == lp.launch_id] == []

        # 2: taken back again, and us-west-2 has no spot capacity left: the next cheapest offer (us-east-1)
        cloud.moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity",
                                        message="We currently do not have sufficient capacity in us-west-2.",
                                        when=lambda c: c.region == "us-west-2"))
        reclaim_spot(second.instance_id, "us-west-2")
        reconcile(acc)
        (ev3,) = engine(acc).poll()
        assert ev3.action == "relaunched" and ev3.attempt == 3
        (third,) = acc.store.list_instances(launch_id=ev3.launch_id)
        assert third.region == "us-east-1" and third.state.active
        hist = history(acc.store, lp.launch_id)
        assert [(h["attempt"], h["status"]) for h in hist] == [(1, "ended"), (2, "ended"), (3, "launch_failed"),
                                                               (3, "running")]
        assert [h["end_reason"] for h in hist[:2]] == ["preemption", "preemption"]
        assert "capacity" in hist[2]["detail"] and hist[1]["region"] == "us-west-2"
        assert hist[3]["instance_type"] == "p3.2xlarge" and hist[3]["launch_id"] == third.launch_id
        live, left = billing(acc)
        assert live == {third.launch_id}
        assert not [r for r in left if r.launch_id != third.launch_id]  # the failed try left nothing
    finally:
        cloud.moto.faults.clear()
        report = teardown(acc, None, timeout=30, poll=0.05)
    assert report.clean and inventory(acc).nothing_billing


def test_azure_spot_eviction_relaunches(cloud, azure):
    acc = cloud.accounts
    lp, first = launch_one(acc, "azure", "name: train\nrun: python3 train.py\nresources: {gpu: 'T4:1', spot: true}\n"
                           "providers: [azure]\nregions: [eastus]\n"
                           "recovery: {max_restarts: 1, on: [preemption]}\n")
    group = first.extra["resource_group"]
    try:
        azure.arm.set_power(azure.account.subscription, group, "evicted")  # evictionPolicy Delete: the VM goes
        reconcile(acc)
        (gone,) = acc.store.list_instances(launch_id=lp.launch_id)
        assert gone.state == InstanceState.TERMINATED and gone.extra["evicted"]
        events = engine(acc).poll()
        (ev,) = [e for e in events if e.action == "relaunched"]
        assert ev.attempt == 2 and "evicted" in ev.message
        (second,) = acc.store.list_instances(launch_id=ev.launch_id)
        assert second.state == InstanceState.RUNNING and second.spot and second.region == "eastus"
        groups = {g["name"] for g in azure.arm.groups(azure.account.subscription)}
        assert group not in groups and second.extra["resource_group"] in groups  # the old group was deleted
        assert history(acc.store, ev.launch_id)[0]["end_reason"] == "preemption"
        # max_restarts 1: a second eviction is recorded, not relaunched
        azure.arm.set_power(azure.account.subscription, second.extra["resource_group"], "evicted")
        reconcile(acc)
        (gave_up,) = engine(acc).poll()
        assert gave_up.action == "gave_up" and "restart" in gave_up.message
    finally:
        report = teardown(acc, None, timeout=60, poll=0.05)
    assert report.clean
    assert not [g for g in azure.arm.groups(azure.account.subscription) if g["name"].startswith("wb-")]


def test_a_relaunch_keeps_to_the_spec_s_alternatives(cloud):
    """A spec that names its GPU only in ``alternatives`` (as a SkyPilot any_of import does) is relaunched on
    an offer one of them allows: the V100 again, not the cheapest GPU AWS has (a T4)."""
    acc = cloud.accounts
    lp, first = launch_one(acc, "aws", "name: alt\nrun: python3 train.py\nresources: {spot: true}\n"
                           "alternatives: [{gpu: 'V100:1'}]\n"
                           "providers: [aws]\nregions: [us-east-1]\nrecovery: {max_restarts: 1, on: [preemption]}\n")
    assert first.instance_type == "p3.2xlarge"
    t4 = plan(acc, parse_spec("name: any\nrun: x\nresources: {gpu: 'T4:1', spot: true}\n"), provider="aws").choice
    assert t4.price < lp.choice.price  # a cheaper GPU is there for a relaunch that forgot the alternatives
    try:
        reclaim_spot(first.instance_id, "us-east-1")
        reconcile(acc)
        (ev,) = engine(acc).poll()
        assert ev.action == "relaunched" and ev.attempt == 2
        (second,) = acc.store.list_instances(launch_id=ev.launch_id)
        assert second.instance_type == "p3.2xlarge" and second.gpu_model == "V100" and second.spot
    finally:
        report = teardown(acc, None, timeout=30, poll=0.05)
    assert report.clean and inventory(acc).nothing_billing


def test_a_spot_machine_taken_back_relaunches_on_another_cloud(cloud, azure):
    """providers: [aws, azure]: AWS takes the V100 back and has no capacity left; the relaunch runs on
    Azure's T4, the alternative the spec allows there, and nothing of the AWS attempt is left."""
    acc = cloud.accounts
    lp, first = launch_one(acc, "aws", "name: xcloud\nrun: python3 train.py\nresources: {spot: true}\n"
                           "alternatives: [{provider: aws, gpu: 'V100:1'}, {provider: azure, gpu: 'T4:1'}]\n"
                           "providers: [aws, azure]\nregions: [us-east-1, eastus]\n"
                           "recovery: {max_restarts: 1, on: [preemption]}\n")
    assert first.provider == "aws"
    try:
        cloud.moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity",
                                        message="We currently do not have sufficient capacity."))
        reclaim_spot(first.instance_id, "us-east-1")
        reconcile(acc)
        events = engine(acc).poll()
        (ev,) = [e for e in events if e.action == "relaunched"]
        assert ev.attempt == 2 and "azure/" in ev.message
        (second,) = acc.store.list_instances(launch_id=ev.launch_id)
        assert second.provider == "azure" and second.gpu_model == "T4" and second.spot and second.region == "eastus"
        hist = history(acc.store, ev.launch_id)
        assert hist[0]["end_reason"] == "preemption" and hist[-1]["status"] == "running"
        live, left = billing(acc)
        assert live == {second.launch_id} and [r for r in left if r.launch_id == lp.launch_id] == []
    finally:
        cloud.moto.faults.clear()
        report = teardown(acc, None, timeout=60, poll=0.05)
    assert report.clean
    assert not [g for g in azure.arm.groups(azure.account.subscription) if g["name"].startswith("wb-")]
