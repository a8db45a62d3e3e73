"""Least privilege: the whole life cycle runs with exactly the actions of resources/policies/azure-custom-role.json.

The ARM test server enforces a service principal's role on every call (403
AuthorizationFailed / LinkedAuthorizationFailed name the missing action) and
records the action each call needed.  The test drives every path that calls
Azure — sign-in, offers, a launch that falls over to the next zone, listing,
deallocate, leftovers (pricing a disk), deleting leftovers, billed cost, a teardown that fails
once and reports what is left, then succeeds — with a principal that has only the
role's actions, then compares: nothing refused, and the role holds no action the
plugin never needed.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from workbench.core.domain.errors import PluginError
from workbench.core.domain.models import Guards, InstanceState, JobSpec
from workbench.core.paths import resources_dir
from workbench.core.providers.contract import launch_tags

ROLE = resources_dir() / "policies" / "azure-custom-role.json"


def test_role_file_is_a_custom_role_definition():
    role = json.loads(ROLE.read_text())
    assert role["IsCustom"] is True and role["Name"] and role["AssignableScopes"]
    assert role["NotActions"] == [] and role["DataActions"] == []
    assert len(role["Actions"]) == len(set(role["Actions"])) and not any("*" in a for a in role["Actions"])


def test_the_plugin_needs_exactly_the_role_s_actions(arm, account, make_provider, request_for, install_id):
    role = json.loads(ROLE.read_text())["Actions"]
    sp = arm.add_client(account, actions=tuple(role))
    admin = make_provider(acct=arm.add_client(account), owner=install_id)
    prov = make_provider(acct=sp, zones="auto")
    arm.state.config(account.subscription).no_capacity.add(("eastus", "Standard_NC4as_T4_v3", "1"))

    prov.check_credentials()
    assert prov.offers("eastus")
    # a job's storage mount on Azure Blob: the account found and its key read through ARM (the SAS is made here)
    from azure_arm.storage import add_account
    from workbench.core.domain.storage_uri import parse_storage_uri

    add_account(arm.state, account.subscription, "data", "roletestacct", "eastus", "http://127.0.0.1:9/roletestacct",
                "a2V5LW5vdC1hLXNlY3JldA==")
    remote = prov.storage_machine_remote(parse_storage_uri("https://roletestacct.blob.core.windows.net/runs/p"),
                                         write=True, duration_s=3600, label="role")
    assert remote.options["type"] == "azureblob" and "sig=" in remote.options["sas_url"]
    assert prov.actual_costs("2025-01-01", "2025-01-31") == []
    req = request_for(prov, spec=JobSpec(name="train", run="x", guards=Guards(max_runtime_minutes=90)))
    [inst] = prov.launch(req)
    assert inst.extra["zone"] == "2"  # zone 1 had no capacity: its VM was deleted
    nodes_req = dataclasses.replace(request_for(prov, spec=JobSpec(name="nodes", run="x", num_nodes=2)), count=2)
    assert len(prov.launch(nodes_req)) == 2  # a multi-node launch: its placement group and node listing
    prov.stop(prov.instances())
    assert {i.state for i in prov.instances()} == {InstanceState.DEALLOCATED}
    # billable leftovers outside any launch group (made by someone with more rights)
    c, tags = admin._clients, launch_tags("orphan", install_id)
    c.resources.resource_groups.create_or_update("shared", {"location": "eastus"})
    c.compute.disks.begin_create_or_update("shared", "d1", {
        "location": "eastus", "tags": tags, "sku": {"name": "StandardSSD_LRS"},
        "properties": {"creationData": {"createOption": "Empty"}, "diskSizeGB": 128}}).result()
    c.network.public_ip_addresses.begin_create_or_update("shared", "ip1", {
        "location": "eastus", "tags": tags, "sku": {"name": "Standard"},
        "properties": {"publicIPAllocationMethod": "Static"}}).result()
    left = prov.leftovers()
    assert sorted(r.kind for r in left) == ["disks", "publicIPAddresses"]
    prov.delete(left)
    arm.add_fault(rf"/resourcegroups/wb-{req.launch_id}$", method="DELETE", code="ResourceGroupDeletionBlocked",
                  message="blocked once", in_operation=True, sub=account.subscription)
    with pytest.raises(PluginError, match="still there"):
        prov.terminate(prov.instances())
    prov.terminate(prov.instances())
    assert prov.instances() == [] and prov.leftovers() == []

    refused = [s for s in arm.seen if s.client_id == sp.client_id and s.status == 403]
    assert refused == [], f"the role lacks: {sorted({a for s in refused for a in s.actions})}"
    used = arm.actions(sp.client_id)
    assert sorted(set(role) - used) == [], "actions in the role that the plugin never used"
    assert sorted(used - set(role)) == []
