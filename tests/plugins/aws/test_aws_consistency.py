"""EC2's eventual consistency: a new instance or security group id is not known to every call at once.

"Eventual consistency in the Amazon EC2 API" names InvalidInstanceID.NotFound right after RunInstances
and InvalidGroup.NotFound right after CreateSecurityGroup, and says a NotFound answer to
TerminateInstances then does not mean the instance is gone.  moto answers from one consistent store;
our wrapper (``moto.faults.propagation_s``) keeps new ids unknown to the other calls for a while.
"""

from __future__ import annotations

import pytest

from aws_moto import FaultRule
from workbench.core.domain.errors import WorkbenchError

from .conftest import launch_request


def _request(provider, launch_id, itype="g5.xlarge", count=1):
    return launch_request(provider, launch_id, itype, count, "ec", "python train.py")


def _live(ec2, launch_id):
    res = ec2.describe_instances(Filters=[{"Name": "tag:workbench:launch", "Values": [launch_id]},
                                          {"Name": "instance-state-name", "Values": ["pending", "running"]}])
    return [i for r in res["Reservations"] for i in r["Instances"]]


#: how long a new id stays unknown to other calls: long enough that the rollback meets it unpropagated even on a
#: loaded 2-core machine (0.4 s was outlasted once under `make test`'s load: the test then proved nothing and failed)
PROPAGATION_S = 2.0

def test_a_new_security_group_is_used_once_it_propagated(moto, make_provider, ec2):
    moto.faults.propagation_s = 0.4
    provider = make_provider()
    (one,) = provider.launch(_request(provider, "ec-aaa111"))
    assert len(moto.faults.find("AuthorizeSecurityGroupIngress")) >= 2  # the first met InvalidGroup.NotFound
    assert [i["InstanceId"] for i in _live(ec2(), "ec-aaa111")] == [one.instance_id]
    rules = ec2().describe_security_groups(
        Filters=[{"Name": "tag:workbench:launch", "Values": ["ec-aaa111"]}])["SecurityGroups"][0]["IpPermissions"]
    assert [r["FromPort"] for r in rules] == [22]
    provider.terminate([one])
    assert _live(ec2(), "ec-aaa111") == [] and provider.leftovers() == []


def test_new_nodes_are_tagged_with_their_ranks_once_they_propagated(moto, make_provider, ec2):
    moto.faults.propagation_s = 0.4
    provider = make_provider()
    nodes = provider.launch(_request(provider, "ec-bbb222", count=2))
    assert [i.extra["node_rank"] for i in nodes] == [0, 1]
    tagged = {i["InstanceId"]: {t["Key"]: t["Value"] for t in i["Tags"]}["workbench:node-rank"]
              for i in _live(ec2(), "ec-bbb222")}
    assert tagged == {i.instance_id: str(i.extra["node_rank"]) for i in nodes}
    assert len(moto.faults.find("CreateTags")) > 2  # some met InvalidInstanceID.NotFound and were asked again
    provider.terminate(nodes)


def test_a_rollback_right_after_run_instances_terminates_machines_not_yet_propagated(moto, make_provider, ec2):
    """TerminateInstances answering InvalidInstanceID.NotFound for an id RunInstances just gave is not "gone"."""
    moto.faults.propagation_s = PROPAGATION_S
    moto.faults.add(FaultRule(operation="CreateTags", error="UnauthorizedOperation", status=403,  # every node:
                              when=lambda c: c.param("Tag.1.Key") == "workbench:node-rank"))  # the rollback comes at once
    provider = make_provider()
    with pytest.raises(WorkbenchError):
        provider.launch(_request(provider, "ec-ccc333", count=2))
    runs, terminations = moto.faults.find("RunInstances"), moto.faults.find("TerminateInstances")
    assert len(runs) == 1 and terminations[0].at - runs[0].at < PROPAGATION_S  # it met the ids before they propagated
    assert _live(ec2(), "ec-ccc333") == []  # no GPU machine left running
    assert provider.leftovers() == []


def test_down_right_after_the_launch_ends_the_machine_not_yet_propagated(moto, make_provider, ec2):
    moto.faults.propagation_s = PROPAGATION_S
    provider = make_provider()
    (one,) = provider.launch(_request(provider, "ec-ddd444"))  # returns right after RunInstances
    provider.terminate([one])  # so TerminateInstances meets the id before it propagated
    terminations = moto.faults.find("TerminateInstances")
    assert len(terminations) >= 2 and terminations[0].at - moto.faults.find("RunInstances")[-1].at < PROPAGATION_S
    assert _live(ec2(), "ec-ddd444") == [] and provider.leftovers() == []


def test_a_rollback_right_after_create_security_group_deletes_the_group_not_yet_propagated(moto, make_provider, ec2):
    """DeleteSecurityGroup answering InvalidGroup.NotFound for a group made a moment ago is not "deleted"."""
    moto.faults.propagation_s = 0.4
    moto.faults.add(FaultRule(operation="AuthorizeSecurityGroupIngress", error="UnauthorizedOperation", status=403))
    provider = make_provider()
    with pytest.raises(WorkbenchError):
        provider.launch(_request(provider, "ec-eee555"))
    groups = ec2().describe_security_groups(Filters=[{"Name": "tag:workbench:launch", "Values": ["ec-eee555"]}])
    assert groups["SecurityGroups"] == [] and provider.leftovers() == []


def test_down_waits_while_the_machine_shuts_down_before_its_group_goes(moto, make_provider, ec2):
    """Terminated instances are shutting-down for a while and keep their group in use (DependencyViolation)."""
    moto.faults.shutting_down_s = 0.5
    provider = make_provider()
    (one,) = provider.launch(_request(provider, "ec-fff666"))
    group = ec2().describe_security_groups(
        Filters=[{"Name": "tag:workbench:launch", "Values": ["ec-fff666"]}])["SecurityGroups"][0]["GroupId"]
    with pytest.raises(Exception) as in_use:  # the wrapper itself: a running instance holds its group
        ec2().delete_security_group(GroupId=group)
    assert in_use.value.response["Error"]["Code"] == "DependencyViolation"
    provider.terminate([one])
    terminated = moto.faults.find("TerminateInstances")[-1].at
    deletes = moto.faults.find("DeleteSecurityGroup")
    assert deletes and deletes[-1].at - terminated >= 0.5  # the group went once the machine had shut down
    assert ec2().describe_security_groups(
        Filters=[{"Name": "tag:workbench:launch", "Values": ["ec-fff666"]}])["SecurityGroups"] == []
    assert provider.leftovers() == []
