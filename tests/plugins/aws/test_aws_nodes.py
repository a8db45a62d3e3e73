"""Multi-node launches against moto: N machines at once, placement group, node-to-node rule, EFA, ranks, rollback.

moto 5.2 implements the security-group self-reference and DescribeInstanceTypes' EfaSupported
but not placement groups (tests/support/aws_moto.py keeps them) and it ignores
``Placement.GroupName`` and ``InterfaceType``: those are checked on the RunInstances request
the plugin sent.
"""

from __future__ import annotations

import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import CapacityError, ConfigError, WorkbenchError
from workbench.core.providers.contract import launch_tags

from .conftest import INSTALL_ID, launch_request


def _request(provider, launch_id, itype="p4d.24xlarge", count=3):
    return launch_request(provider, launch_id, itype, count, "ddp", "torchrun train.py")


def _groups(ec2, launch_id):
    return ec2.describe_security_groups(
        Filters=[{"Name": "tag:workbench:launch", "Values": [launch_id]}])["SecurityGroups"]


def _placement_groups(ec2, launch_id=None):
    filters = [{"Name": "tag:workbench:launch", "Values": [launch_id]}] if launch_id else []
    return ec2.describe_placement_groups(Filters=filters)["PlacementGroups"]


def _live(ec2, launch_id):
    res = ec2.describe_instances(Filters=[{"Name": "tag:workbench:launch", "Values": [launch_id]},
                                          {"Name": "instance-state-name", "Values": ["pending", "running"]}])
    return [i for r in res["Reservations"] for i in r["Instances"]]


def test_three_efa_nodes_in_one_placement_group_with_ranks(moto, make_provider, ec2):
    provider = make_provider()
    nodes = provider.launch(_request(provider, "ddp-aaa111"))
    assert [i.extra["node_rank"] for i in nodes] == [0, 1, 2] and len({i.instance_id for i in nodes}) == 3
    assert {i.extra["num_nodes"] for i in nodes} == {3}

    runs = moto.faults.find("RunInstances")
    assert len(runs) == 1  # one request: EC2 starts all three or none
    run = runs[0]
    assert (run.param("MinCount"), run.param("MaxCount")) == ("3", "3")
    assert run.param("Placement.GroupName") == "workbench-ddp-aaa111"
    assert run.param("NetworkInterface.1.InterfaceType") == "efa"
    assert run.param("NetworkInterface.1.DeviceIndex") == "0"
    group_id = _groups(ec2(), "ddp-aaa111")[0]["GroupId"]
    assert run.param("NetworkInterface.1.SecurityGroupId.1") == group_id
    assert run.param("SecurityGroupId.1") is None  # the interface carries the group

    (pg,) = _placement_groups(ec2(), "ddp-aaa111")
    assert pg["Strategy"] == "cluster" and pg["GroupName"] == "workbench-ddp-aaa111"
    assert {t["Key"]: t["Value"] for t in pg["Tags"]}["workbench:owner"] == INSTALL_ID

    rules = _groups(ec2(), "ddp-aaa111")[0]["IpPermissions"]
    ssh = [r for r in rules if r.get("FromPort") == 22]
    assert [[x["CidrIp"] for x in r["IpRanges"]] for r in ssh] == [["198.51.100.23/32"]]  # SSH: the user only
    (peers,) = [r for r in rules if r["IpProtocol"] == "-1"]
    assert [p["GroupId"] for p in peers["UserIdGroupPairs"]] == [group_id] and not peers["IpRanges"]

    tagged = {i["InstanceId"]: {t["Key"]: t["Value"] for t in i["Tags"]}["workbench:node-rank"]
              for i in _live(ec2(), "ddp-aaa111")}
    assert tagged == {i.instance_id: str(i.extra["node_rank"]) for i in nodes}
    listed = sorted((i for i in provider.instances() if i.launch_id == "ddp-aaa111"),
                    key=lambda i: i.extra["node_rank"])
    assert [i.instance_id for i in listed] == [i.instance_id for i in nodes]
    assert {i.extra.get("interconnect") for i in listed} == {"efa"}  # the job gets the EFA settings for NCCL
    assert provider.leftovers() == []  # the group, key and placement group belong to live nodes

    provider.terminate(listed)
    assert _live(ec2(), "ddp-aaa111") == [] and _placement_groups(ec2(), "ddp-aaa111") == []
    assert _groups(ec2(), "ddp-aaa111") == [] and provider.leftovers() == []
    assert "DeletePlacementGroup" in moto.faults.operations("ec2")


