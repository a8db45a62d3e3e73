"""The controller's identity on Azure (issue 33): a user-assigned managed identity, its two custom roles, the
controller VM that runs as it, and the documents in resources/policies/ that say what each may do.

Driven through the real SDK pipeline against the ARM test server, which checks every call's RBAC action,
answers PrincipalNotFound while a new identity replicates, and echoes a VM's user-assigned identity.
"""

from __future__ import annotations

import json

import pytest

from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.models import Guards, InstanceState, JobSpec
from workbench.core.paths import resources_dir
from workbench.core.providers.contract import ROLE_CONTROLLER, TAG_ROLE

POLICIES = resources_dir() / "policies"
MAIN = json.loads((POLICIES / "azure-custom-role.json").read_text())["Actions"]
ADDITIONS = json.loads((POLICIES / "azure-app-controller-additions.json").read_text())["Actions"]
CONTROLLER = json.loads((POLICIES / "azure-controller-role.json").read_text())["Actions"]
STORAGE = json.loads((POLICIES / "azure-controller-storage-role.json").read_text())["Actions"]


def _controller_request(provider, request_for):
    req = request_for(provider, size="Standard_NC4as_T4_v3")
    return req.__class__(**{**req.__dict__, "tags": {**req.tags, TAG_ROLE: ROLE_CONTROLLER}})


@pytest.mark.parametrize("name", ["azure-controller-role.json", "azure-controller-storage-role.json",
                                  "azure-app-controller-additions.json"])
def test_documents_are_custom_roles_without_wildcards(name):
    doc = json.loads((POLICIES / name).read_text())
    assert doc["IsCustom"] is True and doc["Name"] and doc["Description"] and doc["AssignableScopes"]
    assert doc["NotActions"] == [] and doc["DataActions"] == []
    assert len(doc["Actions"]) == len(set(doc["Actions"])) and not any("*" in a for a in doc["Actions"])


def test_the_controller_role_is_narrower_than_the_app_s():
    assert not any(a.startswith(("Microsoft.ManagedIdentity/", "Microsoft.Authorization/roleDefinitions",
                                 "Microsoft.CostManagement/", "Microsoft.Storage/")) for a in CONTROLLER)
    assert set(CONTROLLER) <= set(MAIN)  # nothing the app itself may not do
    assert STORAGE == ["Microsoft.Storage/storageAccounts/read", "Microsoft.Storage/storageAccounts/listKeys/action"]
    assert "Microsoft.Resources/subscriptions/resourceGroups/delete" in CONTROLLER  # its own end


def test_create_makes_identity_roles_and_assignments_once(arm, account, make_provider):
    from azure_arm.storage import add_account

    acct = add_account(arm.state, account.subscription, "data", "ctrlacct", "eastus", "http://127.0.0.1:9/ctrlacct",
                       "a2V5")["id"]
    sp = arm.add_client(account, actions=tuple(MAIN + ADDITIONS))
    prov = make_provider(acct=sp, controller_storage_accounts=acct)
    looked = prov.controller_identity()
    assert not looked.ready and looked.created == ()
    assert "user-assigned identity workbench-controller" in looked.missing
    assert any(m.startswith("role assignment of Workbench Controller Storage") and acct in m for m in looked.missing)
    assert "resources/policies/azure-app-controller-additions.json" in looked.policy_files

    arm.state.config(account.subscription).principal_delay = 2  # the new principal replicates: retried
    made = prov.controller_identity(create=True)
    assert made.ready and made.missing == ()
    assert len(made.created) == 6, made.created  # group, identity, 2 role definitions, 2 assignments
    again = prov.controller_identity(create=True)
    assert again.ready and again.created == ()
    assert prov.controller_identity().ready

    sub = account.subscription
    ident = next(r for r in arm.resources(sub, "workbench-controller")
                 if r["type"] == "Microsoft.ManagedIdentity/userAssignedIdentities")
    assert ident["name"] == "workbench-controller" and made.details["principal_id"] == ident["properties"]["principalId"]
    with arm.state.lock:
        assigned = [r for r in arm.state.resources.values() if r["type"] == "Microsoft.Authorization/roleAssignments"]
        defs = {r["id"].lower(): r for r in arm.state.resources.values()
                if r["type"] == "Microsoft.Authorization/roleDefinitions"}
    scopes = {r["properties"]["scope"].lower(): r for r in assigned}
    assert set(scopes) == {f"/subscriptions/{sub}".lower(), acct.lower()}
    on_sub = scopes[f"/subscriptions/{sub}".lower()]["properties"]
    assert "GuidEquals {b24988ac-6180-42a0-ab88-20f7382dd24c}" in on_sub["condition"]  # only the guard role
    assert sorted(defs[on_sub["roleDefinitionId"].lower()]["properties"]["permissions"][0]["actions"]) == \
        sorted(CONTROLLER)
    on_acct = scopes[acct.lower()]["properties"]
    assert defs[on_acct["roleDefinitionId"].lower()]["properties"]["permissions"][0]["actions"] == STORAGE
    refused = [s for s in arm.seen if s.client_id == sp.client_id and s.status == 403]
    assert refused == [], sorted({a for s in refused for a in s.actions})
    assert arm.actions(sp.client_id) <= set(MAIN + ADDITIONS)


