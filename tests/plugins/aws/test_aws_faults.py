"""Launch and teardown under injected faults: throttling, 5xx, capacity per AZ, failures mid-launch."""

from __future__ import annotations

import time

import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import AuthError, CapacityError, QuotaError, SpecError
from workbench.core.domain.models import JobSpec, LaunchRequest, Resources
from workbench.core.providers.contract import launch_tags

from .conftest import INSTALL_ID


def _request(provider, launch_id: str, itype: str = "p3.2xlarge", region: str = "us-east-1", spot: bool = False,
             **resources) -> LaunchRequest:
    offer = next(o for o in provider.offers(region) if o.instance_type == itype)
    spec = JobSpec(name="fault-job", run="python3 train.py", resources=Resources(**resources))
    return LaunchRequest(launch_id, spec, offer, provider.profile.name, launch_tags(launch_id, INSTALL_ID), spot=spot)


def _tagged(ec2, launch_id: str) -> dict[str, int]:
    flt = [{"Name": "tag:workbench:launch", "Values": [launch_id]}]
    live = [i for r in ec2.describe_instances(Filters=flt)["Reservations"] for i in r["Instances"]
            if i["State"]["Name"] != "terminated"]
    return {"instances": len(live),
            "volumes": len(ec2.describe_volumes(Filters=flt)["Volumes"]),
            "groups": len(ec2.describe_security_groups(Filters=flt)["SecurityGroups"]),
            "keys": len(ec2.describe_key_pairs(Filters=flt)["KeyPairs"]),
            "addresses": len(ec2.describe_addresses(Filters=flt)["Addresses"])}


NOTHING = {"instances": 0, "volumes": 0, "groups": 0, "keys": 0, "addresses": 0}


def test_launch_and_teardown_complete_under_throttling_and_server_errors(moto, make_provider, ec2):
    provider = make_provider()
    req = _request(provider, "storm-1")
    moto.faults.add(FaultRule(service="ec2", error="RequestLimitExceeded", rate=0.30))
    moto.faults.add(FaultRule(service="ec2", error="InternalError", status=500, rate=0.10 / 0.70))
    t = time.monotonic()
    launched = provider.launch(req)
    assert len(launched) == 1
    listed = [i for i in provider.instances() if i.launch_id == "storm-1"]
    assert [i.instance_id for i in listed] == [launched[0].instance_id]
    provider.terminate(listed)
    took = time.monotonic() - t
    injected = sum(r.fired for r in moto.faults.rules)
    moto.faults.rules.clear()
    assert injected >= 5, f"only {injected} faults were injected"
    assert _tagged(ec2(), "storm-1") == NOTHING
    assert [r for r in provider.leftovers() if r.launch_id == "storm-1"] == []
    assert took < 40



def test_capacity_error_in_one_zone_falls_through_to_the_next(moto, make_provider, ec2):
    provider = make_provider()
    req = _request(provider, "cap-1", itype="g5.xlarge")
    rule = moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity",
                                     message="We currently do not have sufficient g5.xlarge capacity in us-east-1a.",
                                     when=lambda c: c.param("Placement.AvailabilityZone") == "us-east-1a"
                                     and c.param("InstanceType") == "g5.xlarge"))
    launched = provider.launch(req)
    assert rule.fired == 1
    zones = [c.param("Placement.AvailabilityZone") for c in moto.faults.find("RunInstances")]
    assert zones == ["us-east-1a", "us-east-1b"]
    assert launched[0].extra["az"] == "us-east-1b"
    tokens = [c.param("ClientToken") for c in moto.faults.find("RunInstances")]
    assert tokens == ["cap-1-us-east-1a", "cap-1-us-east-1b"]  # set, and distinct per attempt
    assert _tagged(ec2(), "cap-1")["instances"] == 1


def test_no_capacity_in_any_zone_is_a_capacity_error_and_leaves_nothing(moto, make_provider, ec2):
    provider = make_provider()
    req = _request(provider, "cap-2", itype="g5.xlarge")
    moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity"))
    with pytest.raises(CapacityError) as info:
        provider.launch(req)
    assert "g5.xlarge" in info.value.message and "us-east-1a" in info.value.message
    assert info.value.hint
    assert len(moto.faults.find("RunInstances")) >= 2
    assert _tagged(ec2(), "cap-2") == NOTHING