def test_a_type_without_efa_gets_a_plain_interface(moto, make_provider):
    provider = make_provider()
    nodes = provider.launch(_request(provider, "ddp-bbb222", itype="g5.xlarge", count=2))
    assert len(nodes) == 2
    run = moto.faults.find("RunInstances")[0]
    assert run.param("NetworkInterface.1.InterfaceType") is None
    assert run.param("Placement.GroupName") == "workbench-ddp-bbb222"
    provider.terminate(nodes)


def test_a_single_machine_launch_is_unchanged(moto, make_provider):
    provider = make_provider()
    (one,) = provider.launch(_request(provider, "one-ccc333", count=1))
    run = moto.faults.find("RunInstances")[0]
    assert run.param("Placement.GroupName") is None and run.param("NetworkInterface.1.DeviceIndex") is None
    assert run.param("SecurityGroupId.1") and "CreatePlacementGroup" not in moto.faults.operations("ec2")
    assert "node_rank" not in one.extra
    provider.terminate([one])


def test_a_failure_after_the_machines_started_rolls_everything_back(moto, make_provider, ec2):
    provider = make_provider()
    moto.faults.add(FaultRule(operation="CreateTags", error="UnauthorizedOperation", status=403,
                              when=lambda c: c.param("Tag.1.Key") == "workbench:node-rank", times=1))
    with pytest.raises(WorkbenchError):
        provider.launch(_request(provider, "ddp-ddd444"))
    assert len(moto.faults.find("RunInstances")) == 1
    assert _live(ec2(), "ddp-ddd444") == []
    assert _placement_groups(ec2(), "ddp-ddd444") == [] and _groups(ec2(), "ddp-ddd444") == []
    keys = ec2().describe_key_pairs(Filters=[{"Name": "tag:workbench:launch", "Values": ["ddp-ddd444"]}])
    assert keys["KeyPairs"] == [] and provider.leftovers() == []


def test_no_capacity_anywhere_leaves_nothing(moto, make_provider, ec2):
    provider = make_provider()
    moto.faults.add(FaultRule(operation="RunInstances", error="InsufficientInstanceCapacity"))
    with pytest.raises(CapacityError):
        provider.launch(_request(provider, "ddp-eee555", count=4))
    runs = moto.faults.find("RunInstances")
    assert len(runs) >= 2 and {r.param("Placement.GroupName") for r in runs} == {"workbench-ddp-eee555"}
    assert {r.param("MinCount") for r in runs} == {"4"}
    assert _placement_groups(ec2()) == [] and _groups(ec2(), "ddp-eee555") == [] and provider.leftovers() == []


def test_an_orphan_placement_group_is_a_leftover_and_is_deleted(moto, make_provider, ec2):
    provider = make_provider()
    tags = [{"Key": k, "Value": v} for k, v in launch_tags("gone-fff666", INSTALL_ID).items()]
    ec2().create_placement_group(GroupName="workbench-gone-fff666", Strategy="cluster",
                                 TagSpecifications=[{"ResourceType": "placement-group", "Tags": tags}])
    (left,) = provider.leftovers()
    assert (left.kind, left.resource_id, left.launch_id) == ("placement-group", "workbench-gone-fff666", "gone-fff666")
    provider.delete([left])
    provider.delete([left])  # already gone is a success
    assert provider.leftovers() == [] and _placement_groups(ec2()) == []


def test_one_forwarded_address_cannot_reach_several_nodes(moto, make_provider):
    provider = make_provider(ssh_address="127.0.0.1:2222")
    with pytest.raises(ConfigError, match="ssh_address=private"):
        provider.launch(_request(provider, "ddp-ggg777", count=2))
    assert moto.faults.find("RunInstances") == []


def test_private_addresses_in_a_chosen_subnet(moto, make_provider, ec2):
    vpc = ec2().create_vpc(CidrBlock="10.77.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2().create_subnet(VpcId=vpc, CidrBlock="10.77.3.0/24")["Subnet"]
    provider = make_provider(subnet=subnet["SubnetId"], ssh_address="me@private:2222")
    nodes = provider.launch(_request(provider, "ddp-hhh888", count=2))
    run = moto.faults.find("RunInstances")[0]
    assert run.param("NetworkInterface.1.SubnetId") == subnet["SubnetId"]
    assert run.param("NetworkInterface.1.AssociatePublicIpAddress") == "false"  # reached privately: no public IP
    assert run.param("Placement.AvailabilityZone") == subnet["AvailabilityZone"]
    assert all(i.host and i.host.startswith("10.77.3.") for i in nodes)
    assert {(i.extra["ssh_port"], i.extra["node_ssh_port"], i.extra["ssh_user"]) for i in nodes} == {(2222, 2222, "me")}
    assert [i.host for i in nodes] == [i.extra["private_ip"] for i in nodes]
    provider.terminate(nodes)
    assert _live(ec2(), "ddp-hhh888") == [] and provider.leftovers() == []
