"""Multi-node launches against the ARM test server: one group, one proximity placement group, N VMs with
their ranks, the nodes' network rule, the HPC image for InfiniBand sizes, all or nothing, one group deleted."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.core.domain.errors import CapacityError
from workbench.core.domain.models import InstanceState, JobSpec

PPG_TYPE = "Microsoft.Compute/proximityPlacementGroups"
VM_TYPE = "Microsoft.Compute/virtualMachines"


def _nodes_request(provider, request_for, size="Standard_ND96asr_v4", count=2):
    req = request_for(provider, size, spec=JobSpec(name="ddp", run="torchrun train.py", num_nodes=count))
    return dataclasses.replace(req, count=count)


def _of_type(arm, account, group, rtype):
    return [r for r in arm.resources(account.subscription, group) if r["type"] == rtype]


def test_two_infiniband_nodes_in_one_group_and_placement_group(arm, account, provider, request_for):
    req = _nodes_request(provider, request_for)
    nodes = provider.launch(req)
    group = f"wb-{req.launch_id}"
    assert [i.extra["node_rank"] for i in nodes] == [0, 1]
    assert all(i.state == InstanceState.RUNNING for i in nodes)
    assert len({i.host for i in nodes}) == 2 and len({i.extra["private_ip"] for i in nodes}) == 2
    assert all(i.extra["private_ip"].startswith("10.0.0.") for i in nodes)
    assert {i.extra["interconnect"] for i in nodes} == {"infiniband"}

    (ppg,) = _of_type(arm, account, group, PPG_TYPE)
    vms = sorted(_of_type(arm, account, group, VM_TYPE), key=lambda v: v["name"])
    assert [v["name"] for v in vms] == ["wb-vm", "wb-vm-1"]
    assert sorted(v["id"].lower() for v in ppg["properties"]["virtualMachines"]) == sorted(v["id"].lower() for v in vms)
    for rank, vm in enumerate(vms):
        props = vm["properties"]
        assert props["proximityPlacementGroup"]["id"].lower() == ppg["id"].lower()
        assert vm["tags"]["workbench:node-rank"] == str(rank) and vm["tags"]["workbench:interconnect"] == "infiniband"
        assert props["storageProfile"]["imageReference"]["offer"] == "ubuntu-hpc"  # IB drivers, NCCL
        assert props["storageProfile"]["osDisk"]["name"] == ("wb-osdisk" if rank == 0 else f"wb-osdisk-{rank}")
    (nsg,) = _of_type(arm, account, group, "Microsoft.Network/networkSecurityGroups")
    rules = {r["name"]: r["properties"] for r in nsg["properties"]["securityRules"]}
    assert (rules["allow-ssh"]["sourceAddressPrefix"], rules["allow-ssh"]["destinationPortRange"]) == (
        "203.0.113.7/32", "22")  # SSH from outside: the user's address only
    assert (rules["allow-nodes"]["sourceAddressPrefix"], rules["allow-nodes"]["destinationPortRange"]) == (
        "10.0.0.0/24", "*")
    schedules = _of_type(arm, account, group, "Microsoft.DevTestLab/schedules")
    assert sorted(s["name"] for s in schedules) in ([], ["shutdown-computevm-wb-vm", "shutdown-computevm-wb-vm-1"])

    listed = sorted((i for i in provider.instances() if i.launch_id == req.launch_id),
                    key=lambda i: i.extra["node_rank"])
    assert [(i.instance_id, i.extra["private_ip"]) for i in listed] == [(i.instance_id, i.extra["private_ip"])
                                                                          for i in nodes]
    assert provider.launch(req) == nodes or [i.instance_id for i in provider.launch(req)] == \
        [i.instance_id for i in nodes]  # a repeated call creates nothing
    assert len(_of_type(arm, account, group, VM_TYPE)) == 2

    provider.terminate(listed)
    assert group not in {g["name"] for g in arm.groups(account.subscription)}  # one group: everything went
    assert [i for i in provider.instances() if i.launch_id == req.launch_id] == [] and provider.leftovers() == []


def test_no_capacity_for_all_nodes_leaves_nothing(arm, account, make_provider, request_for):
    arm.state.config(account.subscription).no_capacity.add(("eastus", "Standard_ND96asr_v4", "*"))
    prov = make_provider()
    req = _nodes_request(prov, request_for)
    with pytest.raises(CapacityError):
        prov.launch(req)
    assert f"wb-{req.launch_id}" not in {g["name"] for g in arm.groups(account.subscription)}
    assert prov.instances() == [] and prov.leftovers() == []


def test_one_zone_without_capacity_moves_every_node_to_the_next(arm, account, make_provider, request_for):
    arm.state.config(account.subscription).no_capacity.add(("eastus", "Standard_ND96asr_v4", "2"))
    prov = make_provider(zones="auto")
    req = _nodes_request(prov, request_for)
    nodes = prov.launch(req)
    assert {i.extra["zone"] for i in nodes} == {"3"}
    group = f"wb-{req.launch_id}"
    assert len(_of_type(arm, account, group, VM_TYPE)) == 2
    deleted = [s for s in arm.seen if s.sub == account.subscription and s.method == "DELETE" and "/virtualMachines/" in s.path]
    assert {s.path.rsplit("/", 1)[-1] for s in deleted} == {"wb-vm", "wb-vm-1"}  # the failed zone's two VMs
    prov.terminate(nodes)
