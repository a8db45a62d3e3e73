"""Multi-node launches on ECS against the test server: N machines in one zone, ranks, private addresses,
the node-to-node rule, all or nothing (no stock for N moves all N on), rollback, teardown.

The server keeps a stock per (zone, type) (``knobs.stock``): RunInstances with MinAmount above what is
left answers OperationDenied.NoStock, as ECS does; it hands out private addresses from the vSwitch's
CIDR and records TagResources and self-referencing rules (``SourceGroupId``) like the real API.
"""

from __future__ import annotations

import ipaddress

import pytest

from alibaba_ecs import Account, AlibabaServer
from workbench.core.domain.errors import CapacityError, ConfigError, WorkbenchError
from workbench.core.domain.models import JobSpec, LaunchRequest, Resources
from workbench.core.providers.contract import launch_tags

from .conftest import offer_of

ITYPE = "ecs.gn6i-c4g1.xlarge"
RANK = "workbench:node-rank"


def _request(provider, install_id, launch_id, count=2):
    offer = offer_of(provider, ITYPE)
    spec = JobSpec(name="ddp", run="torchrun train.py", num_nodes=count, resources=Resources(disk_gb=100))
    return LaunchRequest(launch_id, spec, offer, provider.profile.name, launch_tags(launch_id, install_id), count=count)


def _nothing_left(ali: AlibabaServer, account: Account) -> None:
    left = {k: v for k, v in ali.resources(account).items() if v}
    assert left == {}, f"left behind: {left}"


def _param(seen, name):
    return dict(seen.params).get(name)


def test_two_nodes_in_one_zone_with_ranks_private_addresses_and_a_self_rule(ali, account, make_provider, install_id):
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    nodes = p.launch(_request(p, install_id, "ddp-ali001"))
    assert [i.extra["node_rank"] for i in nodes] == [0, 1] and len({i.instance_id for i in nodes}) == 2
    assert {i.extra["num_nodes"] for i in nodes} == {2}

    (run,) = ali.calls(account, "ecs:RunInstances")  # one request: ECS starts both or none
    assert (_param(run, "Amount"), _param(run, "MinAmount")) == ("2", "2")
    res = ali.resources(account)
    assert len(res["instances"]) == 2 and len(res["vswitches"]) == 1 and len(res["groups"]) == 1
    vsw = res["vswitches"][0]
    assert {i["ZoneId"] for i in res["instances"]} == {vsw["ZoneId"]} == {"cn-hangzhou-h"}
    # ranks on the cloud itself, head = first of RunInstances' InstanceIdSet
    by_id = {i["InstanceId"]: i for i in res["instances"]}
    assert {i["InstanceId"]: i["_tags"][RANK] for i in res["instances"]} == \
        {n.instance_id: str(n.extra["node_rank"]) for n in nodes}
    # private addresses: distinct, in the launch's vSwitch, the ones the cloud holds
    net = ipaddress.ip_network(vsw["CidrBlock"])
    privates = [n.extra["private_ip"] for n in nodes]
    assert len(set(privates)) == 2 and all(ipaddress.ip_address(a) in net for a in privates)
    assert privates == [by_id[n.instance_id]["VpcAttributes"]["PrivateIpAddress"]["IpAddress"][0] for n in nodes]
    # the nodes reach each other on every port; SSH from outside stays the user's address only
    gid = res["groups"][0]["SecurityGroupId"]
    rules = {(r["IpProtocol"], r["PortRange"], r["SourceCidrIp"], r["SourceGroupId"]) for r in res["groups"][0]["_rules"]}
    assert rules == {("TCP", "22/22", "203.0.113.7/32", ""), ("ALL", "-1/-1", "", gid)}

    listed = sorted((i for i in p.instances() if i.launch_id == "ddp-ali001"), key=lambda i: i.instance_id)
    assert {(i.instance_id, i.extra["node_rank"], i.extra["private_ip"]) for i in listed} == \
        {(n.instance_id, n.extra["node_rank"], n.extra["private_ip"]) for n in nodes}
    p.terminate(listed)
    _nothing_left(ali, account)
    assert p.instances() == [] and p.leftovers() == []