def test_a_failure_after_the_security_group_was_created_leaves_nothing(moto, make_provider, ec2):
    provider = make_provider()
    req = _request(provider, "half-1")
    moto.faults.add(FaultRule(operation="AuthorizeSecurityGroupIngress", error="UnauthorizedOperation",
                              message="You are not authorized to perform this operation. Encoded authorization "
                                      "failure message: AbCdEf"))
    with pytest.raises(AuthError) as info:
        provider.launch(req)
    assert "ec2:AuthorizeSecurityGroupIngress" in info.value.message
    assert "aws-iam-policy.json" in info.value.hint
    ops = moto.faults.operations("ec2")
    assert "CreateSecurityGroup" in ops and "ImportKeyPair" in ops and "RunInstances" not in ops
    assert ops.index("DeleteSecurityGroup") > ops.index("CreateSecurityGroup")
    assert _tagged(ec2(), "half-1") == NOTHING
    assert provider.leftovers() == []


def test_a_lost_answer_to_run_instances_never_leaves_a_second_machine(moto, make_provider, ec2):
    # AWS dedupes a retried RunInstances by its ClientToken; moto does not: the plugin's tag check must
    provider = make_provider()
    req = _request(provider, "lost-1")
    rule = moto.faults.add(FaultRule(operation="RunInstances", error="InternalError", status=500, after=True,
                                     times=1))
    launched = provider.launch(req)
    assert rule.fired == 1 and len(moto.faults.find("RunInstances")) == 2  # botocore retried once
    assert _tagged(ec2(), "lost-1")["instances"] == 1
    assert [i.instance_id for i in provider.instances() if i.launch_id == "lost-1"] == \
        [i.instance_id for i in launched]


def test_a_resumed_launch_reuses_what_the_crashed_one_made(moto, make_provider, ec2, tmp_path):
    first = make_provider()
    req = _request(first, "resume-1")
    # what a process that died after creating the key pair and the group (before run_instances) left
    client = ec2()
    tags = [{"Key": k, "Value": v} for k, v in {**req.tags, "Name": "fault-job"}.items()]
    vpc = client.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    client.create_security_group(GroupName="workbench-resume-1", Description="x", VpcId=vpc,
                                 TagSpecifications=[{"ResourceType": "security-group", "Tags": tags}])
    from workbench.core.providers.sshkeys import ensure_keypair

    public = ensure_keypair(tmp_path / "data").public_openssh
    client.import_key_pair(KeyName="workbench-resume-1", PublicKeyMaterial=public.encode(),
                           TagSpecifications=[{"ResourceType": "key-pair", "Tags": tags}])
    moto.faults.clear()
    before = _tagged(ec2(), "resume-1")
    assert before == {**NOTHING, "groups": 1, "keys": 1}
    second = make_provider()  # a new process: nothing in memory
    launched = second.launch(req)
    assert _tagged(ec2(), "resume-1") == {**NOTHING, "instances": 1, "groups": 1, "keys": 1, "volumes": 1}
    assert "CreateSecurityGroup" not in moto.faults.operations() and "ImportKeyPair" not in moto.faults.operations()
    third = make_provider()
    assert [i.instance_id for i in third.launch(req)] == [i.instance_id for i in launched]
    assert moto.faults.operations().count("RunInstances") == 1


def test_quota_and_parameter_errors_are_named(moto, make_provider, ec2):
    provider = make_provider()
    moto.faults.add(FaultRule(operation="RunInstances", error="VcpuLimitExceeded", times=1,
                              message="You have requested more vCPU capacity than your current vCPU limit of 0"))
    with pytest.raises(QuotaError) as info:
        provider.launch(_request(provider, "quota-1"))
    assert "Running On-Demand P instances" in info.value.message
    assert "L-417A185B" in info.value.hint
    assert _tagged(ec2(), "quota-1") == NOTHING
    moto.faults.add(FaultRule(operation="RunInstances", error="InvalidParameterValue", times=1,
                              message="Value (gp9) for parameter volumeType is invalid."))
    with pytest.raises(SpecError) as info:
        provider.launch(_request(provider, "param-1", itype="g4dn.xlarge"))
    assert "volumeType" in info.value.message
    assert _tagged(ec2(), "param-1") == NOTHING