def test_without_the_additions_the_refusal_names_what_to_ask_for(arm, account, make_provider):
    prov = make_provider(acct=arm.add_client(account, actions=tuple(MAIN)))
    looked = prov.controller_identity()  # may not even read it: not ready, and what to ask for
    assert not looked.ready and any("userAssignedIdentities/read" in m and "additions" in m for m in looked.missing)
    with pytest.raises(AuthError) as err:
        prov.controller_identity(create=True)
    assert "azure-app-controller-additions.json" in err.value.hint
    assert "Microsoft.ManagedIdentity/userAssignedIdentities/write" in err.value.hint


def test_a_controller_launch_runs_as_the_identity_alone(arm, account, make_provider, request_for):
    prov = make_provider()
    req = _controller_request(prov, request_for)
    with pytest.raises(ConfigError, match="controller up"):
        prov.launch(req)
    assert not [g for g in arm.groups(account.subscription) if g["name"] == f"wb-{req.launch_id}"]
    prov.controller_identity(create=True)
    [inst] = prov.launch(req)
    assert inst.state.billable
    vm = arm.vm(account.subscription, f"wb-{req.launch_id}")
    ident_id = (f"/subscriptions/{account.subscription}/resourceGroups/workbench-controller/providers/"
                "Microsoft.ManagedIdentity/userAssignedIdentities/workbench-controller")
    assert vm["identity"]["type"] == "UserAssigned" and list(vm["identity"]["userAssignedIdentities"]) == [ident_id]
    assert vm["identity"]["userAssignedIdentities"][ident_id]["clientId"]
    # the OS disk its all-in price counts (core/money/controller_cost): a small Standard HDD, not a job's 64 GB SSD
    disk = vm["properties"]["storageProfile"]["osDisk"]
    assert disk["managedDisk"]["storageAccountType"] == "Standard_LRS"
    assert disk["diskSizeGB"] == max(req.spec.resources.disk_gb, 30)  # the spec's size (deploy asks for 32 GiB)
    # no guard role on its group: its own identity's role may delete the group (its end on Azure)
    assert not [r for r in arm.resources(account.subscription, f"wb-{req.launch_id}")
                if r["type"] == "Microsoft.Authorization/roleAssignments"]
    assert "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action" in arm.actions(account.client_id)
    assert prov.launch(req)[0].instance_id == inst.instance_id  # relaunching the same id creates nothing
    prov.terminate([inst])
    assert [i for i in prov.instances() if i.launch_id == req.launch_id] == []


def test_the_controller_role_covers_what_the_controller_does(arm, account, make_provider, request_for, install_id):
    """Recovery (a launch in a new group, with its guard role), listing, deallocate, storage SAS and teardown
    with a principal holding only the controller's two roles: nothing refused."""
    from azure_arm.storage import add_account
    from workbench.core.domain.storage_uri import parse_storage_uri

    sp = arm.add_client(account, actions=tuple(CONTROLLER + STORAGE))
    prov = make_provider(acct=sp)
    add_account(arm.state, account.subscription, "data", "ctrlsas", "eastus", "http://127.0.0.1:9/ctrlsas", "a2V5")
    remote = prov.storage_machine_remote(parse_storage_uri("https://ctrlsas.blob.core.windows.net/runs/p"),
                                         write=True, duration_s=3600, label="ctrl")
    assert "sig=" in remote.options["sas_url"]
    prov.check_credentials()
    req = request_for(prov, spec=JobSpec(name="train", run="x", guards=Guards(max_runtime_minutes=90)))
    [inst] = prov.launch(req)
    prov.stop([inst])
    assert {i.state for i in prov.instances()} == {InstanceState.DEALLOCATED}
    prov.terminate(prov.instances())
    assert prov.instances() == [] and prov.leftovers() == []
    refused = [s for s in arm.seen if s.client_id == sp.client_id and s.status == 403]
    assert refused == [], f"the controller's roles lack: {sorted({a for s in refused for a in s.actions})}"


def test_a_bad_storage_account_id_is_a_config_error(make_provider):
    with pytest.raises(ConfigError, match="storage account"):
        make_provider(controller_storage_accounts="mystorageacct").settings
