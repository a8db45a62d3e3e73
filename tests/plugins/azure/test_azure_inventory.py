"""Reconcile and teardown by tags alone: a fresh provider (the store deleted) finds everything; Stopped vs
Deallocated; spot eviction; leftovers with prices; terminate verifies and reports what it could not delete."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import PluginError
from workbench.core.domain.models import InstanceState
from workbench.core.providers.contract import launch_tags


def test_state_is_rebuilt_from_azure_alone(arm, account, make_provider, request_for, tmp_path, install_id):
    first = make_provider(data_dir=tmp_path / "old")
    req = request_for(first, "Standard_ND96asr_v4")
    [launched] = first.launch(req)
    # another install's machine in the same subscription is not ours
    other = make_provider(owner="another-install", data_dir=tmp_path / "x")
    other.launch(request_for(other))
    # the app's data folder is gone; a new provider object knows only the profile and the install id
    reborn = make_provider(data_dir=tmp_path / "new")
    [inst] = reborn.instances()
    assert inst.instance_id == launched.instance_id and inst.launch_id == req.launch_id
    assert inst.state == InstanceState.RUNNING and inst.price_per_hour == 27.197 and inst.host == launched.host
    assert (inst.gpu_model, inst.gpu_count, inst.name) == ("A100", 8, "train")
    assert inst.extra["resource_group"] == f"wb-{req.launch_id}" and inst.launched_at
    assert reborn.leftovers() == []


def test_stopped_from_inside_still_bills_until_deallocated(arm, account, provider, request_for):
    req = request_for(provider)
    [inst] = provider.launch(req)
    arm.set_power(account.subscription, f"wb-{req.launch_id}", "stopped")  # `shutdown -h now` on the VM
    [seen] = provider.instances()
    assert seen.state == InstanceState.STOPPED and seen.state.billable
    assert "still bills" in seen.extra["billing_note"] and "Deallocate" in seen.extra["billing_note"]
    provider.stop([seen])
    [after] = provider.instances()
    assert after.state == InstanceState.DEALLOCATED and not after.state.billable
    assert [s.path for s in arm.seen if s.sub == account.subscription and s.method == "POST"][-1].endswith("/deallocate")


def test_spot_eviction_shows_as_terminated_with_the_reason(arm, account, provider, request_for):
    req = request_for(provider, spot=True)
    provider.launch(req)
    arm.set_power(account.subscription, f"wb-{req.launch_id}", "evicted")  # evictionPolicy Delete: the VM is gone
    [inst] = provider.instances()
    assert inst.state == InstanceState.TERMINATED and inst.extra["evicted"] and "evicted" in inst.extra["reason"]
    assert inst.spot and inst.launch_id == req.launch_id
    # deleteOption Delete took the NIC, IP and disk with the VM; the group and its free parts remain
    [left] = provider.leftovers()
    assert left.kind == "resource_group" and left.launch_id == req.launch_id and left.extra["price_per_hour"] == 0.0
    assert not any("publicIPAddresses" in c or "disks" in c for c in left.extra["contains"])
    provider.terminate([inst])
    assert provider.instances() == [] and provider.leftovers() == []


def test_billable_leftovers_are_found_priced_and_deleted(arm, account, provider, request_for, install_id):
    req = request_for(provider)
    provider.launch(req)
    tags = launch_tags("orphan-1", install_id)
    c = provider._clients
    c.resources.resource_groups.create_or_update("shared-rg", {"location": "eastus"})
    c.compute.disks.begin_create_or_update("shared-rg", "orphan-data", {
        "location": "eastus", "tags": tags, "sku": {"name": "Premium_LRS"},
        "properties": {"creationData": {"createOption": "Empty"}, "diskSizeGB": 1024}}).result()
    c.compute.disks.begin_create_or_update("shared-rg", "not-ours", {
        "location": "eastus", "tags": {}, "sku": {"name": "Premium_LRS"},
        "properties": {"creationData": {"createOption": "Empty"}, "diskSizeGB": 64}}).result()
    [disk] = provider.leftovers()  # the running launch's parts are not leftovers
    assert disk.kind == "disks" and disk.launch_id == "orphan-1" and disk.region == "eastus"
    assert disk.extra["price_per_hour"] == pytest.approx(135.17 / 730, rel=1e-3)  # P30, about $135/month
    provider.delete([disk])
    provider.delete([disk])  # already gone: fine
    assert provider.leftovers() == []
    assert any(r["name"] == "not-ours" for r in arm.resources(account.subscription, "shared-rg"))


def test_terminate_deletes_the_group_verifies_and_reports_what_is_left(arm, account, provider, request_for):
    a, b = request_for(provider), request_for(provider)
    [ia] = provider.launch(a)
    [ib] = provider.launch(b)
    arm.add_fault(rf"/resourcegroups/wb-{b.launch_id}$", method="DELETE", code="ResourceGroupDeletionBlocked",
                  message="Deletion of resource group 'x' failed as resources with identifiers 'disk' could not be "
                          "deleted.", in_operation=True, sub=account.subscription)
    with pytest.raises(PluginError) as info:
        provider.terminate([ia, ib])
    text = info.value.message
    assert f"wb-{b.launch_id}" in text and "ResourceGroupDeletionBlocked" in text
    assert "Microsoft.Compute/virtualMachines/wb-vm" in text  # what is still there, by name
    assert f"wb-{a.launch_id}" not in text
    assert [i.launch_id for i in provider.instances()] == [b.launch_id]
    provider.terminate([ib])
    provider.terminate([ia, ib])  # already gone: success
    assert provider.instances() == [] and provider.leftovers() == []
    assert arm.groups(account.subscription) == []