def test_no_stock_for_two_in_the_first_zone_moves_both_to_the_next(ali, account, make_provider, install_id):
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    ali.knobs(account).stock[("cn-hangzhou-h", ITYPE)] = 1  # one machine left there: not enough for two
    nodes = p.launch(_request(p, install_id, "ddp-ali002"))
    assert {n.extra["zone"] for n in nodes} == {"cn-hangzhou-i"} and len(nodes) == 2
    assert [c.code for c in ali.calls(account, "ecs:RunInstances")] == ["OperationDenied.NoStock", None]
    assert {i["ZoneId"] for i in ali.resources(account)["instances"]} == {"cn-hangzhou-i"}
    assert ali.knobs(account).stock[("cn-hangzhou-h", ITYPE)] == 1  # nothing was started in the first zone
    p.terminate(nodes)
    _nothing_left(ali, account)


def test_no_zone_with_stock_for_all_nodes_leaves_nothing(ali, account, make_provider, install_id):
    p = make_provider(zones="cn-hangzhou-h,cn-hangzhou-i")
    ali.knobs(account).stock.update({("cn-hangzhou-h", ITYPE): 1, ("cn-hangzhou-i", ITYPE): 2})
    with pytest.raises(CapacityError, match="tried cn-hangzhou-h, cn-hangzhou-i"):
        p.launch(_request(p, install_id, "ddp-ali003", count=3))
    _nothing_left(ali, account)
    assert p.leftovers() == []


def test_a_failure_while_ranking_the_nodes_rolls_everything_back(ali, account, make_provider, install_id):
    p = make_provider()
    ali.add_fault("ecs:TagResources", status=404, code="InvalidResourceId.NotFound",
                  account=account.account_id)
    with pytest.raises(WorkbenchError):
        p.launch(_request(p, install_id, "ddp-ali004"))
    assert len(ali.calls(account, "ecs:RunInstances")) == 1  # the nodes were made, then released
    _nothing_left(ali, account)


def test_a_resumed_launch_ranks_nodes_that_lost_their_rank(ali, account, make_provider, install_id):
    p = make_provider()
    req = _request(p, install_id, "ddp-ali005")
    first = p.launch(req)
    # as if the app died between RunInstances and TagResources for the second node
    lost = first[1].instance_id
    with ali.state.lock:
        inst = ali.state.spaces[account.account_id].instances[lost]
        inst["_tags"].pop(RANK)
        inst["Tags"] = {"Tag": [{"TagKey": k, "TagValue": v} for k, v in inst["_tags"].items()]}
    again = p.launch(req)
    assert [(i.instance_id, i.extra["node_rank"]) for i in again] == [(i.instance_id, i.extra["node_rank"]) for i in first]
    assert len(ali.calls(account, "ecs:RunInstances")) == 1
    tagged = [dict(c.params) for c in ali.calls(account, "ecs:TagResources")]
    assert tagged[-1]["ResourceId.1"] == lost and tagged[-1]["Tag.1.Value"] == "1"
    assert {i["_tags"][RANK] for i in ali.resources(account)["instances"]} == {"0", "1"}
    p.terminate(again)
    _nothing_left(ali, account)


def test_one_forwarded_address_cannot_reach_several_nodes(ali, account, make_provider, install_id):
    p = make_provider(ssh_address="127.0.0.1:2222")
    with pytest.raises(ConfigError, match="ssh_address=private"):
        p.launch(_request(p, install_id, "ddp-ali006"))
    assert ali.calls(account, "ecs:RunInstances") == []


def test_private_addresses_reach_the_nodes(ali, account, make_provider, install_id):
    p = make_provider(ssh_address="me@private:2222")
    nodes = p.launch(_request(p, install_id, "ddp-ali007"))
    assert [i.host for i in nodes] == [i.extra["private_ip"] for i in nodes] and all(i.host for i in nodes)
    assert {(i.extra["ssh_port"], i.extra["node_ssh_port"], i.extra["ssh_user"]) for i in nodes} == {(2222, 2222, "me")}
    p.terminate(nodes)
    _nothing_left(ali, account)
